//! The input side of option parsing: a JavaScript value as the parsers see it, and the error an
//! invalid one becomes. A leaf: it names no other module of the crate, so every module that
//! parses options (the transport options, the response cache's own) can sit above it.

use std::any::Any;
use std::sync::Arc;

/// A JavaScript value as the option parser needs to see it.
#[derive(Clone, Debug)]
pub enum OptValue {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<OptValue>),
    Object(Vec<(String, OptValue)>),
    Function,
    AbortSignal,
    /// A JavaScript `ResponseCache` instance: the native cache it wraps, opaque here so this
    /// leaf names no module above it (the `responseCache` option downcasts it).
    ResponseCache(Arc<dyn Any + Send + Sync>),
    /// Any other value; the string is its JavaScript type, for messages.
    Other(&'static str),
}

impl OptValue {
    /// An object of the given keys and values, as JavaScript would pass it (tests build options
    /// this way).
    #[cfg(test)]
    pub fn object(pairs: &[(&str, OptValue)]) -> OptValue {
        OptValue::Object(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    /// What the value is, without its content: the describer for messages about a value that
    /// may be a credential (decisions D31).
    pub fn kind(&self) -> &'static str {
        match self {
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

    /// How the value reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            OptValue::Undefined => "undefined".into(),
            OptValue::Null => "null".into(),
            OptValue::Bool(b) => b.to_string(),
            OptValue::Number(n) => format_number(*n),
            OptValue::String(s) => format!("{s:?}"),
            OptValue::Array(items) => format!(
                "[{}]",
                items
                    .iter()
                    .map(OptValue::describe)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            OptValue::Object(_) => "an object".into(),
            OptValue::Function => "a function".into(),
            OptValue::AbortSignal => "an AbortSignal".into(),
            OptValue::ResponseCache(_) => "a ResponseCache".into(),
            OptValue::Other(kind) => format!("a value of type {kind}"),
        }
    }
}

fn format_number(n: f64) -> String {
    if n.is_nan() {
        "NaN".into()
    } else if n.is_infinite() {
        if n > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

/// An invalid option: becomes a JavaScript `TypeError` with this message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionError(pub String);

impl std::fmt::Display for OptionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OptionError {}
