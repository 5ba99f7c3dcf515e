//! JavaScript option values into the shape the Rust layers take ([`OptValue`]). Conversion
//! only; every rule lives in the layer that owns it. Variables and parameters arrive as JSON
//! text, written by the facade (`lib/json-text.cjs`).

use napi::bindgen_prelude::*;
use napi::{sys, Env, JsValue, Status, ValueType};

use anilink_transport::options::OptValue;

use crate::cache_class::ResponseCache;
use crate::wire::failure::TYPE_ERROR;

/// Deeper than any options object; a cycle would otherwise recurse forever.
const MAX_DEPTH: u32 = 32;

/// An option value; `path` (`options.retry`) names it should reading it throw (decisions D33).
pub fn option_value(env: &Env, value: Unknown, path: &str, depth: u32) -> Result<OptValue> {
    option_value_at(env, value, path, depth)
        .map_err(|error| thrown_while_reading(env.raw(), error, path))
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
                        .map_err(|e| thrown_while_reading(env.raw(), e, &item_path))?;
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
                for key in enumerable_keys(&object)? {
                    let field_path = format!("{path}.{key}");
                    let field = object
                        .get_named_property::<Unknown>(&key)
                        .map_err(|e| thrown_while_reading(env.raw(), e, &field_path))?;
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

/// A message naming what is wrong with an argument (a rule of the layer that owns it, or a
/// broken contract with the facade), as napi's InvalidArg error: the facade rethrows it as
/// TypeError.
pub fn invalid_arg(message: String) -> Error {
    Error::new(Status::InvalidArg, message)
}

/// The object's enumerable string keys, in order: its own and inherited ones, as `for…in` lists
/// them (`napi_get_property_names` walks the prototype chain).
pub fn enumerable_keys(object: &Object<'_>) -> Result<Vec<String>> {
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

/// A read of an option threw (a getter, a Proxy trap): the exception is taken and an `Error`
/// description is thrown instead, `{ code, message, cause }` with the thrown value as `cause`,
/// which the facade turns into a `TypeError` naming the path (decisions D33). Other errors pass
/// through unchanged.
fn thrown_while_reading(env: sys::napi_env, error: Error, path: &str) -> Error {
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
    let problem = format!(
        "{path} could not be read: a getter or Proxy threw (the thrown value is the cause)"
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
        description.set_named_property("code", TYPE_ERROR)?;
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
