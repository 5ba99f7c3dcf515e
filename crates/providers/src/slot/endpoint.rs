//! A slot's endpoint, and the requests a call builds on it: one kind of request per kind of
//! client (catalog operations, AniList custom documents, POSTs of an external client).

use serde_json::value::RawValue;

use anilink_transport::error::TransportError;
use anilink_transport::request::{host_of, RequestSpec};

use super::Provider;
use crate::json_text::{array_of, is_null, rewritten, string_of, Unescaped};
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
    /// params, fields). `input` and `fields` are the facade's JSON text of the caller's values,
    /// read where they lie: AniList validates the variables and splices them into the body, MAL
    /// reads its params and fields into a URL or form.
    /// `problems` are what the facade found reading the caller's values that JSON cannot carry:
    /// any makes the call a validation failure.
    pub fn operation(
        &self,
        operation: &str,
        input: Option<&str>,
        fields: Option<&str>,
        mut problems: Vec<String>,
    ) -> Result<RequestSpec, NotBuilt> {
        match self {
            Endpoint::AniList(endpoint) => {
                let fields = anilist_fields(json_text(fields)?, &mut problems);
                without_problems(problems)?;
                Ok(endpoint.operation(operation, input, fields.as_deref())?)
            }
            Endpoint::Mal(endpoint) => {
                let fields = json_text(fields)?;
                without_problems(problems)?;
                Ok(endpoint.operation(operation, json_text(input)?, fields)?)
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

/// The facade's JSON text of a caller's value, checked to be JSON (it is the facade's own, so a
/// failure is a broken contract), not read any further.
fn json_text(text: Option<&str>) -> Result<Option<&RawValue>, NotBuilt> {
    text.map(serde_json::from_str)
        .transpose()
        .map_err(NotBuilt::NotJson)
}

/// AniList `fields`: absent, or an array of dot-path strings.
fn anilist_fields(fields: Option<&RawValue>, problems: &mut Vec<String>) -> Option<Vec<String>> {
    let fields = fields.filter(|fields| !is_null(fields))?;
    let paths = array_of(fields).and_then(|items| {
        items
            .iter()
            .map(|item| string_of(item).map(Unescaped::into_owned))
            .collect()
    });
    if paths.is_none() {
        problems.push(format!(
            "Invalid fields: {}. Expected an array of field paths (strings)",
            rewritten(fields)
        ));
    }
    paths
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
