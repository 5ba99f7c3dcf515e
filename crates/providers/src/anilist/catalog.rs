//! Loading `catalog.json` (once, on first use) and the [`Operation`] view over it.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::OnceLock;

use serde::Deserialize;

/// Written by `scripts/generate-anilist.mjs`; `--check` keeps it in step with the schema.
const CATALOG_JSON: &str = include_str!("catalog.json");

/// Which group of `aniLink.anilist` an operation belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OperationKind {
    /// `anilist.query.*`: one root field of `Query`.
    Query,
    /// `anilist.query.page.*`: one items field inside `Query.Page`.
    Page,
    /// `anilist.mutation.*`.
    Mutation,
}

/// One typed AniList operation, e.g. `query.media`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    key: String,
    kind: OperationKind,
    root_field: String,
    item_type: String,
    operation_name: String,
    requires_auth: bool,
    accepts_fields: bool,
    pub(super) always_selected: Vec<String>,
    pub(super) variables: Vec<VariableDefinition>,
    /// Where the non-null variables are in `variables`, found once at load: every call checks
    /// them, and `query.media` has 122 variables (about 100 cache lines to walk per call).
    #[serde(skip)]
    pub(super) non_null_variables: Vec<usize>,
    /// No variable is non-null and no requirement rule applies.
    variables_optional: bool,
    pub(super) requirements: Vec<Requirement>,
    /// The document text between the header and the item's selection set, e.g. `Media(id: $id)`.
    opening: String,
    /// What closes `opening` after the item's selection set (` }` for page operations).
    closing: String,
    default_document: String,
}

impl Operation {
    /// The catalog key, e.g. `"query.media"` or `"query.page.medias"`.
    pub fn key(&self) -> &str {
        &self.key
    }

    pub fn kind(&self) -> OperationKind {
        self.kind
    }

    /// The GraphQL root field: `"Media"`, `"Page"`, `"SaveMediaListEntry"`.
    pub fn root_field(&self) -> &str {
        &self.root_field
    }

    /// True when AniList only answers this operation for an authenticated caller.
    pub fn requires_auth(&self) -> bool {
        self.requires_auth
    }

    /// True when the operation takes the `fields` option.
    pub fn accepts_fields(&self) -> bool {
        self.accepts_fields
    }

    /// True when every variable is optional, so the operation accepts `variables?`.
    pub fn variables_optional(&self) -> bool {
        self.variables_optional
    }

    /// The document sent when no `fields` are given.
    pub fn default_document(&self) -> &str {
        &self.default_document
    }

    pub(super) fn item_type(&self) -> &str {
        &self.item_type
    }

    pub(super) fn variable(&self, name: &str) -> Option<&VariableDefinition> {
        self.variables.iter().find(|variable| variable.name == name)
    }

    /// Wraps an item selection into a whole document, declaring the hoisted variables it uses.
    pub(super) fn assemble_document(&self, selection: &str, used_hoisted: &[&str]) -> String {
        let declarations: Vec<String> = self
            .variables
            .iter()
            .filter(|variable| !variable.hoisted || used_hoisted.contains(&variable.name.as_str()))
            .map(|variable| format!("${}: {}", variable.name, variable.type_ref))
            .collect();
        let keyword = match self.kind {
            OperationKind::Mutation => "mutation",
            OperationKind::Query | OperationKind::Page => "query",
        };
        let header = if declarations.is_empty() {
            format!("{keyword} {}", self.operation_name)
        } else {
            format!(
                "{keyword} {}({})",
                self.operation_name,
                declarations.join(", ")
            )
        };
        format!(
            "{header} {{ {} {{ {selection} }}{} }}",
            self.opening, self.closing
        )
    }
}

/// A variable the operation declares.
#[derive(Debug, Deserialize)]
pub(super) struct VariableDefinition {
    pub(super) name: String,
    #[serde(rename = "type")]
    pub(super) type_ref: TypeRef,
    /// Bound to optional arguments of selected fields (`asHtml`) rather than to the root field.
    #[serde(default)]
    pub(super) hoisted: bool,
}

/// A local rule beyond the schema types: at least one of `any_of` must be given (non-null).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Requirement {
    pub(super) any_of: Vec<String>,
    pub(super) message: String,
}

