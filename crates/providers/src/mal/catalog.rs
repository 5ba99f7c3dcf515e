//! The 19 operations of `aniLink.mal`, in api.md §9.2 order, as one static table.
//!
//! MAL API v2 facts used here: limits (search and forum 100, ranking and seasonal 500, user
//! lists 1000), enum values, and the default field lists that make `get` return a full record
//! instead of MAL's bare `{ id, title, main_picture }`.

use super::params::{Param, Rule};
use super::HttpMethod;

/// One MyAnimeList REST operation.
#[derive(Debug)]
pub struct Operation {
    key: &'static str,
    method: HttpMethod,
    /// Path below the base URL; `{name}` segments are filled from path parameters.
    path: &'static str,
    params: &'static [Param],
    default_fields: Option<&'static str>,
    always_requires_token: bool,
    legacy_arguments: LegacyArguments,
}

/// How the published 2.x line (2.2.0) took an operation's arguments, before the single params
/// object of the newest sources (decisions D25): both forms are accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LegacyArguments {
    /// Only the params-object form exists (the operation is newer than 2.2.0, or takes no params).
    None,
    /// `(id, options?)`.
    Id,
    /// `(id, payload, options?)`: the payload holds the list-status fields.
    IdAndPayload,
}

impl Operation {
    /// The catalog key, e.g. "anime.get", "user.me", "forum.topics".
    pub fn key(&self) -> &str {
        self.key
    }

    pub fn method(&self) -> HttpMethod {
        self.method
    }

    /// true for the zero-parameter operations (anime.suggestions, user.me, forum.boards) whose first JS argument is the options object.
    pub fn options_first(&self) -> bool {
        self.params.is_empty()
    }

    /// The 2.2.0 positional form of the operation, if it had one.
    pub fn legacy_arguments(&self) -> LegacyArguments {
        self.legacy_arguments
    }

    pub(super) fn params(&self) -> &'static [Param] {
        self.params
    }

    pub(super) fn path_template(&self) -> &'static str {
        self.path
    }

    pub(super) fn default_fields(&self) -> Option<&'static str> {
        self.default_fields
    }

    pub(super) fn always_requires_token(&self) -> bool {
        self.always_requires_token
    }

    /// The method name on its namespace ("updateMyListStatus"), as callers wrote it.
    pub(super) fn member_name(&self) -> &'static str {
        self.key.rsplit('.').next().unwrap_or(self.key)
    }

    const fn new(
        key: &'static str,
        method: HttpMethod,
        path: &'static str,
        params: &'static [Param],
    ) -> Operation {
        Operation {
            key,
            method,
            path,
            params,
            default_fields: None,
            always_requires_token: !matches!(method, HttpMethod::Get),
            legacy_arguments: LegacyArguments::None,
        }
    }

    const fn with_legacy_arguments(self, legacy_arguments: LegacyArguments) -> Operation {
        Operation {
            legacy_arguments,
            ..self
        }
    }

    const fn with_default_fields(self, fields: &'static str) -> Operation {
        Operation {
            default_fields: Some(fields),
            ..self
        }
    }

    const fn with_token(self) -> Operation {
        Operation {
            always_requires_token: true,
            ..self
        }
    }
}

/// The operation registered under `key`, e.g. "anime.get".
pub fn operation(key: &str) -> Option<&'static Operation> {
    OPERATIONS.iter().find(|op| op.key == key)
}

/// All 19 operations, in api.md order.
pub fn operations() -> impl Iterator<Item = &'static Operation> {
    OPERATIONS.iter()
}

const ANIME_DETAIL_FIELDS: &str = "id,title,main_picture,alternative_titles,start_date,end_date,\
synopsis,mean,rank,popularity,num_list_users,num_scoring_users,nsfw,genres,created_at,updated_at,\
media_type,status,my_list_status,num_episodes,start_season,broadcast,source,\
average_episode_duration,rating,pictures,background,related_anime,related_manga,\
recommendations,studios,statistics";

const MANGA_DETAIL_FIELDS: &str = "id,title,main_picture,alternative_titles,start_date,end_date,\
synopsis,mean,rank,popularity,num_list_users,num_scoring_users,nsfw,genres,created_at,updated_at,\
media_type,status,my_list_status,num_volumes,num_chapters,authors{first_name,last_name},\
pictures,background,related_anime,related_manga,recommendations,serialization{name}";

const USER_DETAIL_FIELDS: &str =
    "id,name,picture,gender,birthday,location,joined_at,anime_statistics,time_zone,is_supporter";

