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
} from './types/anilink';
export * from './types/errors';
export type { RequestOptions, RateLimitInfo, AniLinkErrorCode } from './types/transport';
export { paginate, paginatePages, paginateChunks } from './types/paginate';
export type { PaginateOptions, PaginateResult, ChunkPaginateOptions, ChunkPaginateResult } from './types/paginate';
export {
  fuzzyDate,
  fuzzyDateInt,
  crossLink,
  buildAuthorizationUrl,
  getTokenExpiry,
  getAccessToken,
  refreshAccessToken,
} from './types/helpers';
export type { TokenRequestOptions } from './types/helpers';
export { mapExternalIds } from './types/helpers';
export type { MapExternalIdsOptions, MapExternalIdsResult, MapExternalIdsSource } from './types/helpers';
export type {
  FuzzyDateOptions,
  CrossLinkMedia,
  CrossLinkResult,
  FlattenedMediaListEntry,
  MediaListCollectionLike,
  MediaListCollectionEntryLike,
} from './types/helpers';
export * from './types/anilist.generated';
/** The schema-exact AniList result types (AniList's own nullability), opt-in: `AniListStrict.Media`. */
export * as AniListStrict from './types/anilist.strict.generated';
