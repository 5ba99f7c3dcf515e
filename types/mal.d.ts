// MyAnimeList REST v2 types (api.md §9.2): records, pages, parameters and the `aniLink.mal` API.
// Records use MAL's own snake_case field names; parameter objects are camelCase, except that
// list-status updates also accept MAL's snake_case names.

import type { RequestOptions } from './transport';
import type { malPaginate, malPaginatePages } from './paginate';
import type { MalAuthorizationCodeRequest } from './helpers';
import type { MalTokenResponse } from './anilink';

/** A MAL field list, e.g. `"id,title,my_list_status{score}"` or `["id", "title"]`. */
export type MalFields = string | readonly string[];

/** Per-call options of MAL reads: transport options plus the `fields` selection. */
export type MalRequestOptions = RequestOptions & {
  fields?: MalFields;
};

// ---- shared ----

export interface MalPicture {
  medium: string;
  large?: string;
}

export interface MalPaging {
  previous?: string;
  next?: string;
}

/** A MAL listing page. `paging.next` is a full URL when there is a next page. */
export interface MalPage<T> {
  data: T[];
  paging?: MalPaging;
}

export interface MalGenre {
  id: number;
  name: string;
}

export interface MalAlternativeTitles {
  synonyms?: string[];
  en?: string;
  ja?: string;
}

export type MalNsfwLevel = 'white' | 'gray' | 'black';
export type MalSeason = 'winter' | 'spring' | 'summer' | 'fall';

export interface MalRelated<TNode> {
  node: TNode;
  relation_type: string;
  relation_type_formatted: string;
}

export interface MalRecommendation<TNode> {
  node: TNode;
  num_recommendations: number;
}

/** Fields every MAL work carries; all but `id` and `title` depend on the field selection. */
interface MalWork {
  id: number;
  title: string;
  main_picture?: MalPicture;
  alternative_titles?: MalAlternativeTitles;
  start_date?: string;
  end_date?: string;
  synopsis?: string;
  mean?: number;
  rank?: number;
  popularity?: number;
  num_list_users?: number;
  num_scoring_users?: number;
  nsfw?: MalNsfwLevel;
  genres?: MalGenre[];
  created_at?: string;
  updated_at?: string;
  pictures?: MalPicture[];
  background?: string;
  related_anime?: MalRelated<MalAnime>[];
  related_manga?: MalRelated<MalManga>[];
}

// ---- anime ----

export type MalAnimeListStatusValue = 'watching' | 'completed' | 'on_hold' | 'dropped' | 'plan_to_watch';
export type MalAnimeRankingType =
  | 'all'
  | 'airing'
  | 'upcoming'
  | 'tv'
  | 'ova'
  | 'movie'
  | 'special'
  | 'bypopularity'
  | 'favorite';
export type MalAnimeSeasonalSort = 'anime_score' | 'anime_num_list_users';
export type MalAnimeListSort = 'list_score' | 'list_updated_at' | 'anime_title' | 'anime_start_date' | 'anime_id';

/** The token owner's entry for an anime, as MAL returns it. */
export interface MalAnimeListStatus {
  status?: MalAnimeListStatusValue;
  score: number;
  num_episodes_watched: number;
  is_rewatching: boolean;
  start_date?: string;
  finish_date?: string;
  priority?: number;
  num_times_rewatched?: number;
  rewatch_value?: number;
  tags?: string[];
  comments?: string;
  updated_at: string;
  /** Any other field selected with `fields`, as MAL names it. */
  [field: string]: unknown;
}

/**
 * Changes to an anime list entry; at least one field is required. Each field may be written in
 * camelCase or in MAL's snake_case (not both).
 */
export interface MalAnimeListStatusUpdate {
  status?: MalAnimeListStatusValue;
  /** 0-10. */
  score?: number;
  numWatchedEpisodes?: number;
  num_watched_episodes?: number;
  isRewatching?: boolean;
  is_rewatching?: boolean;
  numTimesRewatched?: number;
  num_times_rewatched?: number;
  /** 0-5. */
  rewatchValue?: number;
  rewatch_value?: number;
  /** 0-2. */
  priority?: number;
  /** Sent comma-joined, so a tag cannot contain a comma. */
  tags?: readonly string[];
  comments?: string;
  /** `YYYY-MM-DD`, or the partial `YYYY-MM` / `YYYY`. */
  startDate?: string;
  start_date?: string;
  finishDate?: string;
  finish_date?: string;
}

