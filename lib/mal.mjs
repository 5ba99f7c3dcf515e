// ESM entry: re-exports the CommonJS module's own objects, so instanceof holds across entries.
import entry from './mal.cjs';

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
  malPaginate,
  malPaginatePages,
  MAL_API_BASE_URL,
  MAL_API_REFERENCE,
  MAL_AUTHORIZE_URL,
  MAL_TOKEN_URL,
  buildMalAuthorizationUrl,
  getMalTokenExpiry,
  getMalAccessToken,
  refreshMalAccessToken,
  buildMyAnimeListApi,
} = entry;
