use std::collections::HashMap;

use anilink_transport::error::ErrorCode;
use anilink_transport::request::RequestSpec;

use super::*;

fn string(text: &str) -> OptValue {
    OptValue::String(text.to_string())
}

/// A slot read from `entries` in order, with `variables` as the environment.
fn slot(
    provider: Provider,
    entries: Vec<(&str, OptValue)>,
    variables: &[(&str, &str)],
) -> Result<SlotSettings, String> {
    let variables: HashMap<String, String> = variables
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    let mut reader = SlotReader::new(provider);
    for (key, value) in entries {
        reader.read(key.to_string(), &value)?;
    }
    reader.finish(|name| variables.get(name).cloned())
}

fn url_of(settings: &SlotSettings) -> String {
    match &settings.endpoint {
        Endpoint::AniList(endpoint) => endpoint.url().to_string(),
        Endpoint::Mal(endpoint) => endpoint.url().to_string(),
        Endpoint::External => String::new(),
    }
}

fn error_of(provider: Provider, entries: Vec<(&str, OptValue)>) -> String {
    match slot(provider, entries, &[]) {
        Ok(_) => panic!("the slot was accepted"),
        Err(message) => message,
    }
}

#[test]
fn an_empty_slot_goes_to_the_default_endpoint() {
    let anilist = slot(Provider::AniList, vec![], &[]).unwrap();
    assert_eq!(url_of(&anilist), "https://graphql.anilist.co");
    let mal = slot(Provider::Mal, vec![], &[]).unwrap();
    assert_eq!(url_of(&mal), "https://api.myanimelist.net/v2");
    assert!(matches!(
        slot(Provider::External, vec![], &[]).unwrap().endpoint,
        Endpoint::External
    ));
}

