//! JavaScript values into the shapes the Rust layers take: [`OptValue`] for options, JSON for
//! variables and parameters. Conversion only; every rule lives in the layer that owns it.

use napi::bindgen_prelude::*;
use napi::{sys, Env, JsString, JsValue, Status, ValueType};
use serde_json::{Map, Number, Value};

use anilink_transport::error::ErrorCode;
use anilink_transport::options::OptValue;

use crate::failure::TYPE_ERROR;

/// The code of a variables read that threw: the facade's `AniLinkValidationError`.
const VALIDATION_ERROR: &str = ErrorCode::Validation.as_str();
use crate::cache_class::ResponseCache;

/// Deeper than any option or variables object; a cycle would otherwise recurse forever.
const MAX_DEPTH: u32 = 32;

/// An option value; `path` (`options.retry`) names it should reading it throw (decisions D33).
pub fn option_value(env: &Env, value: Unknown, path: &str, depth: u32) -> Result<OptValue> {
    option_value_at(env, value, path, depth)
        .map_err(|error| thrown_while_reading(env.raw(), error, TYPE_ERROR, path))
}

fn option_value_at(env: &Env, value: Unknown, path: &str, depth: u32) -> Result<OptValue> {
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
                    let item_path = format!("{path}[{i}]");
                    let item = object
                        .get_element::<Unknown>(i)
                        .map_err(|e| thrown_while_reading(env.raw(), e, TYPE_ERROR, &item_path))?;
                    items.push(option_value(env, item, &item_path, depth + 1)?);
                }
                OptValue::Array(items)
            } else if is_abort_signal(env, &object)? {
                OptValue::AbortSignal
            } else if ResponseCache::instance_of(env, &object)? {
                // The type tag is checked too: an object that only borrowed the prototype is
                // not a cache.
                match unsafe {
                    ClassInstance::<ResponseCache>::from_napi_value(env.raw(), object.raw())
                } {
                    Ok(instance) => OptValue::ResponseCache(instance.shared()),
                    Err(_) => OptValue::Other("object"),
                }
            } else {
                let mut fields = Vec::new();
                for key in own_keys(&object)? {
                    let field_path = format!("{path}.{key}");
                    let field = object
                        .get_named_property::<Unknown>(&key)
                        .map_err(|e| thrown_while_reading(env.raw(), e, TYPE_ERROR, &field_path))?;
                    fields.push((key, option_value(env, field, &field_path, depth + 1)?));
                }
                OptValue::Object(fields)
            }
        }
        ValueType::Symbol => OptValue::Other("symbol"),
        ValueType::BigInt => OptValue::Other("bigint"),
        _ => OptValue::Other("external"),
    })
}

/// What a value is, without its content: the binding's one describer for messages about a
/// value, since a misplaced argument may be a credential (decisions D31).
pub fn kind_of(value: &OptValue) -> &'static str {
    match value {
        OptValue::Undefined => "undefined",
        OptValue::Null => "null",
        OptValue::Bool(_) => "a boolean",
        OptValue::Number(_) => "a number",
        OptValue::String(_) => "a string",
        OptValue::Array(_) => "an array",
        OptValue::Function => "a function",
        OptValue::Other("symbol") => "a symbol",
        OptValue::Other("bigint") => "a bigint",
        _ => "an object",
    }
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
pub fn json_value(
    value: Unknown,
    path: &str,
    problems: &mut Vec<String>,
    depth: u32,
) -> Result<Option<Value>> {
    let env = value.value().env;
    json_value_at(value, path, problems, depth)
        .map_err(|error| thrown_while_reading(env, error, VALIDATION_ERROR, path))
}