const ANIME_RANKING_TYPES: &[&str] = &[
    "all",
    "airing",
    "upcoming",
    "tv",
    "ova",
    "movie",
    "special",
    "bypopularity",
    "favorite",
];
const MANGA_RANKING_TYPES: &[&str] = &[
    "all",
    "manga",
    "novels",
    "oneshots",
    "doujin",
    "manhwa",
    "manhua",
    "bypopularity",
    "favorite",
];
const SEASONS: &[&str] = &["winter", "spring", "summer", "fall"];
const SEASONAL_SORTS: &[&str] = &["anime_score", "anime_num_list_users"];
const ANIME_LIST_STATUSES: &[&str] = &[
    "watching",
    "completed",
    "on_hold",
    "dropped",
    "plan_to_watch",
];
const MANGA_LIST_STATUSES: &[&str] =
    &["reading", "completed", "on_hold", "dropped", "plan_to_read"];
const ANIME_LIST_SORTS: &[&str] = &[
    "list_score",
    "list_updated_at",
    "anime_title",
    "anime_start_date",
    "anime_id",
];
const MANGA_LIST_SORTS: &[&str] = &[
    "list_score",
    "list_updated_at",
    "manga_title",
    "manga_start_date",
    "manga_id",
];
const FORUM_TOPIC_SORTS: &[&str] = &["recent"];

const ID: Param = Param::path("id", Rule::PositiveInteger);
const USERNAME: Param = Param::path("username", Rule::Username);
const OFFSET: Param = Param::query("offset", "offset", Rule::NonNegativeInteger);
/// MAL hides NSFW entries from some listings unless asked; only listings take the switch.
const NSFW: Param = Param::query("nsfw", "nsfw", Rule::Boolean);
const SEARCH_TEXT: Param = Param::query("q", "q", Rule::NonBlankText).required();

const fn limit(max: i64) -> Param {
    Param::query("limit", "limit", Rule::IntegerFrom(1, max))
}

const SCORE: Param = Param::form("score", "score", Rule::IntegerFrom(0, 10));
const PRIORITY: Param = Param::form("priority", "priority", Rule::IntegerFrom(0, 2));
const TAGS: Param = Param::form("tags", "tags", Rule::Tags);
const COMMENTS: Param = Param::form("comments", "comments", Rule::Text);
/// MAL takes `YYYY-MM-DD` and the partial `YYYY-MM` / `YYYY`; it judges the text itself.
const START_DATE: Param = Param::form("startDate", "start_date", Rule::NonBlankText);
const FINISH_DATE: Param = Param::form("finishDate", "finish_date", Rule::NonBlankText);

const BY_ID: &[Param] = &[ID];
const SEARCH: &[Param] = &[SEARCH_TEXT, limit(100), OFFSET, NSFW];
const ANIME_SEASONAL: &[Param] = &[
    Param::path("year", Rule::PositiveInteger),
    Param::path("season", Rule::OneOf(SEASONS)),
    Param::query("sort", "sort", Rule::OneOf(SEASONAL_SORTS)),
    limit(500),
    OFFSET,
    NSFW,
];
const ANIME_RANKING: &[Param] = &[
    Param::query(
        "rankingType",
        "ranking_type",
        Rule::OneOf(ANIME_RANKING_TYPES),
    )
    .required(),
    limit(500),
    OFFSET,
    NSFW,
];
const ANIME_LIST_UPDATE: &[Param] = &[
    ID,
    Param::form("status", "status", Rule::OneOf(ANIME_LIST_STATUSES)),
    Param::form("isRewatching", "is_rewatching", Rule::Boolean),
    SCORE,
    Param::form(
        "numWatchedEpisodes",
        "num_watched_episodes",
        Rule::NonNegativeInteger,
    ),
    PRIORITY,
    Param::form(
        "numTimesRewatched",
        "num_times_rewatched",
        Rule::NonNegativeInteger,
    ),
    Param::form("rewatchValue", "rewatch_value", Rule::IntegerFrom(0, 5)),
    TAGS,
    COMMENTS,
    START_DATE,
    FINISH_DATE,
];
const MANGA_RANKING: &[Param] = &[
    Param::query(
        "rankingType",
        "ranking_type",
        Rule::OneOf(MANGA_RANKING_TYPES),
    )
    .required(),
    limit(500),
    OFFSET,
    NSFW,
];
const MANGA_LIST_UPDATE: &[Param] = &[
    ID,
    Param::form("status", "status", Rule::OneOf(MANGA_LIST_STATUSES)),
    Param::form("isRereading", "is_rereading", Rule::Boolean),
    SCORE,
    Param::form(
        "numVolumesRead",
        "num_volumes_read",
        Rule::NonNegativeInteger,
    ),
    Param::form(
        "numChaptersRead",
        "num_chapters_read",
        Rule::NonNegativeInteger,
    ),
    PRIORITY,
    Param::form(
        "numTimesReread",
        "num_times_reread",
        Rule::NonNegativeInteger,
    ),
    Param::form("rereadValue", "reread_value", Rule::IntegerFrom(0, 5)),
    TAGS,
    COMMENTS,
    START_DATE,
    FINISH_DATE,
];
const USER_GET: &[Param] = &[USERNAME];
const USER_ANIME_LIST: &[Param] = &[
    USERNAME,
    Param::query("status", "status", Rule::OneOf(ANIME_LIST_STATUSES)),
    Param::query("sort", "sort", Rule::OneOf(ANIME_LIST_SORTS)),
    limit(1000),
    OFFSET,
    NSFW,
];
const USER_MANGA_LIST: &[Param] = &[
    USERNAME,
    Param::query("status", "status", Rule::OneOf(MANGA_LIST_STATUSES)),
    Param::query("sort", "sort", Rule::OneOf(MANGA_LIST_SORTS)),
    limit(1000),
    OFFSET,
    NSFW,
];
const FORUM_TOPICS: &[Param] = &[
    Param::query("boardId", "board_id", Rule::PositiveInteger),
    // Board 0 does not exist, but subboard 0 is what the original sends for "no subboard".
    Param::query("subboardId", "subboard_id", Rule::NonNegativeInteger),
    Param::query("q", "q", Rule::NonBlankText),
    Param::query("topicUserName", "topic_user_name", Rule::NonBlankText),
    Param::query("userName", "user_name", Rule::NonBlankText),
    Param::query("sort", "sort", Rule::OneOf(FORUM_TOPIC_SORTS)),
    limit(100),
    OFFSET,
];
const FORUM_TOPIC: &[Param] = &[ID, limit(100), OFFSET];

