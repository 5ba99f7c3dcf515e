//! The `fields` option: recomposing an operation's selection from dot-paths.

use std::borrow::Cow;

use super::catalog::{catalog, operation, Catalog, HoistedBinding, Operation, OutputType};

/// Paths longer than this are refused. Far beyond anything AniList answers, it only keeps a
/// hostile path from exhausting the stack of the recursive walk.
const MAX_PATH_SEGMENTS: usize = 64;

/// The document to send: the default one, or with `fields` the selection recomposed to the
/// requested dot-paths (`"title.romaji"`, `"tags.name"`; paths with the same head are merged,
/// any depth up to 64 segments) plus the operation's always-selected keys. A path ending on an
/// object field selects that object broadly, as the default documents do. Unknown paths, paths
/// through scalars and an empty list are errors; every bad path is reported.
pub fn document_for(
    op: &Operation,
    fields: Option<&[String]>,
) -> Result<Cow<'static, str>, Vec<String>> {
    let Some(fields) = fields else {
        // Every operation comes from the process-wide catalog, so its default document can be
        // lent out without copying.
        return Ok(match operation(op.key()) {
            Some(catalogued) => Cow::Borrowed(catalogued.default_document()),
            None => Cow::Owned(op.default_document().to_owned()),
        });
    };
    if !op.accepts_fields() {
        return Err(vec![format!(
            "The {} operation does not accept fields.",
            op.key()
        )]);
    }
    if fields.is_empty() {
        return Err(vec![
            "The fields option must name at least one field.".to_owned()
        ]);
    }
    let catalog = catalog();
    let mut root = SelectionNode::new(op.item_type());
    let mut problems = Vec::new();
    for key in &op.always_selected {
        if let Err(problem) = root.insert(catalog, key, key) {
            problems.push(problem);
        }
    }
    for path in fields {
        if path.split('.').count() > MAX_PATH_SEGMENTS {
            problems.push(format!(
                "Field path is deeper than {MAX_PATH_SEGMENTS} levels: {path}"
            ));
        } else if let Err(problem) = root.insert(catalog, path, path) {
            problems.push(problem);
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut used_hoisted = Vec::new();
    let selection = root.render_children(catalog, op, &mut used_hoisted);
    Ok(Cow::Owned(op.assemble_document(&selection, &used_hoisted)))
}

/// A requested field and what was asked below it, in the order of first mention.
struct SelectionNode<'a> {
    type_name: &'a str,
    /// The parent's type and the field this node was selected as; `None` for the item.
    reached_through: Option<(&'a str, &'a str)>,
    /// The hoisted variables the field can take as arguments.
    hoisted: &'a [HoistedBinding],
    /// The path ended here: select the object broadly.
    broad: bool,
    children: Vec<(&'a str, SelectionNode<'a>)>,
}

impl<'a> SelectionNode<'a> {
    fn new(type_name: &'a str) -> Self {
        SelectionNode {
            type_name,
            reached_through: None,
            hoisted: &[],
            broad: false,
            children: Vec::new(),
        }
    }

    fn insert(&mut self, catalog: &'a Catalog, remaining: &str, path: &str) -> Result<(), String> {
        let (segment, rest) = match remaining.split_once('.') {
            Some((segment, rest)) => (segment, Some(rest)),
            None => (remaining, None),
        };
        if segment.is_empty() {
            return Err(format!("Invalid field path: {path:?}"));
        }
        let consumed = &path[..path.len() - remaining.len() + segment.len()];
        let fields = match catalog.output_types.get(self.type_name) {
            Some(OutputType::Object { fields, .. }) => fields,
            Some(OutputType::Union { .. }) => {
                return Err(format!(
                    "Cannot narrow inside the union field: {}",
                    parent_of(consumed)
                ))
            }
            None => {
                return Err(format!(
                    "Field {} has no subfields: {path}",
                    parent_of(consumed)
                ))
            }
        };
        let Some((name, field)) = fields.get_key_value(segment) else {
            return Err(format!("Unknown field: {consumed}"));
        };
        let position = match self
            .children
            .iter()
            .position(|(existing, _)| *existing == name.as_str())
        {
            Some(position) => position,
            None => {
                let mut child = SelectionNode::new(field.type_ref.named());
                child.reached_through = Some((self.type_name, name.as_str()));
                child.hoisted = &field.hoisted;
                self.children.push((name.as_str(), child));
                self.children.len() - 1
            }
        };
        let child = &mut self.children[position].1;
        match rest {
            Some(rest) => child.insert(catalog, rest, path),
            None => {
                child.broad = catalog.output_types.contains_key(child.type_name);
                Ok(())
            }
        }
    }