fn json_value_at(
    value: Unknown,
    path: &str,
    problems: &mut Vec<String>,
    depth: u32,
) -> Result<Option<Value>> {
    let env = value.value().env;
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
        ValueType::String => {
            let text = unsafe { value.cast::<String>()? };
            // Node replaces a lone surrogate with U+FFFD on the way out; JSON cannot carry one,
            // so it is refused rather than silently changed (decisions D33).
            if text.contains('\u{FFFD}')
                && has_lone_surrogate(unsafe { value.cast::<JsString>()? })?
            {
                invalid(problems, "a string with a lone surrogate (an unpaired UTF-16 code unit from U+D800 to U+DFFF)");
                return Ok(None);
            }
            Some(Value::String(text))
        }
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
                    let item_path = format!("{path}[{i}]");
                    let item = object
                        .get_element::<Unknown>(i)
                        .map_err(|e| thrown_while_reading(env, e, VALIDATION_ERROR, &item_path))?;
                    items.push(
                        json_value(item, &item_path, problems, depth + 1)?.unwrap_or(Value::Null),
                    );
                }
                Some(Value::Array(items))
            } else {
                let mut map = Map::new();
                for key in own_keys(&object)? {
                    let child_path = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    let child = object
                        .get_named_property::<Unknown>(&key)
                        .map_err(|e| thrown_while_reading(env, e, VALIDATION_ERROR, &child_path))?;
                    if let Some(v) = json_value(child, &child_path, problems, depth + 1)? {
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

fn has_lone_surrogate(text: JsString<'_>) -> Result<bool> {
    let units = text.into_utf16()?;
    Ok(char::decode_utf16(units.as_slice().iter().copied()).any(|unit| unit.is_err()))
}

/// A read of a caller's value threw (a getter, a Proxy trap): the exception is taken and an
/// `Error` description is thrown instead, `{ code, message, details?, cause }` with the thrown
/// value as `cause`, which the facade turns into a `TypeError` (options) or
/// `AniLinkValidationError` (variables) naming the path (decisions D33). Other errors pass
/// through unchanged.
pub fn thrown_while_reading(env: sys::napi_env, error: Error, code: &str, path: &str) -> Error {
    // Already described at a deeper path: an enclosing value passes it on as it is.
    let mut pending = false;
    if error.reason == DESCRIBED
        || unsafe { sys::napi_is_exception_pending(env, &mut pending) } != sys::Status::napi_ok
        || !pending
    {
        return error;
    }
    let mut thrown = std::ptr::null_mut();
    if unsafe { sys::napi_get_and_clear_last_exception(env, &mut thrown) } != sys::Status::napi_ok
        || thrown.is_null()
    {
        return error;
    }
    let name = if path.is_empty() { "variables" } else { path };
    let problem = format!(
        "{name} could not be read: a getter or Proxy threw (the thrown value is the cause)"
    );
    let describe = || -> Result<()> {
        let env = Env::from_raw(env);
        let message = env.create_string(&problem)?;
        let mut raw = std::ptr::null_mut();
        check(unsafe {
            sys::napi_create_error(env.raw(), std::ptr::null_mut(), message.raw(), &mut raw)
        })?;
        let mut description: Object<'_> =
            unsafe { Unknown::from_raw_unchecked(env.raw(), raw).cast()? };
        description.set_named_property("code", code)?;
        if code == VALIDATION_ERROR {
            description.set_named_property("details", vec![problem.clone()])?;
        }
        description.set_named_property("cause", unsafe {
            Unknown::from_raw_unchecked(env.raw(), thrown)
        })?;
        check(unsafe { sys::napi_throw(env.raw(), raw) })
    };
    match describe() {
        Ok(()) => Error::new(Status::PendingException, DESCRIBED.to_string()),
        Err(_) => {
            // Could not build the description: let the original exception go on.
            unsafe { sys::napi_throw(env, thrown) };
            error
        }
    }
}

/// The reason of the pending-exception error [`thrown_while_reading`] returns.
const DESCRIBED: &str = "a read failure, described";

fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::new(Status::from(status), "napi call failed"))
    }
}
