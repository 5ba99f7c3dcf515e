// ESM entry: re-exports the CommonJS module's own objects, so instanceof holds across entries.
import entry from './index.cjs';

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
  destroyCachedAgents,
  ResponseCache,
  paginate,
  paginatePages,
  paginateChunks,
  malPaginate,
  malPaginatePages,
  ANILIST_AUTHORIZE_URL,
  ANILIST_TOKEN_URL,
  MAL_API_BASE_URL,
  MAL_API_REFERENCE,
  MAL_AUTHORIZE_URL,
  MAL_TOKEN_URL,
} = entry;