export interface MalAnimeStatistics {
  status: {
    watching: number | string;
    completed: number | string;
    on_hold: number | string;
    dropped: number | string;
    plan_to_watch: number | string;
  };
  num_list_users: number;
}

export interface MalAnime extends MalWork {
  media_type?: string;
  status?: 'finished_airing' | 'currently_airing' | 'not_yet_aired';
  my_list_status?: MalAnimeListStatus;
  num_episodes?: number;
  start_season?: { year: number; season: MalSeason };
  broadcast?: { day_of_the_week: string; start_time?: string };
  source?: string;
  /** Seconds. */
  average_episode_duration?: number;
  rating?: string;
  recommendations?: MalRecommendation<MalAnime>[];
  studios?: { id: number; name: string }[];
  statistics?: MalAnimeStatistics;
  /** Any other field selected with `fields`, as MAL names it. */
  [field: string]: unknown;
}

export interface MalAnimeNode {
  node: MalAnime;
}

export interface MalAnimeListEntry {
  node: MalAnime;
  list_status?: MalAnimeListStatus;
}

export interface MalRanking {
  rank: number;
  previous_rank?: number | null;
}

export interface MalAnimeRankingEntry {
  node: MalAnime;
  ranking: MalRanking;
}

export interface MalAnimeSeasonalPage extends MalPage<MalAnimeNode> {
  season?: { year: number; season: MalSeason };
}

// ---- manga ----

export type MalMangaListStatusValue = 'reading' | 'completed' | 'on_hold' | 'dropped' | 'plan_to_read';
export type MalMangaRankingType =
  | 'all'
  | 'manga'
  | 'novels'
  | 'oneshots'
  | 'doujin'
  | 'manhwa'
  | 'manhua'
  | 'bypopularity'
  | 'favorite';
export type MalMangaListSort = 'list_score' | 'list_updated_at' | 'manga_title' | 'manga_start_date' | 'manga_id';

/** The token owner's entry for a manga, as MAL returns it. */
export interface MalMangaListStatus {
  status?: MalMangaListStatusValue;
  score: number;
  num_volumes_read: number;
  num_chapters_read: number;
  is_rereading: boolean;
  start_date?: string;
  finish_date?: string;
  priority?: number;
  num_times_reread?: number;
  reread_value?: number;
  tags?: string[];
  comments?: string;
  updated_at: string;
  /** Any other field selected with `fields`, as MAL names it. */
  [field: string]: unknown;
}

/**
 * Changes to a manga list entry; at least one field is required. Each field may be written in
 * camelCase or in MAL's snake_case (not both).
 */
export interface MalMangaListStatusUpdate {
  status?: MalMangaListStatusValue;
  /** 0-10. */
  score?: number;
  numVolumesRead?: number;
  num_volumes_read?: number;
  numChaptersRead?: number;
  num_chapters_read?: number;
  isRereading?: boolean;
  is_rereading?: boolean;
  numTimesReread?: number;
  num_times_reread?: number;
  /** 0-5. */
  rereadValue?: number;
  reread_value?: number;
  /** 0-2. */
  priority?: number;
  /** Sent comma-joined, so a tag cannot contain a comma. */
  tags?: readonly string[];
  comments?: string;
  /** `YYYY-MM-DD`, or the partial `YYYY-MM` / `YYYY`. */
  startDate?: string;
  start_date?: string;
  finishDate?: string;
  finish_date?: string;
}

export interface MalManga extends MalWork {
  media_type?: string;
  status?: string;
  my_list_status?: MalMangaListStatus;
  num_volumes?: number;
  num_chapters?: number;
  authors?: { node: { id: number; first_name?: string; last_name?: string }; role: string }[];
  serialization?: { node: { id: number; name: string } }[];
  recommendations?: MalRecommendation<MalManga>[];
  /** Any other field selected with `fields`, as MAL names it. */
  [field: string]: unknown;
}

export interface MalMangaNode {
  node: MalManga;
}

export interface MalMangaListEntry {
  node: MalManga;
  list_status?: MalMangaListStatus;
}

export interface MalMangaRankingEntry {
  node: MalManga;
  ranking: MalRanking;
}

// ---- user ----

export interface MalUserAnimeStatistics {
  num_items_watching: number;
  num_items_completed: number;
  num_items_on_hold: number;
  num_items_dropped: number;
  num_items_plan_to_watch: number;
  num_items: number;
  num_days_watched: number;
  num_days_watching: number;
  num_days_completed: number;
  num_days_on_hold: number;
  num_days_dropped: number;
  num_days: number;
  num_episodes: number;
  num_times_rewatched: number;
  mean_score: number;
}

