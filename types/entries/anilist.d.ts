// anilink-api-wrapper/anilist: the AniList-scoped entry (same classes as the root entry).
export {
  AniLink,
  ANILIST_AUTHORIZE_URL,
  ANILIST_TOKEN_URL,
  type AniListApi,
  type AniListTokenResponse,
  type AniLinkOptions,
  type AniListCredentials,
  type CustomPageOptions,
  type RequestAuth,
  type RequestAuthInput,
  type AniListTokenRefreshCallback,
  type AniListTokenRefreshErrorCallback,
} from '../anilink';
export * from '../errors';
export type { RequestOptions, RateLimitInfo, AniLinkErrorCode } from '../transport';
export { paginate, paginatePages, paginateChunks } from '../paginate';
export type { PaginateOptions, PaginateResult, ChunkPaginateOptions, ChunkPaginateResult } from '../paginate';
export {
  fuzzyDate,
  fuzzyDateInt,
  crossLink,
  buildAuthorizationUrl,
  getTokenExpiry,
  getAccessToken,
  refreshAccessToken,
} from '../helpers';
export type { TokenRequestOptions } from '../helpers';
export { mapExternalIds } from '../helpers';
export type { MapExternalIdsOptions, MapExternalIdsResult, MapExternalIdsSource } from '../helpers';
export type {
  FuzzyDateOptions,
  CrossLinkMedia,
  CrossLinkResult,
  FlattenedMediaListEntry,
  MediaListCollectionLike,
  MediaListCollectionEntryLike,
} from '../helpers';
export * from '../anilist.generated';
/** The schema-exact AniList result types (AniList's own nullability), opt-in: `AniListStrict.Media`. */
export * as AniListStrict from '../anilist.strict.generated';
