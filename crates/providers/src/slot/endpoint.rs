//! A slot's endpoint, and the requests a call builds on it: one kind of request per kind of
//! client (catalog operations, AniList custom documents, POSTs of an external client).

use serde_json::Value;

use anilink_transport::error::TransportError;
use anilink_transport::request::{host_of, RequestSpec};

use super::Provider;
use crate::requests::{token_request, AniListEndpoint, MalEndpoint};

/// Where a slot's calls go, with its credentials.
pub enum Endpoint {
    AniList(Box<AniListEndpoint>),
    Mal(MalEndpoint),
    /// An external client's calls name their own absolute URL.
    External,
}

/// Why a request was not built.
#[derive(Debug)]
pub enum NotBuilt {
    /// The facade asked a client of the wrong kind: a broken contract, not bad input.
    WrongClient(&'static str),
    /// The facade's JSON text of the caller's values did not parse: a broken contract too.
    NotJson(serde_json::Error),
    /// The call's own input was refused; it fails before any I/O.
    Refused(TransportError),
}

impl From<TransportError> for NotBuilt {
    fn from(error: TransportError) -> Self {
        NotBuilt::Refused(error)
    }
}

impl Endpoint {
    pub(super) fn new(
        provider: Provider,
        base_url: &str,
        token: Option<&str>,
        client_id: Option<&str>,
    ) -> Result<Self, String> {
        Ok(match provider {
            Provider::AniList => {
                Endpoint::AniList(Box::new(AniListEndpoint::new(base_url, token)?))
            }
            Provider::Mal => Endpoint::Mal(MalEndpoint::new(base_url, token, client_id)?),
            Provider::External => Endpoint::External,
        })
    }

    /// The host its calls go to; None for an external client.
    pub fn host(&self) -> Option<String> {
        match self {
            Endpoint::AniList(endpoint) => host_of(endpoint.url()),
            Endpoint::Mal(endpoint) => host_of(endpoint.url()),
            Endpoint::External => None,
        }
    }

    /// A catalog operation: AniList (`"query.media"`, variables, fields) or MAL (`"anime.get"`,
    /// params, fields). `input` is the facade's JSON text of the variables or params: AniList
    /// validates it and splices it into the body, MAL reads it to build a URL or form.
    /// `problems` are what the facade found reading the caller's values that JSON cannot carry:
    /// any makes the call a validation failure.
    pub fn operation(
        &self,
        operation: &str,
        input: Option<&str>,
        fields: Option<Value>,
        mut problems: Vec<String>,
    ) -> Result<RequestSpec, NotBuilt> {
        match self {
            Endpoint::AniList(endpoint) => {
                let fields = anilist_fields(fields, &mut problems);
                without_problems(problems)?;
                Ok(endpoint.operation(operation, input, fields.as_deref())?)
            }
            Endpoint::Mal(endpoint) => {
                without_problems(problems)?;
                let params: Value = match input {
                    Some(text) => serde_json::from_str(text).map_err(NotBuilt::NotJson)?,
                    None => Value::Null,
                };
                Ok(endpoint.operation(operation, &params, fields.as_ref())?)
            }
            Endpoint::External => Err(NotBuilt::WrongClient(
                "an external client has no catalog operations",
            )),
        }
    }

    /// `anilist.custom(document, variables)`, the variables as JSON text.
    pub fn custom(
        &self,
        document: &str,
        variables: Option<&str>,
        problems: Vec<String>,
    ) -> Result<RequestSpec, NotBuilt> {
        match self {
            Endpoint::AniList(endpoint) => {
                without_problems(problems)?;
                Ok(endpoint.custom(document, variables)?)
            }
            _ => Err(NotBuilt::WrongClient(
                "custom documents are an AniList feature",
            )),
        }
    }

    /// A POST of an external client to `url`: `body` is sent as `content_type`.
    pub fn post(
        &self,
        url: &str,
        content_type: &str,
        body: String,
    ) -> Result<RequestSpec, NotBuilt> {
        match self {
            Endpoint::External => Ok(token_request(url, content_type, body)?),
            _ => Err(NotBuilt::WrongClient(
                "posts to absolute URLs need an external client",
            )),
        }
    }
}

/// AniList `fields`: absent, or an array of dot-path strings.
fn anilist_fields(fields: Option<Value>, problems: &mut Vec<String>) -> Option<Vec<String>> {
    match fields {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => Some(
            items
                .into_iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
        ),
        Some(other) => {
            problems.push(format!(
                "Invalid fields: {other}. Expected an array of field paths (strings)"
            ));
            None
        }
    }
}

/// The facade's reading of a call's values found nothing JSON cannot carry, or the call fails
/// with a validation error listing what it found.
fn without_problems(problems: Vec<String>) -> Result<(), TransportError> {
    if problems.is_empty() {
        Ok(())
    } else {
        Err(TransportError::validation(problems))
    }
}