export interface MalUser {
  id: number;
  name: string;
  picture?: string;
  gender?: string;
  birthday?: string;
  location?: string;
  joined_at?: string;
  anime_statistics?: MalUserAnimeStatistics;
  time_zone?: string;
  is_supporter?: boolean;
  /** Any other field selected with `fields`, as MAL names it. */
  [field: string]: unknown;
}

// ---- forum ----

export interface MalForumBoards {
  categories: {
    title: string;
    boards: {
      id: number;
      title: string;
      description: string;
      subboards: { id: number; title: string }[];
    }[];
  }[];
}

export interface MalForumUser {
  id: number;
  name: string;
}

export interface MalForumTopic {
  id: number;
  title: string;
  created_at: string;
  created_by: MalForumUser;
  number_of_posts: number;
  last_post_created_at: string;
  last_post_created_by: MalForumUser;
  is_locked: boolean;
}

export interface MalForumPost {
  id: number;
  number: number;
  created_at: string;
  /** `forum_avator` is MAL's own spelling. */
  created_by: MalForumUser & { forum_avator?: string };
  body: string;
  signature: string;
}

export interface MalForumPoll {
  id: number;
  question: string;
  close: boolean;
  options: { id: number; text: string; votes: number }[];
}

export interface MalForumTopicDetail {
  data: { title: string; posts: MalForumPost[]; poll: MalForumPoll | null };
  paging?: MalPaging;
}

// ---- parameters ----

export interface MalIdParams {
  id: number;
}

/**
 * `fields` in the params object (the object form of the newest sources): sent as
 * `options.fields` is; give it in one place, not both.
 */
export interface MalFieldsParams {
  fields?: MalFields;
}

export interface MalGetParams extends MalIdParams, MalFieldsParams {}

export interface MalPagingParams {
  /** At least 1; the maximum depends on the endpoint (100, 500 or 1000). */
  limit?: number;
  offset?: number;
}

export interface MalSearchParams extends MalPagingParams, MalFieldsParams {
  /** Non-blank. */
  q: string;
  nsfw?: boolean;
}

export interface MalAnimeSeasonalParams extends MalPagingParams, MalFieldsParams {
  year: number;
  season: MalSeason;
  sort?: MalAnimeSeasonalSort;
  nsfw?: boolean;
}

export interface MalAnimeRankingParams extends MalPagingParams, MalFieldsParams {
  rankingType: MalAnimeRankingType;
  nsfw?: boolean;
}

export interface MalMangaRankingParams extends MalPagingParams, MalFieldsParams {
  rankingType: MalMangaRankingType;
  nsfw?: boolean;
}

export type MalAnimeListStatusUpdateParams = MalIdParams & MalFieldsParams & MalAnimeListStatusUpdate;
export type MalMangaListStatusUpdateParams = MalIdParams & MalFieldsParams & MalMangaListStatusUpdate;

export interface MalUserParams extends MalFieldsParams {
  /** A MAL user name, or `"@me"` (any case) for the token owner. */
  username: string;
}

export interface MalUserAnimeListParams extends MalUserParams, MalPagingParams {
  status?: MalAnimeListStatusValue;
  sort?: MalAnimeListSort;
  nsfw?: boolean;
}

export interface MalUserMangaListParams extends MalUserParams, MalPagingParams {
  status?: MalMangaListStatusValue;
  sort?: MalMangaListSort;
  nsfw?: boolean;
}

export interface MalForumTopicsParams extends MalPagingParams, MalFieldsParams {
  boardId?: number;
  subboardId?: number;
  q?: string;
  topicUserName?: string;
  userName?: string;
  sort?: 'recent';
}

export interface MalForumTopicParams extends MalIdParams, MalPagingParams, MalFieldsParams {}

// ---- the API ----
//
// Two calling conventions (decisions D25): the single params object of the newest sources,
// `get({ id }, options?)`, and the positional form of the published 2.x line (2.2.0),
// `get(id, options?)`, `updateMyListStatus(id, payload, options?)`, `deleteFromList(id, options?)`.
// Both send the same request. A list-status write takes `fields` (MAL shapes its answer by them);
// a delete ignores them.