/// A GraphQL type reference such as `[MediaSort]` or `Int!`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub(super) enum TypeRef {
    Named(String),
    List(Box<TypeRef>),
    NonNull(Box<TypeRef>),
}

impl TypeRef {
    pub(super) fn is_non_null(&self) -> bool {
        matches!(self, TypeRef::NonNull(_))
    }

    /// The type name once list and non-null wrappers are removed.
    pub(super) fn named(&self) -> &str {
        match self {
            TypeRef::Named(name) => name,
            TypeRef::List(inner) | TypeRef::NonNull(inner) => inner.named(),
        }
    }

    fn parse(text: &str) -> Option<TypeRef> {
        if let Some(inner) = text.strip_suffix('!') {
            return match TypeRef::parse(inner)? {
                TypeRef::NonNull(_) => None,
                parsed => Some(TypeRef::NonNull(Box::new(parsed))),
            };
        }
        if let Some(inner) = text.strip_prefix('[') {
            return Some(TypeRef::List(Box::new(TypeRef::parse(
                inner.strip_suffix(']')?,
            )?)));
        }
        let is_name =
            !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        is_name.then(|| TypeRef::Named(text.to_owned()))
    }
}

impl TryFrom<String> for TypeRef {
    type Error = String;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        TypeRef::parse(&text).ok_or_else(|| format!("invalid GraphQL type reference {text:?}"))
    }
}

impl fmt::Display for TypeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypeRef::Named(name) => f.write_str(name),
            TypeRef::List(inner) => write!(f, "[{inner}]"),
            TypeRef::NonNull(inner) => write!(f, "{inner}!"),
        }
    }
}

/// How a scalar variable is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum ScalarCheck {
    /// An integer within the 32-bit range GraphQL's `Int` allows.
    Int,
    Float,
    String,
    Boolean,
    /// A string or an integer.
    Id,
    /// Any JSON value (`Json`).
    Any,
}

/// The types variables can have.
#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "SCREAMING_SNAKE_CASE")]
pub(super) enum InputType {
    Scalar { check: ScalarCheck },
    Enum { values: Vec<String> },
    InputObject { fields: BTreeMap<String, TypeRef> },
}

/// The object and union types the `fields` option walks through.
#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "SCREAMING_SNAKE_CASE")]
pub(super) enum OutputType {
    #[serde(rename_all = "camelCase")]
    Object {
        fields: HashMap<String, OutputField>,
        broad_selection: String,
        broad_hoisted: Vec<String>,
    },
    #[serde(rename_all = "camelCase")]
    Union {
        broad_selection: String,
        broad_hoisted: Vec<String>,
    },
}

/// A field of an object type, as `fields` sees it.
#[derive(Debug, Deserialize)]
pub(super) struct OutputField {
    #[serde(rename = "type")]
    pub(super) type_ref: TypeRef,
    /// The hoisted variables this field takes as arguments (`asHtml`, `limit: $animeStatLimit`).
    #[serde(default)]
    pub(super) hoisted: Vec<HoistedBinding>,
}

/// An argument of a nested field bound to one of the operation's hoisted variables.
#[derive(Debug, Deserialize)]
pub(super) struct HoistedBinding {
    pub(super) argument: String,
    pub(super) variable: String,
    /// Only when the field's owner was reached through this `Type.field` (the anime or manga
    /// side of `UserStatistics`); bound wherever the field is selected otherwise.
    via: Option<String>,
}

