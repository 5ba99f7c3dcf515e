//! The MyAnimeList REST v2 operation catalog.
//!
//! Each of the 19 operations of `aniLink.mal` (api.md §9.2) is one row of a static table (the
//! `catalog` module): HTTP method, path template, parameter rules and auth needs.
//! [`build_request`] turns a call's camelCase parameter object and its `fields` option into the
//! exact request the transport sends, or into the complete list of validation problems, so that
//! a caller learns about every mistake at once instead of one per round trip. Nothing here
//! performs I/O.

mod cache_hint;
mod catalog;
mod encoding;
mod params;
#[cfg(test)]
mod tests;

use serde_json::{Map, Value};

pub use cache_hint::write_cache_hint;
pub use catalog::{operation, operations, LegacyArguments, Operation};
use params::{describe, Placement, Rule};

/// The HTTP methods MyAnimeList operations use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpMethod {
    Get,
    Patch,
    Delete,
}

impl HttpMethod {
    /// The method as it appears on the wire and in hook contexts (`"GET"`, ...).
    pub fn as_str(&self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Patch => "PATCH",
            HttpMethod::Delete => "DELETE",
        }
    }
}

/// What the transport sends for one call.
#[derive(Debug, Clone, PartialEq)]
pub struct MalRequest {
    pub method: HttpMethod,
    /// Path below the base URL plus query string, e.g. "/anime/1?fields=id,title" (leading slash, percent-encoded).
    pub path_and_query: String,
    /// application/x-www-form-urlencoded body for list-status writes, else None.
    pub form_body: Option<String>,
    /// The call needs a user access token (suggestions, list writes, deletes, @me): without one the binding rejects with AniLinkAuthError before dispatch.
    pub requires_token: bool,
    /// A successful response with an empty body resolves `undefined` (deleteFromList).
    pub empty_result: bool,
}

/// Validate `params` (a JSON object, camelCase keys as in api.md §9.2; null/absent for
/// options-first ops) and `fields` (None, a JSON string "a,b", or an array of strings; for `get`
/// ops absent -> the default field list) and build the request.
///
/// Every problem is reported, not only the first, with the detail strings of api.md §5.
pub fn build_request(
    op: &Operation,
    params: &Value,
    fields: Option<&Value>,
) -> Result<MalRequest, Vec<String>> {
    let no_params = Map::new();
    let given = match params {
        Value::Null => &no_params,
        Value::Object(map) => map,
        other => {
            return Err(vec![format!(
                "Invalid params: {}. Expected an object.",
                describe(other)
            )])
        }
    };

    let mut problems = Vec::new();
    let fields = match selection_in_params(given, fields) {
        Ok(fields) => fields,
        Err(conflict) => {
            problems.push(conflict);
            None
        }
    };
    let mut path_values: Vec<(&str, String)> = Vec::new();
    let mut query: Vec<(&str, String)> = Vec::new();
    let mut form: Vec<(&str, String)> = Vec::new();
    let mut list_fields_given = 0;
    let mut acts_on_own_account = false;

    for param in op.params() {
        let found = param.find_in(given);
        if param.placement == Placement::Form && !matches!(found, Ok(None)) {
            list_fields_given += 1;
        }
        let (key, value) = match found {
            Ok(Some(found)) => found,
            Ok(None) => {
                if param.required {
                    problems.push(format!("Missing required variable: {}", param.name));
                }
                continue;
            }
            Err(conflict) => {
                problems.push(conflict);
                continue;
            }
        };
        match param.rule.check(key, value) {
            Ok(text) => {
                if param.rule == Rule::Username && text == params::OWN_ACCOUNT {
                    acts_on_own_account = true;
                }
                let target = match param.placement {
                    Placement::Path => &mut path_values,
                    Placement::Query => &mut query,
                    Placement::Form => &mut form,
                };
                target.push((param.wire, text));
            }
            Err(found) => problems.extend(found),
        }
    }

    for key in given.keys() {
        if key != FIELDS_PARAM && !op.params().iter().any(|param| param.accepts_key(key)) {
            problems.push(format!("Unknown variable: {key}"));
        }
    }

    if op.method() == HttpMethod::Patch && list_fields_given == 0 {
        problems.push(format!(
            "{} requires at least one list field",
            op.member_name()
        ));
    }

    match resolve_fields(op, fields) {
        Ok(Some(list)) => query.push(("fields", list)),
        Ok(None) => {}
        Err(found) => problems.extend(found),
    }

    if !problems.is_empty() {
        return Err(problems);
    }

    let mut path_and_query = fill_path(op.path_template(), &path_values)?;
    for (index, (name, value)) in query.iter().enumerate() {
        path_and_query.push(if index == 0 { '?' } else { '&' });
        path_and_query.push_str(name);
        path_and_query.push('=');
        path_and_query.push_str(&encoding::query_value(value));
    }

    let form_body = (op.method() == HttpMethod::Patch).then(|| {
        form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form.iter().map(|(name, value)| (*name, value.as_str())))
            .finish()
    });

    Ok(MalRequest {
        method: op.method(),
        path_and_query,
        form_body,
        requires_token: op.always_requires_token() || acts_on_own_account,
        empty_result: op.method() == HttpMethod::Delete,
    })
}

