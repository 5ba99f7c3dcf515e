// ESM entry: re-exports the CommonJS module's own objects, so instanceof holds across entries.
import entry from './anilist.cjs';

export const {
  AniLink,
  AniLinkErrorCodes,
  AniLinkError,
  AniLinkApiError,
  AniLinkGraphQLError,
  AniLinkRestError,
  AniLinkNetworkError,
  AniLinkAuthError,
  AniLinkValidationError,
  paginate,
  paginatePages,
  paginateChunks,
  fuzzyDate,
  fuzzyDateInt,
  crossLink,
  ANILIST_AUTHORIZE_URL,
  ANILIST_TOKEN_URL,
  buildAuthorizationUrl,
  getTokenExpiry,
  getAccessToken,
  refreshAccessToken,
  mapExternalIds,
} = entry;