impl HoistedBinding {
    /// Whether the binding applies to a field whose owner was reached through `reached_through`
    /// (the parent's type and field name; `None` for the operation's item).
    pub(super) fn applies(&self, reached_through: Option<(&str, &str)>) -> bool {
        match &self.via {
            None => true,
            Some(via) => via.split_once('.') == reached_through,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Catalog {
    operations: Vec<Operation>,
    pub(super) input_types: HashMap<String, InputType>,
    pub(super) output_types: HashMap<String, OutputType>,
    #[serde(skip)]
    index: HashMap<String, usize>,
}

/// The parsed catalog. A malformed embedded catalog is a build defect caught by the unit tests
/// (the JSON is compiled in); should one ever ship, the catalog is empty and every look-up
/// misses instead of panicking inside a JavaScript call.
pub(super) fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| parse_catalog(CATALOG_JSON).unwrap_or_else(|_| Catalog::empty()))
}

fn parse_catalog(json: &str) -> Result<Catalog, serde_json::Error> {
    let mut catalog: Catalog = serde_json::from_str(json)?;
    for operation in &mut catalog.operations {
        operation.non_null_variables = (operation.variables.iter().enumerate())
            .filter(|(_, variable)| variable.type_ref.is_non_null())
            .map(|(position, _)| position)
            .collect();
    }
    catalog.index = catalog
        .operations
        .iter()
        .enumerate()
        .map(|(position, operation)| (operation.key.clone(), position))
        .collect();
    Ok(catalog)
}

impl Catalog {
    fn empty() -> Catalog {
        Catalog {
            operations: Vec::new(),
            input_types: HashMap::new(),
            output_types: HashMap::new(),
            index: HashMap::new(),
        }
    }
}

/// The operation with this catalog key (`"query.media"`, `"mutation.saveMediaListEntry"`).
pub fn operation(key: &str) -> Option<&'static Operation> {
    let catalog = catalog();
    catalog
        .index
        .get(key)
        .and_then(|&position| catalog.operations.get(position))
}

