'use strict';
// `anilink-api-wrapper/mal`: the MyAnimeList-scoped entry, same objects as the root entry.
const root = require('./index.cjs');

module.exports = {
  AniLink: root.AniLink,
  AniLinkErrorCodes: root.AniLinkErrorCodes,
  AniLinkError: root.AniLinkError,
  AniLinkApiError: root.AniLinkApiError,
  AniLinkGraphQLError: root.AniLinkGraphQLError,
  AniLinkRestError: root.AniLinkRestError,
  AniLinkNetworkError: root.AniLinkNetworkError,
  AniLinkAuthError: root.AniLinkAuthError,
  AniLinkValidationError: root.AniLinkValidationError,
  malPaginate: root.malPaginate,
  malPaginatePages: root.malPaginatePages,
  MAL_API_BASE_URL: root.MAL_API_BASE_URL,
  MAL_API_REFERENCE: root.MAL_API_REFERENCE,
  MAL_AUTHORIZE_URL: root.MAL_AUTHORIZE_URL,
  MAL_TOKEN_URL: root.MAL_TOKEN_URL,
  buildMalAuthorizationUrl: root.buildMalAuthorizationUrl,
  getMalTokenExpiry: root.getMalTokenExpiry,
  getMalAccessToken: root.getMalAccessToken,
  refreshMalAccessToken: root.refreshMalAccessToken,
  buildMyAnimeListApi: root.buildMyAnimeListApi,
};