use HttpMethod::{Delete, Get, Patch};
use LegacyArguments::{Id, IdAndPayload};

static OPERATIONS: [Operation; 19] = [
    Operation::new("anime.get", Get, "/anime/{id}", BY_ID)
        .with_default_fields(ANIME_DETAIL_FIELDS)
        .with_legacy_arguments(Id),
    Operation::new("anime.search", Get, "/anime", SEARCH),
    Operation::new(
        "anime.seasonal",
        Get,
        "/anime/season/{year}/{season}",
        ANIME_SEASONAL,
    ),
    Operation::new("anime.ranking", Get, "/anime/ranking", ANIME_RANKING),
    Operation::new("anime.suggestions", Get, "/anime/suggestions", &[]).with_token(),
    Operation::new(
        "anime.updateMyListStatus",
        Patch,
        "/anime/{id}/my_list_status",
        ANIME_LIST_UPDATE,
    )
    .with_legacy_arguments(IdAndPayload),
    Operation::new(
        "anime.deleteFromList",
        Delete,
        "/anime/{id}/my_list_status",
        BY_ID,
    )
    .with_legacy_arguments(Id),
    Operation::new("manga.get", Get, "/manga/{id}", BY_ID)
        .with_default_fields(MANGA_DETAIL_FIELDS)
        .with_legacy_arguments(Id),
    Operation::new("manga.search", Get, "/manga", SEARCH),
    Operation::new("manga.ranking", Get, "/manga/ranking", MANGA_RANKING),
    Operation::new(
        "manga.updateMyListStatus",
        Patch,
        "/manga/{id}/my_list_status",
        MANGA_LIST_UPDATE,
    )
    .with_legacy_arguments(IdAndPayload),
    Operation::new(
        "manga.deleteFromList",
        Delete,
        "/manga/{id}/my_list_status",
        BY_ID,
    )
    .with_legacy_arguments(Id),
    Operation::new("user.me", Get, "/users/@me", &[])
        .with_token()
        .with_default_fields(USER_DETAIL_FIELDS),
    Operation::new("user.get", Get, "/users/{username}", USER_GET)
        .with_default_fields(USER_DETAIL_FIELDS),
    Operation::new(
        "user.animeList",
        Get,
        "/users/{username}/animelist",
        USER_ANIME_LIST,
    ),
    Operation::new(
        "user.mangaList",
        Get,
        "/users/{username}/mangalist",
        USER_MANGA_LIST,
    ),
    Operation::new("forum.boards", Get, "/forum/boards", &[]),
    Operation::new("forum.topics", Get, "/forum/topics", FORUM_TOPICS),
    Operation::new("forum.topic", Get, "/forum/topic/{id}", FORUM_TOPIC),
];
