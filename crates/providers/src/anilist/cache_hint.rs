//! What AniList requests tell the response cache (transport.md 1.12): a query-shaped read is
//! scoped by its single root field, and a mutation drops the queries whose root field it can
//! change, or every entry at the endpoint when one of its root fields is not in the table.

use std::borrow::Cow;

use anilink_transport::cache::{CacheHint, Invalidates, Scope};
use serde_json::Value;

use super::{analyze_custom_document, CustomDocument, Operation, OperationKind};

/// The cached root fields an AniList mutation can change; None for a mutation the table does
/// not know, which drops every entry at the endpoint.
fn fields_affected_by(mutation_field: &str) -> Option<&'static [&'static str]> {
    const MEDIA_LIST: &[&str] = &[
        "MediaList",
        "MediaListCollection",
        "Page",
        "Media",
        "User",
        "Viewer",
        "Activity",
    ];
    const FAVOURITES: &[&str] = &[
        "Favourites",
        "User",
        "Viewer",
        "Media",
        "Character",
        "Staff",
        "Studio",
        "Page",
    ];
    const REVIEWS: &[&str] = &["Review", "Page", "Media", "User", "Viewer"];
    const USER: &[&str] = &[
        "User",
        "Viewer",
        "Follower",
        "Following",
        "Page",
        "MediaList",
        "MediaListCollection",
        "Media",
    ];
    match mutation_field {
        "SaveMediaListEntry" | "UpdateMediaListEntries" | "DeleteMediaListEntry" => {
            Some(MEDIA_LIST)
        }
        "ToggleFavourite" | "UpdateFavouriteOrder" => Some(FAVOURITES),
        "SaveReview" | "DeleteReview" | "RateReview" => Some(REVIEWS),
        "UpdateUser" => Some(USER),
        _ => None,
    }
}

/// What a mutation with these root fields drops: the union of their tables when every one is
/// mapped, everything at the endpoint otherwise (or when no root field is known).
fn invalidated_by(root_fields: &[&str]) -> Invalidates {
    let mut scopes: Vec<Scope> = Vec::new();
    for field in root_fields {
        let Some(affected) = fields_affected_by(field) else {
            return Invalidates::Url;
        };
        for scope in affected {
            if !scopes.iter().any(|known| known == scope) {
                scopes.push(Cow::Borrowed(scope));
            }
        }
    }
    if scopes.is_empty() {
        return Invalidates::Url;
    }
    Invalidates::Scopes(scopes)
}

/// The hint of a catalog operation: its document has the operation's single root field.
pub fn for_operation(operation: &'static Operation) -> CacheHint {
    match operation.kind() {
        OperationKind::Mutation => CacheHint::Write(invalidated_by(&[operation.root_field()])),
        OperationKind::Query | OperationKind::Page => CacheHint::Read {
            scope: Some(Cow::Borrowed(operation.root_field())),
        },
    }
}

/// The hint of a caller-written document. Only a query that opens the document is a cacheable
/// read (the `{` or `query …{` shape of transport.md 1.12).
pub fn for_document(document: &CustomDocument) -> CacheHint {
    let root_fields: Option<Vec<&str>> = document
        .root_fields
        .as_ref()
        .map(|names| names.iter().map(String::as_str).collect());
    if document.is_mutation {
        return CacheHint::Write(invalidated_by(root_fields.as_deref().unwrap_or_default()));
    }
    if !document.opens_with_operation {
        return CacheHint::None;
    }
    CacheHint::Read {
        scope: single(root_fields.as_deref()),
    }
}

fn single(root_fields: Option<&[&str]>) -> Option<Scope> {
    match root_fields? {
        [field] => Some(Cow::Owned((*field).to_owned())),
        _ => None,
    }
}