    fn render_children(
        &self,
        catalog: &'a Catalog,
        op: &Operation,
        used_hoisted: &mut Vec<&'a str>,
    ) -> String {
        let mut parts: Vec<String> = Vec::new();
        if self.broad {
            if let Some(
                OutputType::Object {
                    broad_selection,
                    broad_hoisted,
                    ..
                }
                | OutputType::Union {
                    broad_selection,
                    broad_hoisted,
                },
            ) = catalog.output_types.get(self.type_name)
            {
                parts.push(broad_selection.clone());
                for name in broad_hoisted {
                    note_hoisted(used_hoisted, name);
                }
            }
        }
        for (name, child) in &self.children {
            let arguments: Vec<String> = child
                .hoisted
                .iter()
                .filter(|binding| {
                    binding.applies(self.reached_through)
                        && op.variable(&binding.variable).is_some()
                })
                .map(|binding| {
                    note_hoisted(used_hoisted, &binding.variable);
                    format!("{}: ${}", binding.argument, binding.variable)
                })
                .collect();
            let argument = if arguments.is_empty() {
                String::new()
            } else {
                format!("({})", arguments.join(", "))
            };
            if child.broad || !child.children.is_empty() {
                parts.push(format!(
                    "{name}{argument} {{ {} }}",
                    child.render_children(catalog, op, used_hoisted)
                ));
            } else {
                parts.push(format!("{name}{argument}"));
            }
        }
        parts.join(" ")
    }
}

fn note_hoisted<'a>(used: &mut Vec<&'a str>, name: &'a str) {
    if !used.contains(&name) {
        used.push(name);
    }
}