/// Every operation, in catalog order: queries, page queries, then mutations.
pub fn operations() -> impl Iterator<Item = &'static Operation> {
    catalog().operations.iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUERY_KEYS: [&str; 25] = [
        "user",
        "media",
        "mediaTrend",
        "airingSchedule",
        "character",
        "staff",
        "mediaList",
        "mediaListCollection",
        "genreCollection",
        "mediaTagCollection",
        "viewer",
        "notification",
        "studio",
        "review",
        "activity",
        "activityReply",
        "following",
        "follower",
        "thread",
        "threadComment",
        "recommendation",
        "markdown",
        "aniChartUser",
        "siteStatistics",
        "externalLinkSourceCollection",
    ];
    const PAGE_KEYS: [&str; 18] = [
        "users",
        "medias",
        "characters",
        "staffs",
        "studios",
        "mediaLists",
        "airingSchedules",
        "mediaTrends",
        "notifications",
        "followers",
        "following",
        "activities",
        "activityReplies",
        "threads",
        "threadComments",
        "reviews",
        "recommendations",
        "likes",
    ];
    const MUTATION_KEYS: [&str; 29] = [
        "updateUser",
        "saveMediaListEntry",
        "updateMediaListEntries",
        "deleteMediaListEntry",
        "deleteCustomList",
        "saveTextActivity",
        "saveMessageActivity",
        "saveListActivity",
        "deleteActivity",
        "toggleActivityPin",
        "toggleActivitySubscription",
        "saveActivityReply",
        "deleteActivityReply",
        "toggleLike",
        "toggleLikeV2",
        "toggleFollow",
        "toggleFavourite",
        "updateFavouriteOrder",
        "saveReview",
        "rateReview",
        "deleteReview",
        "saveRecommendation",
        "saveThread",
        "deleteThread",
        "toggleThreadSubscription",
        "saveThreadComment",
        "deleteThreadComment",
        "updateAniChartSettings",
        "updateAniChartHighlights",
    ];

    #[test]
    fn embedded_catalog_parses() {
        parse_catalog(CATALOG_JSON).expect("catalog.json must match the Rust model");
    }

    #[test]
    fn catalog_lists_the_operations_of_the_original_in_order() {
        let expected: Vec<String> = QUERY_KEYS
            .iter()
            .map(|name| format!("query.{name}"))
            .chain(PAGE_KEYS.iter().map(|name| format!("query.page.{name}")))
            .chain(MUTATION_KEYS.iter().map(|name| format!("mutation.{name}")))
            .collect();
        let actual: Vec<&str> = operations().map(Operation::key).collect();
        assert_eq!(actual, expected);
        assert_eq!(
            operations()
                .filter(|op| op.kind() == OperationKind::Query)
                .count(),
            25
        );
        assert_eq!(
            operations()
                .filter(|op| op.kind() == OperationKind::Page)
                .count(),
            18
        );
        assert_eq!(
            operations()
                .filter(|op| op.kind() == OperationKind::Mutation)
                .count(),
            29
        );
    }

    #[test]
    fn look_up_by_key() {
        let media = operation("query.media").expect("query.media");
        assert_eq!(media.root_field(), "Media");
        assert_eq!(media.kind(), OperationKind::Query);
        assert!(media.accepts_fields());
        assert!(!media.requires_auth());
        assert!(media
            .default_document()
            .starts_with("query Media($id: Int, $idMal: Int,"));

        let medias = operation("query.page.medias").expect("query.page.medias");
        assert_eq!(medias.root_field(), "Page");
        assert!(medias
            .default_document()
            .contains("Page(page: $page, perPage: $perPage) { pageInfo {"));

        let save = operation("mutation.saveMediaListEntry").expect("mutation.saveMediaListEntry");
        assert_eq!(save.root_field(), "SaveMediaListEntry");
        assert!(save
            .default_document()
            .starts_with("mutation SaveMediaListEntry("));
        assert!(operation("query.like").is_none());
        assert!(operation("media").is_none());
    }

    #[test]
    fn auth_rules() {
        let requiring: Vec<&str> = operations()
            .filter(|op| op.requires_auth() && op.kind() != OperationKind::Mutation)
            .map(Operation::key)
            .collect();
        assert_eq!(
            requiring,
            [
                "query.viewer",
                "query.notification",
                "query.markdown",
                "query.page.notifications"
            ]
        );
        assert!(operations()
            .filter(|op| op.kind() == OperationKind::Mutation)
            .all(Operation::requires_auth));
    }

    #[test]
    fn fields_acceptance_follows_the_registry() {
        let refusing: Vec<&str> = operations()
            .filter(|op| !op.accepts_fields())
            .map(Operation::key)
            .collect();
        assert_eq!(
            refusing,
            [
                "query.genreCollection",
                "query.mediaTagCollection",
                "query.viewer",
                "query.notification",
                "query.activity",
                "query.activityReply",
                "query.following",
                "query.follower",
                "query.markdown",
                "query.aniChartUser",
                "query.externalLinkSourceCollection",
                "query.page.notifications",
                "query.page.activities",
                "mutation.toggleActivityPin",
                "mutation.toggleActivitySubscription",
                "mutation.toggleLikeV2",
                "mutation.updateAniChartSettings",
                "mutation.updateAniChartHighlights",
            ]
        );
    }

    #[test]
    fn optional_variables() {
        let optional = |key: &str| operation(key).map(Operation::variables_optional);
        assert_eq!(optional("query.viewer"), Some(true));
        assert_eq!(optional("query.genreCollection"), Some(true));
        assert_eq!(optional("query.externalLinkSourceCollection"), Some(true));
        assert_eq!(optional("query.page.medias"), Some(true));
        // A requirement rule or a non-null argument makes the variables object mandatory.
        assert_eq!(optional("query.media"), Some(false));
        assert_eq!(optional("query.mediaListCollection"), Some(false));
        assert_eq!(optional("query.follower"), Some(false));
        assert_eq!(optional("query.page.followers"), Some(false));
        assert_eq!(optional("query.markdown"), Some(false));
    }

    #[test]
    fn hoisted_variables_of_api_md() {
        let hoisted = |key: &str| -> Vec<String> {
            operation(key)
                .expect(key)
                .variables
                .iter()
                .filter(|variable| variable.hoisted)
                .map(|variable| format!("{}: {}", variable.name, variable.type_ref))
                .collect()
        };
        let user = hoisted("query.user");
        for expected in [
            "animeStatLimit: Int",
            "animeStatSort: [UserStatisticsSort]",
            "asArray: Boolean",
            "asHtml: Boolean",
            "mangaStatLimit: Int",
            "mangaStatSort: [UserStatisticsSort]",
            "scoreFormat: ScoreFormat",
            // Connection arguments, named after their field (Favourites.anime, Media.characters).
            "animePage: Int",
            "charactersSort: [CharacterSort]",
        ] {
            assert!(
                user.contains(&expected.to_owned()),
                "{expected} in {user:?}"
            );
        }
        // The original's names for the connections of a character, a staff member, a studio.
        let character = hoisted("query.character");
        for expected in [
            "mediaSort: [MediaSort]",
            "mediaOnList: Boolean",
            "mediaPage: Int",
            "mediaPerPage: Int",
        ] {
            assert!(
                character.contains(&expected.to_owned()),
                "{expected} in {character:?}"
            );
        }
        let staff = hoisted("query.staff");
        for expected in [
            "staffMediaType: MediaType",
            "charactersPage: Int",
            "characterMediaOnList: Boolean",
        ] {
            assert!(
                staff.contains(&expected.to_owned()),
                "{expected} in {staff:?}"
            );
        }
        assert!(hoisted("query.studio").contains(&"mediaIsMain: Boolean".to_owned()));
        // Per operation, a name keeps the type of the fields it reaches: SiteTrendSort here.
        assert!(
            hoisted("query.siteStatistics").contains(&"charactersSort: [SiteTrendSort]".to_owned())
        );
        assert!(
            hoisted("query.mediaListCollection").contains(&"scoreFormat: ScoreFormat".to_owned())
        );
        // updateUser's own `scoreFormat` argument doubles as the hoisted one.
        let update = operation("mutation.updateUser").expect("mutation.updateUser");
        let score_formats: Vec<bool> = update
            .variables
            .iter()
            .filter(|variable| variable.name == "scoreFormat")
            .map(|variable| variable.hoisted)
            .collect();
        assert_eq!(score_formats, [false]);
        assert!(hoisted("query.genreCollection").is_empty());
    }

    #[test]
    fn single_users_select_the_statistics_breakdowns_by_default() {
        for key in [
            "query.user",
            "query.viewer",
            "query.follower",
            "mutation.toggleFollow",
        ] {
            let document = operation(key).expect(key).default_document();
            for side in ["anime", "manga"] {
                assert!(
                    document.contains(&format!(
                        "genres(limit: ${side}StatLimit, sort: ${side}StatSort) {{ count meanScore minutesWatched chaptersRead mediaIds genre }}"
                    )),
                    "{key}: {document}"
                );
                assert!(
                    document.contains(&format!("${side}StatLimit: Int")),
                    "{key}"
                );
            }
            // Breakdowns naming a record (tags, staff, voice actors, studios) are left to `fields`.
            assert!(!document.contains("tags(limit:"), "{key}");
        }
        let page = operation("query.page.users")
            .expect("query.page.users")
            .default_document();
        assert!(!page.contains("Stat"), "{page}");
    }

    #[test]
    fn reassembling_the_default_selection_gives_the_default_document() {
        // Guards the agreement between the generator's and this module's document assembly,
        // which `fields` narrowing relies on.
        let raw: serde_json::Value = serde_json::from_str(CATALOG_JSON).expect("catalog JSON");
        let entries = raw["operations"].as_array().expect("operations");
        for (entry, op) in entries.iter().zip(operations()) {
            let Some(selection) = entry["defaultSelection"].as_str() else {
                continue;
            };
            let used: Vec<&str> = op
                .variables
                .iter()
                .filter(|variable| {
                    variable.hoisted && selection.contains(&format!("${}", variable.name))
                })
                .map(|variable| variable.name.as_str())
                .collect();
            assert_eq!(
                op.assemble_document(selection, &used),
                op.default_document(),
                "{}",
                op.key()
            );
        }
    }

    #[test]
    fn every_referenced_type_is_in_the_catalog() {
        let catalog = catalog();
        for op in operations() {
            for variable in &op.variables {
                assert!(
                    catalog.input_types.contains_key(variable.type_ref.named()),
                    "{} ${}",
                    op.key(),
                    variable.name
                );
            }
            if op.accepts_fields() {
                assert!(
                    catalog.output_types.contains_key(op.item_type()),
                    "{}",
                    op.key()
                );
            }
        }
        for input in catalog.input_types.values() {
            if let InputType::InputObject { fields } = input {
                assert!(fields
                    .values()
                    .all(|field| catalog.input_types.contains_key(field.named())));
            }
        }
    }

    #[test]
    fn type_references_round_trip() {
        for text in ["Int", "Int!", "[MediaSort]", "[Int!]!", "[[MediaList]]"] {
            let parsed = TypeRef::try_from(text.to_owned()).expect(text);
            assert_eq!(parsed.to_string(), text);
        }
        for bad in ["", "[Int", "Int!!", "Media Sort", "Int]"] {
            assert!(TypeRef::try_from(bad.to_owned()).is_err(), "{bad:?}");
        }
        assert_eq!(
            TypeRef::try_from("[MediaSort!]!".to_owned()).map(|t| t.named().to_owned()),
            Ok("MediaSort".to_owned())
        );
    }
}