export interface MyAnimeListAnimeApi {
  get(params: MalGetParams, options?: MalRequestOptions): Promise<MalAnime>;
  /** The 2.2.0 positional form of `get({ id }, options)`. */
  get(id: number, options?: MalRequestOptions): Promise<MalAnime>;
  search(params: MalSearchParams, options?: MalRequestOptions): Promise<MalPage<MalAnimeNode>>;
  seasonal(params: MalAnimeSeasonalParams, options?: MalRequestOptions): Promise<MalAnimeSeasonalPage>;
  ranking(params: MalAnimeRankingParams, options?: MalRequestOptions): Promise<MalPage<MalAnimeRankingEntry>>;
  suggestions(options?: MalRequestOptions): Promise<MalPage<MalAnimeNode>>;
  updateMyListStatus(params: MalAnimeListStatusUpdateParams, options?: MalRequestOptions): Promise<MalAnimeListStatus>;
  /** The 2.2.0 positional form of `updateMyListStatus({ id, ...payload }, options)`. */
  updateMyListStatus(
    id: number,
    payload: MalAnimeListStatusUpdate,
    options?: MalRequestOptions,
  ): Promise<MalAnimeListStatus>;
  deleteFromList(params: MalIdParams, options?: MalRequestOptions): Promise<void>;
  /** The 2.2.0 positional form of `deleteFromList({ id }, options)`. */
  deleteFromList(id: number, options?: MalRequestOptions): Promise<void>;
}

export interface MyAnimeListMangaApi {
  get(params: MalGetParams, options?: MalRequestOptions): Promise<MalManga>;
  /** The 2.2.0 positional form of `get({ id }, options)`. */
  get(id: number, options?: MalRequestOptions): Promise<MalManga>;
  search(params: MalSearchParams, options?: MalRequestOptions): Promise<MalPage<MalMangaNode>>;
  ranking(params: MalMangaRankingParams, options?: MalRequestOptions): Promise<MalPage<MalMangaRankingEntry>>;
  updateMyListStatus(params: MalMangaListStatusUpdateParams, options?: MalRequestOptions): Promise<MalMangaListStatus>;
  /** The 2.2.0 positional form of `updateMyListStatus({ id, ...payload }, options)`. */
  updateMyListStatus(
    id: number,
    payload: MalMangaListStatusUpdate,
    options?: MalRequestOptions,
  ): Promise<MalMangaListStatus>;
  deleteFromList(params: MalIdParams, options?: MalRequestOptions): Promise<void>;
  /** The 2.2.0 positional form of `deleteFromList({ id }, options)`. */
  deleteFromList(id: number, options?: MalRequestOptions): Promise<void>;
}

/**
 * `aniLink.mal.auth`: the MyAnimeList PKCE helpers, the same functions as the
 * `buildMalAuthorizationUrl` and `getMalAccessToken` exports.
 */
export interface MyAnimeListAuthApi {
  /** The authorize URL to send the user to (`plain` PKCE: the challenge is the verifier). */
  buildAuthorizationUrl(clientId: string, codeChallenge: string, state?: string): string;
  /** Exchange the code of the redirect for a token. */
  exchangeCode(request: MalAuthorizationCodeRequest): Promise<MalTokenResponse>;
}

export interface MyAnimeListUserApi {
  /** Requires a token. */
  me(options?: MalRequestOptions): Promise<MalUser>;
  /** `"@me"` requires a token. */
  get(params: MalUserParams, options?: MalRequestOptions): Promise<MalUser>;
  animeList(params: MalUserAnimeListParams, options?: MalRequestOptions): Promise<MalPage<MalAnimeListEntry>>;
  mangaList(params: MalUserMangaListParams, options?: MalRequestOptions): Promise<MalPage<MalMangaListEntry>>;
}

export interface MyAnimeListForumApi {
  boards(options?: MalRequestOptions): Promise<MalForumBoards>;
  topics(params?: MalForumTopicsParams, options?: MalRequestOptions): Promise<MalPage<MalForumTopic>>;
  topic(params: MalForumTopicParams, options?: MalRequestOptions): Promise<MalForumTopicDetail>;
}

/** `aniLink.mal`. */
export interface MyAnimeListApi {
  anime: MyAnimeListAnimeApi;
  manga: MyAnimeListMangaApi;
  user: MyAnimeListUserApi;
  forum: MyAnimeListForumApi;
  paginate: typeof malPaginate;
  paginatePages: typeof malPaginatePages;
  auth: MyAnimeListAuthApi;
}
