//! From an operation call to the transport's [`RequestSpec`]: endpoint, auth headers, body.
//!
//! Each provider slot builds its endpoint once (URL parsed, headers prepared, the token marked
//! sensitive), so a call only validates its variables and assembles its body.

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use serde_json::value::RawValue;

use anilink_transport::error::{Protocol, TransportError};
use std::collections::HashMap;
use std::sync::OnceLock;

use anilink_transport::request::{host_of, Body, RequestSpec, ResultShape};

use crate::prepared_documents::{PreparedDocument, PreparedDocuments};
use crate::{anilist, mal};

pub const ANILIST_DEFAULT_URL: &str = "https://graphql.anilist.co";
pub const MAL_DEFAULT_URL: &str = "https://api.myanimelist.net/v2";

const JSON: HeaderValue = HeaderValue::from_static("application/json");
const FORM: HeaderValue = HeaderValue::from_static("application/x-www-form-urlencoded");
const MAL_CLIENT_ID: HeaderName = HeaderName::from_static("x-mal-client-id");

/// A credential as a header value, each character one Latin-1 byte as Node sends header
/// strings. What Node refuses (`ERR_INVALID_CHAR`: a character above U+00FF or a control
/// character) is refused here, at construction, by a message that never shows the value
/// (decisions D31, D40). Never shown in debug output either.
fn secret_header(value: &str, field: &str) -> Result<HeaderValue, String> {
    let refused = |what: &str| {
        format!(
            "{field} contains {what}, which an HTTP header cannot carry (Node refuses it too: ERR_INVALID_CHAR). Pass the credential exactly as it was issued: tokens and client ids are plain ASCII."
        )
    };
    let latin1 = value
        .chars()
        .map(|c| u8::try_from(c).map_err(|_| refused("a character above U+00FF")))
        .collect::<Result<Vec<u8>, String>>()?;
    let mut header = HeaderValue::from_bytes(&latin1)
        .map_err(|_| refused("a control character (a line break, say)"))?;
    header.set_sensitive(true);
    Ok(header)
}

