//! JavaScript values into the shapes the Rust layers take: [`OptValue`] for options, JSON for
//! variables and parameters. Conversion only; every rule lives in the layer that owns it.

use napi::bindgen_prelude::*;
use napi::{Env, JsValue, ValueType};
use serde_json::{Map, Number, Value};

use anilink_transport::options::OptValue;

use crate::response_cache::ResponseCache;

/// Deeper than any option or variables object; a cycle would otherwise recurse forever.
const MAX_DEPTH: u32 = 32;

pub fn option_value(env: &Env, value: Unknown, depth: u32) -> Result<OptValue> {
    // SAFETY for the casts below: each one follows a type check of the same value.
    Ok(match value.get_type()? {
        ValueType::Undefined => OptValue::Undefined,
        ValueType::Null => OptValue::Null,
        ValueType::Boolean => OptValue::Bool(unsafe { value.cast::<bool>()? }),
        ValueType::Number => OptValue::Number(unsafe { value.cast::<f64>()? }),
        ValueType::String => OptValue::String(unsafe { value.cast::<String>()? }),
        ValueType::Function => OptValue::Function,
        ValueType::Object => {
            let object: Object<'_> = unsafe { value.cast()? };
            if depth >= MAX_DEPTH {
                OptValue::Other("object nested too deeply")
            } else if object.is_array()? {
                let length = object.get_array_length()?;
                let mut items = Vec::with_capacity(length as usize);
                for i in 0..length {
                    items.push(option_value(env, object.get_element::<Unknown>(i)?, depth + 1)?);
                }
                OptValue::Array(items)
            } else if is_abort_signal(env, &object)? {
                OptValue::AbortSignal
            } else if ResponseCache::instance_of(env, &object)? {
                // The type tag is checked too: an object that only borrowed the prototype is
                // not a cache.
                match unsafe { ClassInstance::<ResponseCache>::from_napi_value(env.raw(), object.raw()) } {
                    Ok(instance) => OptValue::ResponseCache(instance.shared()),
                    Err(_) => OptValue::Other("object"),
                }
            } else {
                let mut fields = Vec::new();
                for key in own_keys(&object)? {
                    let field = object.get_named_property::<Unknown>(&key)?;
                    fields.push((key, option_value(env, field, depth + 1)?));
                }
                OptValue::Object(fields)
            }
        }
        ValueType::Symbol => OptValue::Other("symbol"),
        ValueType::BigInt => OptValue::Other("bigint"),
        _ => OptValue::Other("external"),
    })
}

/// The object's own enumerable string keys, in order.
pub fn own_keys(object: &Object<'_>) -> Result<Vec<String>> {
    let names = object.get_property_names()?;
    let length = names.get_array_length()?;
    let mut keys = Vec::with_capacity(length as usize);
    for i in 0..length {
        keys.push(names.get_element::<String>(i)?);
    }
    Ok(keys)
}

fn is_abort_signal(env: &Env, object: &Object<'_>) -> Result<bool> {
    let global = env.get_global()?;
    let constructor: Unknown = global.get_named_property("AbortSignal")?;
    if constructor.get_type()? != ValueType::Function {
        return Ok(false);
    }
    let constructor: Function<'_, Unknown, Unknown> = unsafe { constructor.cast()? };
    object.instanceof(constructor)
}

/// Variables or parameters as JSON. `undefined` properties are left out, as `JSON.stringify`
/// would; what JSON cannot carry (NaN, functions, symbols, cycles) is a problem reported with
/// its path, so the caller gets a validation error instead of a silently altered value.
pub fn json_value(value: Unknown, path: &str, problems: &mut Vec<String>, depth: u32) -> Result<Option<Value>> {
    let invalid = |problems: &mut Vec<String>, what: &str| {
        problems.push(format!("Invalid {path}: {what}. Expected a JSON value"));
    };
    Ok(match value.get_type()? {
        ValueType::Undefined => None,
        ValueType::Null => Some(Value::Null),
        ValueType::Boolean => Some(Value::Bool(unsafe { value.cast::<bool>()? })),
        ValueType::Number => {
            let n = unsafe { value.cast::<f64>()? };
            let number = if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
                Some(Number::from(n as i64))
            } else {
                Number::from_f64(n)
            };
            match number {
                Some(number) => Some(Value::Number(number)),
                None => {
                    invalid(problems, &format!("{n}"));
                    None
                }
            }
        }
        ValueType::String => Some(Value::String(unsafe { value.cast::<String>()? })),
        ValueType::Object => {
            let object: Object<'_> = unsafe { value.cast()? };
            if depth >= MAX_DEPTH {
                invalid(problems, "an object nested too deeply (a cycle?)");
                return Ok(None);
            }
            if object.is_array()? {
                let length = object.get_array_length()?;
                let mut items = Vec::with_capacity(length as usize);
                for i in 0..length {
                    let item = json_value(object.get_element::<Unknown>(i)?, &format!("{path}[{i}]"), problems, depth + 1)?;
                    items.push(item.unwrap_or(Value::Null));
                }
                Some(Value::Array(items))
            } else {
                let mut map = Map::new();
                for key in own_keys(&object)? {
                    let child_path = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                    if let Some(v) = json_value(object.get_named_property::<Unknown>(&key)?, &child_path, problems, depth + 1)? {
                        map.insert(key, v);
                    }
                }
                Some(Value::Object(map))
            }
        }
        ValueType::Function => {
            invalid(problems, "a function");
            None
        }
        ValueType::Symbol => {
            invalid(problems, "a symbol");
            None
        }
        ValueType::BigInt => {
            invalid(problems, "a bigint");
            None
        }
        _ => {
            invalid(problems, "an unsupported value");
            None
        }
    })
}