fn parent_of(path: &str) -> &str {
    path.rsplit_once('.').map_or(path, |(parent, _)| parent)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn narrowed(key: &str, fields: &[&str]) -> Result<String, Vec<String>> {
        let fields: Vec<String> = fields.iter().map(|field| (*field).to_owned()).collect();
        document_for(operation(key).expect(key), Some(&fields)).map(Cow::into_owned)
    }

    /// The item selection of a narrowed document: what sits inside the root (or items) field.
    fn item_selection(document: &str, opening_end: &str) -> String {
        let start = document.find(opening_end).expect("the opening") + opening_end.len();
        let closing = if document.contains(" Page(") {
            " } } }"
        } else {
            " } }"
        };
        let inner = document[start..]
            .strip_prefix(" { ")
            .expect("a selection set");
        inner
            .strip_suffix(closing)
            .expect("the closing braces")
            .to_owned()
    }

    #[test]
    fn without_fields_the_default_document_is_lent_out() {
        let op = operation("query.media").expect("query.media");
        let document = document_for(op, None).expect("default document");
        assert!(matches!(document, Cow::Borrowed(_)));
        assert_eq!(document, op.default_document());
    }

    #[test]
    fn paths_are_merged_by_head_after_the_always_selected_keys() {
        let document = narrowed(
            "query.media",
            &["title.romaji", "tags.name", "title.english", "idMal", "id"],
        )
        .expect("valid");
        assert_eq!(
            item_selection(&document, "sort: $sort)"),
            "id idMal title { romaji english } tags { name }"
        );
        assert!(!document.contains("$asHtml"), "{document}");
    }

    #[test]
    fn depth_is_unlimited() {
        let document = narrowed(
            "query.character",
            &["media.edges.node.staff.edges.node.name.full"],
        )
        .expect("valid");
        assert_eq!(
            item_selection(&document, "sort: $sort)"),
            "id media(sort: $mediaSort, type: $mediaType, onList: $mediaOnList, page: $mediaPage, perPage: $mediaPerPage) { edges { node { staff(sort: $staffSort, page: $staffPage, perPage: $staffPerPage) { edges { node { name { full } } } } } } }"
        );
    }

    #[test]
    fn hoisted_arguments_are_bound_and_declared_only_when_selected() {
        let document = narrowed(
            "query.mediaListCollection",
            &["lists.entries.customLists", "user.about"],
        )
        .expect("valid");
        assert!(
            document.contains("customLists(asArray: $asArray)"),
            "{document}"
        );
        assert!(document.contains("about(asHtml: $asHtml)"), "{document}");
        assert!(
            document.contains("$sort: [MediaListSort], $asArray: Boolean, $asHtml: Boolean)"),
            "{document}"
        );
        let without = narrowed("query.mediaListCollection", &["lists.name"]).expect("valid");
        assert!(!without.contains("$as"), "{without}");
        assert_eq!(item_selection(&without, "sort: $sort)"), "lists { name }");
    }

    #[test]
    fn statistics_breakdowns_bind_the_limit_and_sort_of_their_side() {
        let document = narrowed(
            "query.user",
            &["statistics.anime.genres.genre", "statistics.manga.genres"],
        )
        .expect("valid");
        assert_eq!(
            item_selection(&document, "sort: $sort)"),
            "id statistics { anime { genres(limit: $animeStatLimit, sort: $animeStatSort) { genre } } \
             manga { genres(limit: $mangaStatLimit, sort: $mangaStatSort) { count meanScore minutesWatched chaptersRead mediaIds genre } } }"
        );
        assert!(
            document.contains("$sort: [UserSort], $animeStatLimit: Int, $animeStatSort: [UserStatisticsSort], $mangaStatLimit: Int, $mangaStatSort: [UserStatisticsSort])"),
            "{document}"
        );
        // Page items bind them the same way; totals alone need no variable.
        let page =
            narrowed("query.page.users", &["statistics.anime.formats.format"]).expect("valid");
        assert!(
            page.contains("formats(limit: $animeStatLimit, sort: $animeStatSort) { format }")
                && !page.contains("$mangaStat"),
            "{page}"
        );
        let totals = narrowed("query.user", &["statistics"]).expect("valid");
        assert!(!totals.contains("Stat"), "{totals}");
    }

    #[test]
    fn scores_take_the_score_format() {
        let document =
            narrowed("query.mediaListCollection", &["lists.entries.score"]).expect("valid");
        assert_eq!(
            item_selection(&document, "sort: $sort)"),
            "lists { entries { score(format: $scoreFormat) } }"
        );
        assert!(
            document.contains("$sort: [MediaListSort], $scoreFormat: ScoreFormat)"),
            "{document}"
        );
        // updateUser's own `scoreFormat` argument is the variable bound there: declared once.
        let update = narrowed(
            "mutation.updateUser",
            &["favourites.anime.nodes.mediaListEntry.score"],
        )
        .expect("valid");
        assert!(
            update.contains("mediaListEntry { score(format: $scoreFormat) }"),
            "{update}"
        );
        assert_eq!(
            update.matches("$scoreFormat: ScoreFormat").count(),
            1,
            "{update}"
        );
    }

    #[test]
    fn bare_object_paths_select_the_object_broadly() {
        let document = narrowed("query.page.followers", &["avatar"]).expect("valid");
        assert_eq!(
            item_selection(&document, "sort: $sort)"),
            "id avatar { large medium }"
        );
        let media = narrowed("mutation.saveMediaListEntry", &["media"]).expect("valid");
        assert!(
            media.contains("media { id idMal title { romaji english native userPreferred } type"),
            "{media}"
        );
        assert!(
            media.contains("description(asHtml: $asHtml)") && media.contains("$asHtml: Boolean)"),
            "{media}"
        );
    }

    #[test]
    fn page_operations_keep_page_info_and_the_items_field() {
        let document = narrowed("query.page.medias", &["title.romaji"]).expect("valid");
        assert!(document.contains("Page(page: $page, perPage: $perPage) { pageInfo { total perPage currentPage lastPage hasNextPage } media("));
        assert!(
            document.ends_with("sort: $sort) { id idMal title { romaji } } } }"),
            "{document}"
        );
    }

    #[test]
    fn operations_forcing_nothing_select_only_what_is_asked() {
        let trend = narrowed("query.mediaTrend", &["trending"]).expect("valid");
        assert!(trend.ends_with("sort: $sort) { trending } }"), "{trend}");
        let statistics = narrowed("query.siteStatistics", &["anime.nodes.count"]).expect("valid");
        assert_eq!(
            statistics,
            "query SiteStatistics($animePage: Int, $animePerPage: Int, $animeSort: [SiteTrendSort]) { SiteStatistics { anime(sort: $animeSort, page: $animePage, perPage: $animePerPage) { nodes { count } } } }"
        );
    }

    #[test]
    fn every_bad_path_is_reported() {
        assert_eq!(
            narrowed(
                "query.media",
                &[
                    "title.nope",
                    "nope",
                    "id.value",
                    "title.romaji",
                    "title..romaji",
                    "",
                    "title.nope.deeper"
                ]
            ),
            Err(vec![
                "Unknown field: title.nope".to_owned(),
                "Unknown field: nope".to_owned(),
                "Field id has no subfields: id.value".to_owned(),
                "Invalid field path: \"title..romaji\"".to_owned(),
                "Invalid field path: \"\"".to_owned(),
                "Unknown field: title.nope".to_owned(),
            ])
        );
    }

    #[test]
    fn absurdly_long_paths_are_refused() {
        let long = vec!["media.nodes.characters.nodes"; 20].join(".");
        let problems = narrowed("query.character", &[&long, "nope"]).expect_err("too deep");
        assert_eq!(
            problems,
            [
                format!("Field path is deeper than 64 levels: {long}"),
                "Unknown field: nope".to_owned()
            ]
        );
        let deep_but_fine = vec!["media.nodes.characters.nodes"; 15].join(".") + ".id";
        assert!(narrowed("query.character", &[&deep_but_fine]).is_ok());
    }

    #[test]
    fn empty_lists_and_operations_without_fields_are_rejected() {
        assert_eq!(
            narrowed("query.media", &[]),
            Err(vec![
                "The fields option must name at least one field.".to_owned()
            ])
        );
        assert_eq!(
            narrowed("query.viewer", &["id"]),
            Err(vec![
                "The query.viewer operation does not accept fields.".to_owned()
            ])
        );
    }

    #[test]
    fn every_broad_selection_only_uses_variables_its_operations_declare() {
        let catalog = catalog();
        for op in operations_accepting_fields() {
            let mut pending = vec![op.item_type()];
            let mut seen = std::collections::HashSet::new();
            while let Some(type_name) = pending.pop() {
                if !seen.insert(type_name) {
                    continue;
                }
                let (broad_hoisted, fields) = match catalog.output_types.get(type_name) {
                    Some(OutputType::Object {
                        broad_hoisted,
                        fields,
                        ..
                    }) => (broad_hoisted, Some(fields)),
                    Some(OutputType::Union { broad_hoisted, .. }) => (broad_hoisted, None),
                    None => continue,
                };
                for name in broad_hoisted {
                    assert!(
                        op.variable(name).is_some(),
                        "{} reaches {type_name}, whose broad selection uses ${name}",
                        op.key()
                    );
                }
                pending.extend(
                    fields
                        .into_iter()
                        .flat_map(|fields| fields.values().map(|field| field.type_ref.named())),
                );
            }
        }
    }

    fn operations_accepting_fields() -> impl Iterator<Item = &'static Operation> {
        super::super::operations().filter(|op| op.accepts_fields())
    }

    #[test]
    fn narrowing_samples_match_the_documents_validated_against_the_schema() {
        // The vitest suite validates these documents with graphql-js; this test proves they are
        // exactly what `document_for` produces.
        let samples: serde_json::Value =
            serde_json::from_str(include_str!("narrowing-samples.json"))
                .expect("narrowing-samples.json");
        let samples = samples.as_array().expect("an array of samples");
        assert!(samples.len() >= 5);
        for sample in samples {
            let key = sample["operation"].as_str().expect("operation");
            let fields: Vec<&str> = sample["fields"]
                .as_array()
                .expect("fields")
                .iter()
                .filter_map(|field| field.as_str())
                .collect();
            assert_eq!(
                narrowed(key, &fields).as_deref(),
                Ok(sample["document"].as_str().expect("document")),
                "{key} {fields:?}"
            );
        }
    }
}