/// The params key that carries the field selection in the object form of the newest sources
/// (`get({ id, fields })`, decisions D25), as `options.fields` carries it.
const FIELDS_PARAM: &str = "fields";

/// The call's field selection: `options.fields`, or `fields` in the params object (sent the
/// same way); a conflict when both are given, as either could be the one meant.
fn selection_in_params<'a>(
    given: &'a Map<String, Value>,
    options_fields: Option<&'a Value>,
) -> Result<Option<&'a Value>, String> {
    let in_params = given.get(FIELDS_PARAM).filter(|value| !value.is_null());
    match (in_params, options_fields.filter(|value| !value.is_null())) {
        (Some(_), Some(_)) => Err(
            "Conflicting fields: given both in the params object and in the options. Give them in one place"
                .to_owned(),
        ),
        (Some(in_params), None) => Ok(Some(in_params)),
        (None, from_options) => Ok(from_options),
    }
}

/// The `fields` query value: the caller's selection, else the operation's default list (reads
/// only). A list-status write sends the caller's selection too, as the original does (MAL
/// shapes the answer by it); a delete has no answer to shape, so its `fields` are ignored, as
/// the original ignores them.
fn resolve_fields(op: &Operation, fields: Option<&Value>) -> Result<Option<String>, Vec<String>> {
    let requested = fields.filter(|value| !value.is_null());
    match op.method() {
        HttpMethod::Delete => return Ok(None),
        HttpMethod::Patch if requested.is_none() => return Ok(None),
        _ => {}
    }
    let Some(requested) = requested else {
        return Ok(op.default_fields().map(str::to_owned));
    };
    match requested {
        Value::String(list) if !list.trim().is_empty() => Ok(Some(list.trim().to_owned())),
        Value::Array(names) if names.is_empty() => Err(vec![
            "Invalid fields: []. Expected at least one field name".to_owned(),
        ]),
        Value::Array(names) => {
            let mut accepted = Vec::with_capacity(names.len());
            let mut problems = Vec::new();
            for (index, name) in names.iter().enumerate() {
                match name.as_str().map(str::trim) {
                    Some(name) if !name.is_empty() => accepted.push(name),
                    _ => problems.push(format!(
                        "Invalid fields[{index}]: {}. Expected a non-blank field name",
                        describe(name)
                    )),
                }
            }
            if problems.is_empty() {
                Ok(Some(accepted.join(",")))
            } else {
                Err(problems)
            }
        }
        other => Err(vec![format!(
            "Invalid fields: {}. Expected a non-blank string or an array of field names",
            describe(other)
        )]),
    }
}

/// Substitute `{name}` segments of a path template with their percent-encoded values.
fn fill_path(template: &str, values: &[(&str, String)]) -> Result<String, Vec<String>> {
    let mut path = String::with_capacity(template.len() + 16);
    for segment in template.split('/').skip(1) {
        path.push('/');
        match segment
            .strip_prefix('{')
            .and_then(|rest| rest.strip_suffix('}'))
        {
            Some(name) => {
                let value = values
                    .iter()
                    .find(|(wire, _)| *wire == name)
                    .map(|(_, value)| value)
                    .ok_or_else(|| vec![format!("Missing required variable: {name}")])?;
                path.push_str(&encoding::path_segment(value));
            }
            None => path.push_str(segment),
        }
    }
    Ok(path)
}
