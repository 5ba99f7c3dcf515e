//! Caller-written documents (`anilist.custom`, `anilist.customPage`): a light local parse that
//! catches malformed documents before they cost a request, and tells the transport what it needs
//! (mutation or not, D1; the top-level response keys, to unwrap a single root; what the response
//! cache needs to know, turned into its hint by `cache_hint`). The work is split by mechanism:
//! `lexer` (the crate's one GraphQL lexer), `parser` (one operation and its fragments) and
//! `document` (the tree and its fragment walk); this module holds the checks built on them.

mod document;
mod lexer;
mod parser;

use document::OperationType;
use parser::parse;

/// What the transport needs to know about a caller-written document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomDocument {
    /// The operation is a `mutation` (never retried by default, D1).
    pub is_mutation: bool,
    /// The top-level response keys (alias or field name), fragments resolved, in order.
    pub root_keys: Vec<String>,
    /// The document opens with its operation (no fragment is defined before it).
    pub opens_with_operation: bool,
    /// The operation's root fields by name (aliases resolved), in order; None when its root
    /// selects a fragment.
    pub root_fields: Option<Vec<String>>,
}

/// Checks the shape of a caller-written document (not empty, balanced braces, exactly one
/// operation, well-formed selections) and reports whether it is a mutation and its root keys.
pub fn analyze_custom_document(document: &str) -> Result<CustomDocument, Vec<String>> {
    let parsed = parse(document)?;
    let root_keys = parsed
        .response_keys(&parsed.operation.selection)
        .map_err(|problem| vec![problem])?;
    let root_fields = parsed
        .root_field_names()
        .map(|names| names.into_iter().map(str::to_owned).collect());
    Ok(CustomDocument {
        is_mutation: parsed.operation.kind == OperationType::Mutation,
        root_keys,
        opens_with_operation: parsed.operation_first,
        root_fields,
    })
}

/// `anilist.customPage`: the document must be a query whose single root is `Page`, declaring
/// `$page` and `$perPage` as `Int` and selecting `pageInfo { hasNextPage }`.
pub fn check_custom_page_document(document: &str) -> Result<(), Vec<String>> {
    let parsed = parse(document)?;
    let mut problems = Vec::new();
    if parsed.operation.kind != OperationType::Query {
        problems.push("The customPage document must be a query.".to_owned());
    }
    for variable in ["page", "perPage"] {
        let declared_int = parsed.operation.variables.iter().any(|(name, type_text)| {
            *name == variable && (type_text == "Int" || type_text == "Int!")
        });
        if !declared_int {
            problems.push(format!(
                "The customPage document must declare ${variable} as Int."
            ));
        }
    }
    let roots = parsed
        .fields(&parsed.operation.selection)
        .map_err(|problem| vec![problem])?;
    match roots.as_slice() {
        [page] if page.name == "Page" && page.alias.is_none() => {
            let page_fields = parsed
                .fields(&page.selection)
                .map_err(|problem| vec![problem])?;
            let has_next_page = page_fields
                .iter()
                .filter(|field| field.name == "pageInfo" && field.alias.is_none())
                .any(|page_info| {
                    parsed.fields(&page_info.selection).is_ok_and(|inner| {
                        inner
                            .iter()
                            .any(|field| field.name == "hasNextPage" && field.alias.is_none())
                    })
                });
            if !has_next_page {
                problems.push(
                    "The customPage document must select pageInfo { hasNextPage } inside Page."
                        .to_owned(),
                );
            }
        }
        _ => problems
            .push("The customPage document must select exactly one root field: Page.".to_owned()),
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyze(document: &str) -> Result<CustomDocument, Vec<String>> {
        analyze_custom_document(document)
    }

    /// The root keys of a document that must be valid; shared by the submodules' tests.
    pub(super) fn keys(document: &str) -> Vec<String> {
        analyze(document).expect("a valid document").root_keys
    }

    #[test]
    fn single_root_query() {
        let doc =
            analyze("query ($id: Int) { Media(id: $id) { id title { romaji } } }").expect("valid");
        assert_eq!(
            doc,
            CustomDocument {
                is_mutation: false,
                root_keys: vec!["Media".to_owned()],
                opens_with_operation: true,
                root_fields: Some(vec!["Media".to_owned()]),
            }
        );
        assert_eq!(keys("{ Viewer { id } }"), ["Viewer"]);
    }

    #[test]
    fn aliases_and_multiple_roots() {
        assert_eq!(
            keys("query Two { a: Media(id: 1) { id } b: Media(id: 2) { id } }"),
            ["a", "b"]
        );
        assert_eq!(
            keys("{ Viewer { id } __typename Viewer { name } }"),
            ["Viewer", "__typename"]
        );
    }

    #[test]
    fn mutations_are_recognised() {
        let doc = analyze(
            "mutation Save($id: Int) { SaveMediaListEntry(mediaId: $id, status: CURRENT) { id } }",
        )
        .expect("valid");
        assert!(doc.is_mutation);
        assert_eq!(doc.root_keys, ["SaveMediaListEntry"]);
    }

    #[test]
    fn custom_page_documents() {
        let good = "query ($page: Int, $perPage: Int!, $search: String) {
            Page(page: $page, perPage: $perPage) { pageInfo { hasNextPage total } media(search: $search) { id } }
        }";
        assert_eq!(check_custom_page_document(good), Ok(()));
        let via_fragment = "fragment Info on Page { pageInfo { hasNextPage } }
            query ($page: Int, $perPage: Int) { Page(page: $page, perPage: $perPage) { ...Info users { id } } }";
        assert_eq!(check_custom_page_document(via_fragment), Ok(()));
    }

    #[test]
    fn custom_page_documents_report_every_missing_piece() {
        assert_eq!(
            check_custom_page_document("mutation ($page: String) { Page { pageInfo { total } } }"),
            Err(vec![
                "The customPage document must be a query.".to_owned(),
                "The customPage document must declare $page as Int.".to_owned(),
                "The customPage document must declare $perPage as Int.".to_owned(),
                "The customPage document must select pageInfo { hasNextPage } inside Page."
                    .to_owned(),
            ])
        );
        let two_roots =
            "query ($page: Int, $perPage: Int) { Page { pageInfo { hasNextPage } } Viewer { id } }";
        assert_eq!(
            check_custom_page_document(two_roots),
            Err(vec![
                "The customPage document must select exactly one root field: Page.".to_owned()
            ])
        );
        let aliased = "query ($page: Int, $perPage: Int) { p: Page { pageInfo { hasNextPage } } }";
        assert_eq!(
            check_custom_page_document(aliased),
            Err(vec![
                "The customPage document must select exactly one root field: Page.".to_owned()
            ])
        );
        let list_page =
            "query ($page: [Int], $perPage: Int) { Page { pageInfo { hasNext: hasNextPage } } }";
        assert_eq!(
            check_custom_page_document(list_page),
            Err(vec![
                "The customPage document must declare $page as Int.".to_owned(),
                "The customPage document must select pageInfo { hasNextPage } inside Page."
                    .to_owned(),
            ])
        );
        assert_eq!(
            check_custom_page_document("{"),
            Err(vec![
                "The GraphQL document has unbalanced braces, brackets or parentheses.".to_owned()
            ])
        );
    }
}