#[test]
fn a_valid_slot_takes_credentials_transport_options_and_base_url() {
    let settings = slot(
        Provider::Mal,
        vec![
            ("accessToken", string("token")),
            ("clientId", string("cid")),
            ("refreshToken", OptValue::Undefined),
            ("clientSecret", OptValue::Null),
            ("onTokenRefresh", OptValue::Function),
            ("onTokenRefreshError", OptValue::Undefined),
            ("timeout", OptValue::Number(1000.0)),
            ("retry", OptValue::Bool(false)),
            ("baseUrl", string("HTTP://127.0.0.1:08080/v2")),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(url_of(&settings), "http://127.0.0.1:8080/v2");
    assert_eq!(settings.endpoint_settings.provider(), Provider::Mal);
    assert_eq!(settings.endpoint.host().as_deref(), Some("127.0.0.1:8080"));
}

#[test]
fn the_environment_overrides_the_default_and_base_url_overrides_the_environment() {
    let variables = [
        ("ANILINK_ANILIST_URL", "http://127.0.0.1:1/from-env"),
        ("ANILINK_MAL_URL", "http://127.0.0.1:2/mal-env"),
    ];
    let anilist = slot(Provider::AniList, vec![], &variables).unwrap();
    assert_eq!(url_of(&anilist), "http://127.0.0.1:1/from-env");
    let mal = slot(Provider::Mal, vec![], &variables).unwrap();
    assert_eq!(url_of(&mal), "http://127.0.0.1:2/mal-env");
    let slot_wins = slot(
        Provider::AniList,
        vec![("baseUrl", string("http://127.0.0.1:3/slot"))],
        &variables,
    )
    .unwrap();
    assert_eq!(url_of(&slot_wins), "http://127.0.0.1:3/slot");
}

#[test]
fn a_blank_variable_counts_as_unset_and_an_invalid_one_is_refused() {
    let blank = slot(Provider::AniList, vec![], &[("ANILINK_ANILIST_URL", "  ")]).unwrap();
    assert_eq!(url_of(&blank), "https://graphql.anilist.co");
    let invalid = slot(Provider::Mal, vec![], &[("ANILINK_MAL_URL", "ftp://x")]);
    assert_eq!(
        invalid.err().as_deref(),
        Some("mal baseUrl must be an absolute http:// or https:// URL (received a URL with another scheme).")
    );
}

#[test]
fn the_endpoint_variables_are_named() {
    assert_eq!(
        endpoint_variables().collect::<Vec<_>>(),
        ["ANILINK_ANILIST_URL", "ANILINK_MAL_URL"]
    );
}

#[test]
fn an_unknown_key_names_every_valid_one() {
    let keys = TRANSPORT_OPTION_KEYS.join(", ");
    assert_eq!(
        error_of(Provider::AniList, vec![("x", OptValue::Number(1.0))]),
        format!("Unknown credential key \"x\". Valid transport options are: {keys}. Provider auth fields are: authToken, refreshToken, clientId, clientSecret, onTokenRefresh, onTokenRefreshError. Endpoint option: baseUrl.")
    );
    // The other provider's token field is unknown here.
    let mal = error_of(Provider::Mal, vec![("authToken", string("t"))]);
    assert!(
        mal.starts_with("Unknown credential key \"authToken\"."),
        "{mal}"
    );
    assert!(
        mal.contains("Provider auth fields are: accessToken, refreshToken"),
        "{mal}"
    );
}

#[test]
fn an_external_client_takes_transport_options_only() {
    let keys = TRANSPORT_OPTION_KEYS.join(", ");
    for key in ["authToken", "baseUrl", "clientId"] {
        assert_eq!(
            error_of(Provider::External, vec![(key, string("x"))]),
            format!("Unknown option key \"{key}\" for an external client. Valid transport options are: {keys}.")
        );
    }
    assert!(slot(
        Provider::External,
        vec![("timeout", OptValue::Number(5.0))],
        &[]
    )
    .is_ok());
}

#[test]
fn each_auth_field_of_the_wrong_type_is_described_by_its_kind() {
    let secret = "sEcReT";
    let wrong = [
        (OptValue::Number(42.0), "a number"),
        (OptValue::Bool(true), "a boolean"),
        (OptValue::Array(vec![string(secret)]), "an array"),
        (
            OptValue::Object(vec![("token".into(), string(secret))]),
            "an object",
        ),
        (OptValue::Function, "a function"),
        (OptValue::Other("symbol"), "a symbol"),
        (OptValue::Other("bigint"), "a bigint"),
    ];
    for field in [
        "authToken",
        "refreshToken",
        "clientId",
        "clientSecret",
        "baseUrl",
    ] {
        for (value, kind) in &wrong {
            let message = error_of(Provider::AniList, vec![(field, value.clone())]);
            assert_eq!(
                message,
                format!("{field} must be a string (received {kind}).")
            );
        }
    }
    for field in ["onTokenRefresh", "onTokenRefreshError"] {
        let message = error_of(Provider::AniList, vec![(field, string(secret))]);
        assert_eq!(
            message,
            format!("{field} must be a function (received a string).")
        );
    }
}

#[test]
fn the_first_problem_in_the_object_order_is_reported() {
    let message = error_of(
        Provider::AniList,
        vec![("authToken", OptValue::Number(1.0)), ("x", OptValue::Null)],
    );
    assert_eq!(message, "authToken must be a string (received a number).");
}

#[test]
fn an_invalid_transport_option_is_the_transports_message() {
    let message = error_of(Provider::AniList, vec![("timeout", string("soon"))]);
    assert!(message.contains("timeout"), "{message}");
}

#[test]
fn a_token_an_http_header_cannot_carry_is_refused() {
    let message = error_of(Provider::AniList, vec![("authToken", string("a\nb"))]);
    assert!(
        message.starts_with("authToken contains a control character"),
        "{message}"
    );
}

#[test]
fn a_refreshed_token_rebuilds_the_endpoint_at_the_same_url() {
    let settings = slot(
        Provider::AniList,
        vec![("baseUrl", string("http://127.0.0.1:9/graphql"))],
        &[],
    )
    .unwrap();
    let refreshed = settings.endpoint_settings.endpoint(Some("new")).unwrap();
    assert_eq!(refreshed.host().as_deref(), Some("127.0.0.1:9"));
    let Endpoint::AniList(endpoint) = refreshed else {
        panic!("an AniList endpoint");
    };
    assert_eq!(endpoint.url(), "http://127.0.0.1:9/graphql");
}

#[test]
fn each_kind_of_client_builds_its_own_requests_only() {
    let anilist = slot(Provider::AniList, vec![], &[]).unwrap().endpoint;
    let external = slot(Provider::External, vec![], &[]).unwrap().endpoint;
    let wrong = |result: Result<RequestSpec, NotBuilt>| match result {
        Err(NotBuilt::WrongClient(message)) => message,
        other => panic!("expected a wrong client, got {:?}", other.err()),
    };
    assert_eq!(
        wrong(external.operation("query.media", Some("{}"), None, vec![])),
        "an external client has no catalog operations"
    );
    assert_eq!(
        wrong(external.custom("{ Viewer { id } }", None, vec![])),
        "custom documents are an AniList feature"
    );
    assert_eq!(
        wrong(anilist.post("http://127.0.0.1:1/token", "application/json", "{}".into())),
        "posts to absolute URLs need an external client"
    );
    assert!(external
        .post("http://127.0.0.1:1/token", "application/json", "{}".into())
        .is_ok());
    assert!(anilist
        .operation("query.media", Some(r#"{"id":1}"#), None, vec![])
        .is_ok());
}

#[test]
fn problems_and_bad_fields_make_a_validation_failure() {
    let anilist = slot(Provider::AniList, vec![], &[]).unwrap().endpoint;
    let refused = |result: Result<RequestSpec, NotBuilt>| match result {
        Err(NotBuilt::Refused(error)) => error,
        other => panic!("expected a refusal, got {:?}", other.err()),
    };
    let error = refused(anilist.operation(
        "query.media",
        Some(r#"{"id":1}"#),
        None,
        vec!["variables.id is a BigInt".into()],
    ));
    assert_eq!(error.code, ErrorCode::Validation);
    let fields =
        refused(anilist.operation("query.media", Some(r#"{"id":1}"#), Some(r#""id""#), vec![]));
    assert_eq!(fields.code, ErrorCode::Validation);
    let custom = refused(anilist.custom("{ Viewer { id } }", None, vec!["a problem".into()]));
    assert_eq!(custom.code, ErrorCode::Validation);
}

#[test]
fn the_degraded_limit_defaults_to_the_providers_documented_one() {
    let limit = |provider, entries| {
        slot(provider, entries, &[])
            .unwrap()
            .options
            .resolve(false)
            .degraded_limit
    };
    assert_eq!(limit(Provider::AniList, vec![]), Some(30));
    assert_eq!(limit(Provider::Mal, vec![]), None);
    assert_eq!(limit(Provider::External, vec![]), None);
    let given = |value| vec![(schema::DEGRADED_LIMIT_FIELD, value)];
    assert_eq!(
        limit(Provider::AniList, given(OptValue::Undefined)),
        Some(30)
    );
    assert_eq!(limit(Provider::AniList, given(OptValue::Bool(false))), None);
    assert_eq!(limit(Provider::AniList, given(OptValue::Number(0.0))), None);
    assert_eq!(
        limit(Provider::Mal, given(OptValue::Number(12.0))),
        Some(12)
    );
    assert!(error_of(Provider::AniList, given(OptValue::Number(-3.0)))
        .starts_with("degradedLimit must be an integer greater than or equal to 1"));
}
