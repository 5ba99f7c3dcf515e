'use strict';
// Package entry (CommonJS). The ESM entry and the subpaths re-export these same objects.

const native = require('./native.cjs');
const errors = require('./errors.cjs');
const pagination = require('./paginate.cjs');
const { AniLink } = require('./anilink.cjs');

/**
 * Release every keep-alive connection pool the transport holds: cached, parked and default.
 * Requests already in flight still complete; the next request rebuilds the default pool.
 */
function destroyCachedAgents() {
  native.destroyCachedAgents();
}

module.exports = {
  AniLink,
  AniLinkErrorCodes: errors.AniLinkErrorCodes,
  AniLinkError: errors.AniLinkError,
  AniLinkApiError: errors.AniLinkApiError,
  AniLinkGraphQLError: errors.AniLinkGraphQLError,
  AniLinkRestError: errors.AniLinkRestError,
  AniLinkNetworkError: errors.AniLinkNetworkError,
  AniLinkAuthError: errors.AniLinkAuthError,
  AniLinkValidationError: errors.AniLinkValidationError,
  destroyCachedAgents,
  ResponseCache: native.ResponseCache,
  paginate: pagination.paginate,
  paginatePages: pagination.paginatePages,
  paginateChunks: pagination.paginateChunks,
  malPaginate: pagination.malPaginate,
  malPaginatePages: pagination.malPaginatePages,
  ANILIST_AUTHORIZE_URL: 'https://anilist.co/api/v2/oauth/authorize',
  ANILIST_TOKEN_URL: 'https://anilist.co/api/v2/oauth/token',
  MAL_API_BASE_URL: 'https://api.myanimelist.net/v2',
  MAL_API_REFERENCE: 'https://myanimelist.net/apiconfig/references/api/v2',
  MAL_AUTHORIZE_URL: 'https://myanimelist.net/v1/oauth2/authorize',
  MAL_TOKEN_URL: 'https://myanimelist.net/v1/oauth2/token',
};