fn non_empty(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

/// Check a base URL once, at construction, so a typo fails early with a clear message.
fn checked_base_url(base_url: &str, option: &str) -> Result<String, String> {
    let trimmed = base_url.trim_end_matches('/');
    host_of(trimmed)
        .map(|_| trimmed.to_string())
        // Described, never echoed: a URL may carry a password (decisions D31).
        .ok_or_else(|| format!("{option} must be an absolute http:// or https:// URL (received a string that is not one)."))
}

/// The AniList GraphQL endpoint of one slot.
pub struct AniListEndpoint {
    url: String,
    /// URL parsed and headers built once; each call clones it and adds its body.
    template: RequestSpec,
    has_token: bool,
    /// The `custom` documents this slot has seen, checked and escaped once each.
    custom_documents: PreparedDocuments,
}

impl AniListEndpoint {
    pub fn new(base_url: &str, token: Option<&str>) -> Result<Self, String> {
        let url = checked_base_url(base_url, "anilist baseUrl")?;
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, JSON);
        headers.insert(ACCEPT, JSON);
        let token = non_empty(token);
        if let Some(token) = token {
            headers.insert(
                AUTHORIZATION,
                secret_header(&format!("Bearer {token}"), "authToken")?,
            );
        }
        let mut template = RequestSpec::new(
            Method::POST,
            &url,
            headers,
            Bytes::new(),
            Protocol::GraphQl,
            ResultShape::GraphQl,
        )
        .map_err(|error| error.message.clone())?;
        template.is_write = false;
        Ok(Self {
            url,
            template,
            has_token: token.is_some(),
            custom_documents: PreparedDocuments::default(),
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// A catalog operation (`"query.media"`, `"mutation.saveMediaListEntry"`, …).
    /// `variables` is JSON text, as for [`AniListEndpoint::custom`], and goes into the body the
    /// same way once validated.
    pub fn operation(
        &self,
        key: &str,
        variables: Option<&str>,
        fields: Option<&[String]>,
    ) -> Result<RequestSpec, TransportError> {
        let operation = anilist::operation(key)
            .ok_or_else(|| TransportError::unknown(format!("unknown AniList operation {key}")))?;
        let variables = variables.map(object_or_null).transpose()?.flatten();
        anilist::validate_variables(operation, variables).map_err(TransportError::validation)?;
        // Without `fields` the document is the default one, whose prefix is made once.
        let prefix = match fields {
            None => default_prefix(operation),
            Some(_) => document_prefix(
                &anilist::document_for(operation, fields).map_err(TransportError::validation)?,
            )?,
        };
        let mut spec = self.with_variables(prefix, variables);
        spec.is_write = operation.kind() == anilist::OperationKind::Mutation;
        spec.cache_hint = anilist::operation_cache_hint(operation);
        if operation.requires_auth() && !self.has_token {
            spec.missing_auth = Some(format!("anilist.{key}"));
        }
        Ok(spec)
    }

    /// `anilist.custom(document, variables)`: a caller-written document. `variables` is JSON
    /// text (an object, `null` or absent), written into the body as it is: the facade reads
    /// the caller's value once into that text (its keys in the caller's order), and nothing
    /// here needs it as a value.
    pub fn custom(
        &self,
        document: &str,
        variables: Option<&str>,
    ) -> Result<RequestSpec, TransportError> {
        let prepared = self
            .custom_documents
            .get_or_prepare(document, prepare_custom_document)?;
        let variables = variables.map(object_or_null).transpose()?.flatten();
        let mut spec = self.with_variables(prepared.prefix.clone(), variables);
        spec.is_write = prepared.is_mutation;
        spec.cache_hint = prepared.cache_hint.clone();
        Ok(spec)
    }

    /// `{"query": document, "variables": variables}`: the document part (`prefix`) as given,
    /// the variables' text (an object, or None for `{}`) spliced after it byte for byte.
    fn with_variables(&self, prefix: Bytes, variables: Option<&str>) -> RequestSpec {
        let variables = variables.unwrap_or("{}");
        let mut tail = Vec::with_capacity(variables.len() + 1);
        tail.extend_from_slice(variables.as_bytes());
        tail.push(b'}');
        let mut spec = self.template.clone();
        spec.body = Body::from_chunks(vec![prefix, Bytes::from(tail)]);
        spec
    }
}

/// Variables as JSON text: `Some(object)`, `None` for `null`, or the validation error a
/// value that is not an object (or not JSON) gets.
fn object_or_null(text: &str) -> Result<Option<&str>, TransportError> {
    let value: &RawValue = serde_json::from_str(text).map_err(|error| {
        TransportError::validation(vec![format!(
            "Invalid variables: not JSON text ({error}). Expected an object."
        )])
    })?;
    match value.get() {
        "null" => Ok(None),
        object if object.starts_with('{') => Ok(Some(object)),
        other => Err(TransportError::validation(vec![format!(
            "Invalid variables: {other}. Expected an object."
        )])),
    }
}

fn encoding_failed(error: serde_json::Error) -> TransportError {
    TransportError::unknown(format!("could not encode the request body: {error}"))
}

/// Everything a `custom` call takes from its document alone: its check, its operation type,
/// its cache hint and its escaped text.
fn prepare_custom_document(document: &str) -> Result<PreparedDocument, TransportError> {
    let analysis =
        anilist::analyze_custom_document(document).map_err(TransportError::validation)?;
    Ok(PreparedDocument {
        prefix: document_prefix(document)?,
        is_mutation: analysis.is_mutation,
        cache_hint: anilist::custom_cache_hint(&analysis),
    })
}

/// `{"query":"<document, escaped>","variables":` for one document.
fn document_prefix(document: &str) -> Result<Bytes, TransportError> {
    let mut prefix = Vec::with_capacity(document.len() + 32);
    prefix.extend_from_slice(b"{\"query\":");
    serde_json::to_writer(&mut prefix, document).map_err(encoding_failed)?;
    prefix.extend_from_slice(b",\"variables\":");
    Ok(Bytes::from(prefix))
}

/// The prefix of every operation's default document, escaped once per process: calls share it
/// instead of copying several kilobytes each.
fn default_prefix(operation: &anilist::Operation) -> Bytes {
    static PREFIXES: OnceLock<HashMap<&'static str, Bytes>> = OnceLock::new();
    let prefixes = PREFIXES.get_or_init(|| {
        anilist::operations()
            .filter_map(|op| {
                document_prefix(op.default_document())
                    .ok()
                    .map(|prefix| (op.key(), prefix))
            })
            .collect()
    });
    match prefixes.get(operation.key()) {
        Some(prefix) => prefix.clone(),
        // Every catalog operation is in the map; rebuilding is only a fallback.
        None => document_prefix(operation.default_document()).unwrap_or_default(),
    }
}

/// The MyAnimeList REST endpoint of one slot.
pub struct MalEndpoint {
    base: String,
    headers: HeaderMap,
    has_token: bool,
}

impl MalEndpoint {
    /// With an access token every call sends it; with only a client id, `X-MAL-CLIENT-ID`.
    pub fn new(
        base_url: &str,
        access_token: Option<&str>,
        client_id: Option<&str>,
    ) -> Result<Self, String> {
        let base = checked_base_url(base_url, "mal baseUrl")?;
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, JSON);
        let token = non_empty(access_token);
        let client_id = non_empty(client_id);
        if let Some(token) = token {
            headers.insert(
                AUTHORIZATION,
                secret_header(&format!("Bearer {token}"), "accessToken")?,
            );
        } else if let Some(client_id) = client_id {
            headers.insert(MAL_CLIENT_ID, secret_header(client_id, "clientId")?);
        }
        Ok(Self {
            base,
            headers,
            has_token: token.is_some(),
        })
    }

    pub fn url(&self) -> &str {
        &self.base
    }

    /// A catalog operation (`"anime.get"`, …): `params` and `fields` are the caller's JSON
    /// text, read where they lie into the path, query or form.
    pub fn operation(
        &self,
        key: &str,
        params: Option<&RawValue>,
        fields: Option<&RawValue>,
    ) -> Result<RequestSpec, TransportError> {
        let operation = mal::operation(key)
            .ok_or_else(|| TransportError::unknown(format!("unknown MAL operation {key}")))?;
        let request = mal::request_from_text(operation, params, fields)
            .map_err(TransportError::validation)?;
        let mut headers = self.headers.clone();
        let body = match request.form_body {
            Some(form) => {
                headers.insert(CONTENT_TYPE, FORM);
                Bytes::from(form)
            }
            None => Bytes::new(),
        };
        let method = match request.method {
            mal::HttpMethod::Get => Method::GET,
            mal::HttpMethod::Patch => Method::PATCH,
            mal::HttpMethod::Delete => Method::DELETE,
        };
        let url = format!("{}{}", self.base, request.path_and_query);
        let shape = if request.empty_result {
            ResultShape::Nothing
        } else {
            ResultShape::Rest
        };
        let mut spec = RequestSpec::new(method, &url, headers, body, Protocol::Rest, shape)?;
        if spec.is_write {
            spec.cache_hint = mal::write_cache_hint(&url);
        }
        // Only a token-only call is refused locally; any other call goes out with whatever
        // credentials the slot has, none included, and MAL's answer decides (decisions D25).
        if request.requires_token && !self.has_token {
            spec.missing_auth = Some(format!("mal.{key}"));
        }
        Ok(spec)
    }
}

/// A POST to an OAuth token endpoint: the body as given (JSON for AniList, a form for MAL), no
/// credentials but those in the body. A write: never resent unless provably unsent.
pub fn token_request(
    url: &str,
    content_type: &str,
    body: String,
) -> Result<RequestSpec, TransportError> {
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, JSON);
    let content_type = HeaderValue::from_str(content_type).map_err(|_| {
        TransportError::validation(vec![format!("Invalid content type: {content_type:?}")])
    })?;
    headers.insert(CONTENT_TYPE, content_type);
    let mut spec = RequestSpec::new(
        Method::POST,
        url,
        headers,
        Bytes::from(body),
        Protocol::Rest,
        ResultShape::Rest,
    )?;
    spec.is_write = true;
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_text::raw;
    use serde_json::Value;

    #[test]
    fn tokens_are_sent_as_sensitive_bearer_headers() {
        let endpoint = AniListEndpoint::new("https://graphql.anilist.co/", Some("tok")).unwrap();
        assert_eq!(endpoint.url(), "https://graphql.anilist.co");
        let auth = endpoint.template.headers.get(AUTHORIZATION).unwrap();
        assert!(auth.is_sensitive());
        assert_eq!(auth, "Bearer tok");
        assert!(
            !format!("{:?}", endpoint.template.headers).contains("tok"),
            "debug output never shows the token"
        );
    }

    #[test]
    fn credentials_go_out_as_latin1_and_what_node_refuses_is_refused_unshown() {
        let latin1 = AniListEndpoint::new(ANILIST_DEFAULT_URL, Some("t\u{f6}k")).unwrap();
        assert_eq!(
            latin1.template.headers[AUTHORIZATION].as_bytes(),
            b"Bearer t\xf6k",
            "one byte per character, as Node sends it"
        );
        for (token, what) in [
            ("s\u{20ac}cret", "above U+00FF"),
            ("secret\u{1F600}", "above U+00FF"),
            ("se\r\ncret", "a control character"),
        ] {
            let error = AniListEndpoint::new(ANILIST_DEFAULT_URL, Some(token))
                .err()
                .unwrap();
            assert!(error.starts_with("authToken contains "), "{error}");
            assert!(
                error.contains(what) && error.contains("ERR_INVALID_CHAR"),
                "{error}"
            );
            assert!(!error.contains(token) && !error.contains("cret"), "{error}");
        }
        let error = MalEndpoint::new(MAL_DEFAULT_URL, None, Some("c\u{20ac}d"))
            .err()
            .unwrap();
        assert!(
            error.starts_with("clientId contains a character above U+00FF"),
            "{error}"
        );
    }

    #[test]
    fn an_empty_token_means_no_auth() {
        let endpoint = AniListEndpoint::new(ANILIST_DEFAULT_URL, Some("  ")).unwrap();
        assert!(!endpoint.has_token);
        assert!(endpoint.template.headers.get(AUTHORIZATION).is_none());
    }

    #[test]
    fn bad_base_urls_are_rejected_with_the_option_name() {
        let err = AniListEndpoint::new("graphql.anilist.co", None)
            .err()
            .unwrap();
        assert!(
            err.starts_with("anilist baseUrl must be an absolute http:// or https:// URL"),
            "{err}"
        );
    }

    #[test]
    fn mal_prefers_the_access_token_over_the_client_id() {
        let both = MalEndpoint::new(MAL_DEFAULT_URL, Some("m"), Some("cid")).unwrap();
        assert!(both.headers.get(AUTHORIZATION).is_some());
        assert!(both.headers.get(MAL_CLIENT_ID).is_none());
        let client_only = MalEndpoint::new(MAL_DEFAULT_URL, None, Some("cid")).unwrap();
        assert_eq!(client_only.headers.get(MAL_CLIENT_ID).unwrap(), "cid");
        assert!(!client_only.has_token);
    }

    #[test]
    fn default_documents_are_shared_and_variables_follow() {
        let endpoint = AniListEndpoint::new(ANILIST_DEFAULT_URL, None).unwrap();
        let first = endpoint
            .operation("query.media", Some(r#"{"id":1}"#), None)
            .unwrap();
        let second = endpoint
            .operation("query.media", Some(r#"{"id":2}"#), None)
            .unwrap();
        assert_eq!(
            first.body.chunks()[0].as_ptr(),
            second.body.chunks()[0].as_ptr(),
            "the document is not copied"
        );
        let body: Value = serde_json::from_slice(&second.body.to_vec()).unwrap();
        let media = anilist::operation("query.media").unwrap();
        assert_eq!(body["query"], media.default_document());
        assert_eq!(body["variables"], serde_json::json!({"id": 2}));
        let narrowed = endpoint
            .operation(
                "query.media",
                Some(r#"{"id":3}"#),
                Some(&["episodes".to_string()]),
            )
            .unwrap();
        let body: Value = serde_json::from_slice(&narrowed.body.to_vec()).unwrap();
        assert!(body["query"].as_str().unwrap().contains("episodes"));
        assert_ne!(body["query"], media.default_document());
    }

    #[test]
    fn catalog_variables_are_spliced_as_the_caller_wrote_them() {
        let endpoint = AniListEndpoint::new(ANILIST_DEFAULT_URL, None).unwrap();
        let written = r#"{"type":"ANIME","id":1,"search":"\u00e9t\u00e9"}"#;
        let spec = endpoint
            .operation("query.media", Some(written), None)
            .unwrap();
        let body = String::from_utf8(spec.body.to_vec()).unwrap();
        assert!(
            body.ends_with(&format!(r#","variables":{written}}}"#)),
            "the caller's order and escapes, byte for byte: {body}"
        );
        for none in [None, Some("null")] {
            let spec = endpoint.operation("query.viewer", none, None).unwrap();
            assert!(spec.body.to_vec().ends_with(br#","variables":{}}"#));
        }
        // Refused before any body is built, by the same reading as `custom`'s.
        for (text, problem) in [
            ("[1]", "Invalid variables: [1]. Expected an object."),
            (r#""id""#, r#"Invalid variables: "id". Expected an object."#),
        ] {
            let error = endpoint
                .operation("query.viewer", Some(text), None)
                .unwrap_err();
            assert_eq!(error.details, vec![problem.to_string()]);
        }
        let error = endpoint
            .operation("query.media", Some(r#"{"id":"1"}"#), None)
            .unwrap_err();
        assert_eq!(
            error.details,
            vec![r#"Invalid id: "1". Expected type: Int"#.to_string()]
        );
    }

    #[test]
    fn token_requests_are_writes_with_their_own_content_type() {
        let spec = token_request(
            "https://anilist.co/api/v2/oauth/token",
            "application/json",
            "{}".into(),
        )
        .unwrap();
        assert!(spec.is_write);
        assert_eq!(spec.method, Method::POST);
        assert_eq!(spec.headers.get(CONTENT_TYPE).unwrap(), "application/json");
        assert!(spec.headers.get(AUTHORIZATION).is_none());
        assert!(token_request("not a url", "application/json", String::new()).is_err());
    }

    #[test]
    fn list_deletes_resolve_nothing_whatever_the_body() {
        let endpoint = MalEndpoint::new(MAL_DEFAULT_URL, Some("m"), None).unwrap();
        let delete = endpoint
            .operation("anime.deleteFromList", Some(raw(r#"{"id":1}"#)), None)
            .unwrap();
        assert_eq!(delete.shape, ResultShape::Nothing);
        assert!(delete.is_write && delete.missing_auth.is_none());
        let get = endpoint
            .operation("anime.get", Some(raw(r#"{"id":1}"#)), None)
            .unwrap();
        assert_eq!(get.shape, ResultShape::Rest);
    }

    #[test]
    fn token_only_mal_operations_are_marked_without_a_token() {
        let endpoint = MalEndpoint::new(MAL_DEFAULT_URL, None, Some("cid")).unwrap();
        let me = endpoint.operation("user.me", None, None).unwrap();
        assert_eq!(me.missing_auth.as_deref(), Some("mal.user.me"));
        let public = endpoint
            .operation("anime.get", Some(raw(r#"{"id":1}"#)), None)
            .unwrap();
        assert!(public.missing_auth.is_none());
    }

    #[test]
    fn without_any_credentials_public_mal_calls_go_out_bare() {
        let endpoint = MalEndpoint::new(MAL_DEFAULT_URL, None, None).unwrap();
        let public = endpoint
            .operation("anime.get", Some(raw(r#"{"id":1}"#)), None)
            .unwrap();
        assert!(public.missing_auth.is_none());
        assert!(
            public.headers.get(AUTHORIZATION).is_none()
                && public.headers.get(MAL_CLIENT_ID).is_none()
        );
        let me = endpoint.operation("user.me", None, None).unwrap();
        assert_eq!(me.missing_auth.as_deref(), Some("mal.user.me"));
    }

    #[test]
    fn requests_carry_the_cache_hint_of_their_catalog_entry() {
        use anilink_transport::cache::{CacheHint, Invalidates};
        let anilist = AniListEndpoint::new(ANILIST_DEFAULT_URL, Some("t")).unwrap();
        let media = anilist
            .operation("query.media", Some(r#"{"id":1}"#), None)
            .unwrap();
        assert_eq!(
            media.cache_hint,
            CacheHint::Read {
                scope: Some("Media".into())
            }
        );
        let page = anilist
            .operation("query.page.medias", None, Some(&["id".to_string()]))
            .unwrap();
        assert_eq!(
            page.cache_hint,
            CacheHint::Read {
                scope: Some("Page".into())
            }
        );
        let save = anilist
            .operation(
                "mutation.saveMediaListEntry",
                Some(r#"{"mediaId":1}"#),
                None,
            )
            .unwrap();
        assert!(
            matches!(save.cache_hint, CacheHint::Write(Invalidates::Scopes(ref scopes)) if scopes.contains(&"MediaList".into()))
        );
        let custom = anilist
            .custom("mutation { DeleteActivity(id: 1) { deleted } }", None)
            .unwrap();
        assert_eq!(custom.cache_hint, CacheHint::Write(Invalidates::Url));
        let mal = MalEndpoint::new("http://h/v2", Some("m"), None).unwrap();
        let get = mal
            .operation("anime.get", Some(raw(r#"{"id":21}"#)), None)
            .unwrap();
        assert_eq!(get.cache_hint, CacheHint::Read { scope: None });
        let patch = mal
            .operation(
                "anime.updateMyListStatus",
                Some(raw(r#"{"id":21, "status":"watching"}"#)),
                None,
            )
            .unwrap();
        assert_eq!(
            patch.cache_hint,
            CacheHint::Write(Invalidates::GetsUnder("http://h/v2/anime/21".into()))
        );
        let token =
            token_request("https://h/oauth/token", "application/json", "{}".into()).unwrap();
        assert_eq!(token.cache_hint, CacheHint::None);
    }

    #[test]
    fn custom_documents_follow_their_operation_type() {
        let endpoint = AniListEndpoint::new(ANILIST_DEFAULT_URL, Some("t")).unwrap();
        let query = endpoint.custom("query { Viewer { id } }", None).unwrap();
        assert!(!query.is_write);
        let mutation = endpoint
            .custom("mutation { ToggleFollow(userId: 1) { id } }", Some("null"))
            .unwrap();
        assert!(mutation.is_write);
        let body: Value = serde_json::from_slice(&query.body.to_vec()).unwrap();
        assert_eq!(body["variables"], serde_json::json!({}));
        assert_eq!(body["query"], "query { Viewer { id } }");
        let with_vars = endpoint
            .custom(
                "query ($id: Int) { Media(id: $id) { id } }",
                Some(r#"{"id":1}"#),
            )
            .unwrap();
        let body: Value = serde_json::from_slice(&with_vars.body.to_vec()).unwrap();
        assert_eq!(body["variables"], serde_json::json!({"id": 1}));
    }

    #[test]
    fn custom_variables_are_written_as_given_and_must_be_an_object() {
        let endpoint = AniListEndpoint::new(ANILIST_DEFAULT_URL, None).unwrap();
        let document = "query { Viewer { id } }";
        let spec = endpoint
            .custom(document, Some(r#"{"b":1,"a":[2,"\u0001"]}"#))
            .unwrap();
        let body = String::from_utf8(spec.body.to_vec()).unwrap();
        assert!(
            body.ends_with(r#","variables":{"b":1,"a":[2,"\u0001"]}}"#),
            "{body}"
        );
        for (text, problem) in [
            (r#""x""#, r#"Invalid variables: "x". Expected an object."#),
            ("[1]", "Invalid variables: [1]. Expected an object."),
            ("7", "Invalid variables: 7. Expected an object."),
        ] {
            let error = endpoint.custom(document, Some(text)).unwrap_err();
            assert_eq!(error.details, vec![problem.to_string()]);
        }
        let broken = endpoint.custom(document, Some("{")).unwrap_err();
        assert!(broken.details[0].starts_with("Invalid variables: not JSON text"));
    }

    #[test]
    fn a_custom_document_is_prepared_once_and_its_text_shared() {
        let endpoint = AniListEndpoint::new(ANILIST_DEFAULT_URL, None).unwrap();
        let document = "query ($id: Int) { Media(id: $id) { id } }";
        let first = endpoint.custom(document, Some(r#"{"id":1}"#)).unwrap();
        let second = endpoint.custom(document, Some(r#"{"id":2}"#)).unwrap();
        // The second call sends the first call's escaped document, not a copy of it.
        assert_eq!(
            first.body.chunks()[0].as_ptr(),
            second.body.chunks()[0].as_ptr()
        );
        let body: Value = serde_json::from_slice(&second.body.to_vec()).unwrap();
        assert_eq!(body["query"], document);
        assert_eq!(body["variables"], serde_json::json!({"id": 2}));

        // One character apart: another document, with its own body and cache hint.
        let a = endpoint.custom("{ Media { id } }", None).unwrap();
        let b = endpoint.custom("{ Medix { id } }", None).unwrap();
        let scope = |spec: &RequestSpec| match &spec.cache_hint {
            anilink_transport::cache::CacheHint::Read { scope } => scope.clone(),
            other => panic!("not a read: {other:?}"),
        };
        assert_eq!(scope(&a).as_deref(), Some("Media"));
        assert_eq!(scope(&b).as_deref(), Some("Medix"));
        assert_ne!(a.body.to_vec(), b.body.to_vec());
    }

    #[test]
    fn a_bad_custom_document_fails_every_time_with_the_same_problems() {
        let endpoint = AniListEndpoint::new(ANILIST_DEFAULT_URL, None).unwrap();
        let failures: Vec<_> = (0..3)
            .map(|_| endpoint.custom("query { Viewer { id }", None).unwrap_err())
            .collect();
        assert_eq!(
            failures[0].code,
            anilink_transport::error::ErrorCode::Validation
        );
        assert!(!failures[0].message.is_empty());
        for failure in &failures[1..] {
            assert_eq!(failure.message, failures[0].message);
            assert_eq!(failure.code, failures[0].code);
        }
    }
}
