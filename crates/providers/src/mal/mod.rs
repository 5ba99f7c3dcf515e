//! The MyAnimeList REST v2 operation catalog.
//!
//! Each of the 19 operations of `aniLink.mal` (api.md §9.2) is one row of a static table (the
//! `catalog` module): HTTP method, path template, parameter rules and auth needs.
//! [`request_from_text`] turns a call's camelCase parameter object and its `fields` option, read
//! where they lie in the caller's JSON text (`crate::json_text`), into the exact request the
//! transport sends, or into the complete list of validation problems, so that a caller learns
//! about every mistake at once instead of one per round trip. Nothing here performs I/O.

mod cache_hint;
mod catalog;
mod encoding;
mod params;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod text_tests;

use serde_json::value::RawValue;
#[cfg(test)]
use serde_json::Value;

use crate::json_text::{array_of, is_null, rewritten, starts_with, string_of, Members, Unescaped};
pub use cache_hint::write_cache_hint;
pub use catalog::{operation, operations, LegacyArguments, Operation};
use params::{Placement, Rule};

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

/// Validate `params` (the JSON text of an object, camelCase keys as in api.md §9.2; `null` or
/// absent for options-first ops) and `fields` (absent, `null`, a string "a,b", or an array of
/// strings; for `get` ops absent -> the default field list) and build the request. Each value
/// is read only as far as its parameter's rule needs.
///
/// Every problem is reported, not only the first, with the detail strings of api.md §5.
pub fn request_from_text(
    op: &Operation,
    params: Option<&RawValue>,
    fields: Option<&RawValue>,
) -> Result<MalRequest, Vec<String>> {
    let given: Members = match params.filter(|params| !is_null(params)) {
        None => Members::new(),
        // Only a key whose escapes do not undo (a lone surrogate, which the facade never
        // writes: D33) fails here, as in the AniList catalog.
        Some(params) if starts_with(params, b'{') => {
            serde_json::from_str(params.get()).map_err(|error| {
                vec![format!(
                    "Invalid params: not JSON text ({error}). Expected an object."
                )]
            })?
        }
        Some(params) => {
            return Err(vec![format!(
                "Invalid params: {}. Expected an object.",
                rewritten(params)
            )])
        }
    };

    let mut problems = Vec::new();
    let fields = match selection_in_params(&given, fields) {
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
        let found = param.find_in(&given);
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

    for key in given.keys().map(Unescaped::as_str) {
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
    given: &Members<'a>,
    options_fields: Option<&'a RawValue>,
) -> Result<Option<&'a RawValue>, String> {
    let in_params = given
        .get(FIELDS_PARAM)
        .copied()
        .filter(|value| !is_null(value));
    match (in_params, options_fields.filter(|value| !is_null(value))) {
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
fn resolve_fields(
    op: &Operation,
    fields: Option<&RawValue>,
) -> Result<Option<String>, Vec<String>> {
    let requested = fields.filter(|value| !is_null(value));
    match op.method() {
        HttpMethod::Delete => return Ok(None),
        HttpMethod::Patch if requested.is_none() => return Ok(None),
        _ => {}
    }
    let Some(requested) = requested else {
        return Ok(op.default_fields().map(str::to_owned));
    };
    if let Some(list) = string_of(requested) {
        let list = list.as_str().trim();
        if !list.is_empty() {
            return Ok(Some(list.to_owned()));
        }
    } else if let Some(names) = array_of(requested) {
        return field_names(&names);
    }
    Err(vec![format!(
        "Invalid fields: {}. Expected a non-blank string or an array of field names",
        rewritten(requested)
    )])
}

/// An array of field names, trimmed and comma-joined; every bad element is named.
fn field_names(names: &[&RawValue]) -> Result<Option<String>, Vec<String>> {
    if names.is_empty() {
        return Err(vec![
            "Invalid fields: []. Expected at least one field name".to_owned()
        ]);
    }
    let mut accepted = Vec::with_capacity(names.len());
    let mut problems = Vec::new();
    for (index, name) in names.iter().enumerate() {
        match string_of(name) {
            Some(text) if !text.as_str().trim().is_empty() => accepted.push(text),
            _ => problems.push(format!(
                "Invalid fields[{index}]: {}. Expected a non-blank field name",
                rewritten(name)
            )),
        }
    }
    if problems.is_empty() {
        let trimmed: Vec<&str> = accepted.iter().map(|name| name.as_str().trim()).collect();
        Ok(Some(trimmed.join(",")))
    } else {
        Err(problems)
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

/// The unit tests (`tests.rs`) write params and fields as values: each is written out as JSON
/// text, as the facade writes it, and read from there as a call reads it.
#[cfg(test)]
fn build_request(
    op: &Operation,
    params: &Value,
    fields: Option<&Value>,
) -> Result<MalRequest, Vec<String>> {
    let as_text = |value: &Value| serde_json::value::to_raw_value(value).expect("JSON text");
    let params = as_text(params);
    let fields = fields.map(as_text);
    request_from_text(op, Some(&params), fields.as_deref())
}
