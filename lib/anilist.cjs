'use strict';
// `anilink-api-wrapper/anilist`: the AniList-scoped entry, same objects as the root entry.
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
  paginate: root.paginate,
  paginatePages: root.paginatePages,
  paginateChunks: root.paginateChunks,
  fuzzyDate: root.fuzzyDate,
  fuzzyDateInt: root.fuzzyDateInt,
  crossLink: root.crossLink,
  ANILIST_AUTHORIZE_URL: root.ANILIST_AUTHORIZE_URL,
  ANILIST_TOKEN_URL: root.ANILIST_TOKEN_URL,
  buildAuthorizationUrl: root.buildAuthorizationUrl,
  getTokenExpiry: root.getTokenExpiry,
  getAccessToken: root.getAccessToken,
  refreshAccessToken: root.refreshAccessToken,
  mapExternalIds: root.mapExternalIds,
};