/// The hint of a request body given to `ResponseCache` by hand: what [`for_document`] says of
/// its `query` document, so hand-stored entries follow the transport's own rule (a query is a
/// read, scoped by its single root field); None for a body that is not a GraphQL request.
pub fn body_hint(body: &[u8]) -> CacheHint {
    let document = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|body| body.get("query")?.as_str().map(str::to_owned));
    match document.as_deref().map(analyze_custom_document) {
        Some(Ok(document)) => for_document(&document),
        _ => CacheHint::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anilist::{analyze_custom_document, operations};

    fn document_hint(document: &str) -> CacheHint {
        for_document(&analyze_custom_document(document).expect(document))
    }

    /// The document's root fields, space-separated.
    fn root_field_names(document: &str) -> Option<String> {
        Some(
            analyze_custom_document(document)
                .ok()?
                .root_fields?
                .join(" "),
        )
    }

    fn read(scope: Option<&'static str>) -> CacheHint {
        CacheHint::Read {
            scope: scope.map(Cow::Borrowed),
        }
    }

    #[test]
    fn the_mutation_table_matches_the_specification() {
        for (mutation, field, affected) in [
            ("SaveMediaListEntry", "Activity", true),
            ("ToggleFavourite", "Studio", true),
            ("RateReview", "Review", true),
            ("UpdateUser", "Following", true),
            ("SaveMediaListEntry", "Character", false),
        ] {
            assert_eq!(
                fields_affected_by(mutation).map(|fields| fields.contains(&field)),
                Some(affected),
                "{mutation} → {field}"
            );
        }
        assert_eq!(fields_affected_by("DeleteActivity"), None);
    }

    #[test]
    fn query_shape_follows_the_documented_pattern() {
        assert_eq!(document_hint("{ a }"), read(Some("a")));
        assert_eq!(document_hint("  query{ a }"), read(Some("a")));
        assert_eq!(document_hint("#c1\n#c2\nquery Name { a }"), read(Some("a")));
        assert_eq!(
            document_hint("# note\n\n  # more\nquery { Viewer { id } }"),
            read(Some("Viewer"))
        );
        assert_eq!(
            document_hint("query Q($id: Int) { Media(id: $id) { id } }"),
            read(Some("Media"))
        );
        assert_eq!(
            document_hint("fragment F on Media { id }\nquery { Media { ...F } }"),
            CacheHint::None,
            "a fragment opens it"
        );
        assert!(matches!(
            document_hint("mutation { a }"),
            CacheHint::Write(_)
        ));
        for malformed in [
            "query",
            "queryable { a }",
            "subscription { a }",
            "# only a comment",
        ] {
            assert!(analyze_custom_document(malformed).is_err(), "{malformed}");
        }
    }

    #[test]
    fn root_fields_resolve_aliases_and_skip_arguments_directives_and_fragments() {
        assert_eq!(
            root_field_names("{ Media(id: 1) { id } }"),
            Some("Media".to_owned())
        );
        assert_eq!(
            root_field_names("query Q($f: MediaFilter = {a: \"}\"}) { m: Media(search: \"{x}\") @include(if: true) { id } Page { media { id } } }"),
            Some("Media Page".to_owned())
        );
        assert_eq!(
            root_field_names("fragment F on Media { id title }\nquery { Media { ...F } }"),
            Some("Media".to_owned())
        );
        assert_eq!(root_field_names("{ ...Root }"), None);
        assert_eq!(
            root_field_names("# { NotThis }\n{ Viewer { id } }"),
            Some("Viewer".to_owned())
        );
        assert_eq!(
            root_field_names("\"\"\"doc { x }\"\"\" query { User { id } }"),
            None,
            "not a document: a string cannot open one"
        );
        assert_eq!(root_field_names("query"), None);
        assert_eq!(
            document_hint("{ A { id } B { id } }"),
            read(None),
            "several root fields: no single scope"
        );
        assert_eq!(
            document_hint("{ a: Media { id } Media { id } }"),
            read(None)
        );
    }

    #[test]
    fn a_mapped_mutation_invalidates_its_scopes_and_anything_else_the_whole_endpoint() {
        let list = [
            "MediaList",
            "MediaListCollection",
            "Page",
            "Media",
            "User",
            "Viewer",
            "Activity",
        ];
        let scopes = |names: &[&'static str]| {
            Invalidates::Scopes(names.iter().map(|n| Cow::Borrowed(*n)).collect())
        };
        assert_eq!(
            document_hint("mutation { SaveMediaListEntry(mediaId: 1, status: CURRENT) { id } }"),
            CacheHint::Write(scopes(&list))
        );
        let favourites = [
            "Favourites",
            "User",
            "Viewer",
            "Media",
            "Character",
            "Staff",
            "Studio",
            "Page",
        ];
        assert_eq!(
            document_hint(
                "mutation { fav: ToggleFavourite(characterId: 1) { anime { nodes { id } } } }"
            ),
            CacheHint::Write(scopes(&favourites))
        );
        let both = document_hint("mutation { SaveMediaListEntry(mediaId: 1) { id } ToggleFavourite(animeId: 1) { anime { nodes { id } } } }");
        let CacheHint::Write(Invalidates::Scopes(union)) = both else {
            panic!("{both:?}")
        };
        assert_eq!(
            union.len(),
            11,
            "the union of both tables, once each: {union:?}"
        );
        assert_eq!(
            document_hint("mutation { DeleteActivity(id: 1) { deleted } }"),
            CacheHint::Write(Invalidates::Url)
        );
        assert_eq!(document_hint("mutation { SaveMediaListEntry(mediaId: 1) { id } DeleteActivity(id: 1) { deleted } }"), CacheHint::Write(Invalidates::Url));
        assert_eq!(
            document_hint("mutation { ...M } fragment M on Mutation { SaveMediaListEntry(mediaId: 1) { id } }"),
            CacheHint::Write(Invalidates::Url),
            "a fragment at the root cannot be attributed"
        );
    }

    #[test]
    fn every_catalog_operation_gets_the_hint_its_default_document_has() {
        for operation in operations() {
            assert_eq!(
                for_operation(operation),
                document_hint(operation.default_document()),
                "{}",
                operation.key()
            );
        }
    }

    #[test]
    fn a_hand_stored_body_follows_the_document_rule() {
        assert_eq!(
            body_hint(br#"{"query":"{ Media(id: 1) { id } }","variables":{}}"#),
            read(Some("Media"))
        );
        assert_eq!(
            body_hint(br#"{"query":"{ Media { id } Page { total } }"}"#),
            read(None)
        );
        assert!(matches!(
            body_hint(br#"{"query":"mutation { SaveMediaListEntry(mediaId: 1) { id } }"}"#),
            CacheHint::Write(_)
        ));
        assert_eq!(
            body_hint(br#"{"query":"fragment F on Media { id }\nquery { Media { ...F } }"}"#),
            CacheHint::None,
            "a fragment before the operation: not the query shape"
        );
        assert_eq!(
            body_hint(br#"{"query":"{ Media "}"#),
            CacheHint::None,
            "a document that does not parse is no query"
        );
        assert_eq!(body_hint(br#"{"variables":{}}"#), CacheHint::None);
        assert_eq!(body_hint(b"not json"), CacheHint::None);
    }
}
