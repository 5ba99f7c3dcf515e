'use strict';
// Package entry (CommonJS). The ESM entry and the subpaths re-export these same objects.

const { addon, contract, ResponseCache } = require('./native.cjs');
const errors = require('./errors.cjs');
const helpers = require('./helpers.cjs');
// Pagination, the token exchanges, mapExternalIds and transport state load on first use
// (lib/on-demand.cjs).
const onDemand = require('./on-demand.cjs');
const { AniLink, buildProviderClients, buildMyAnimeListApi } = require('./anilink.cjs');

/**
 * Release every keep-alive connection pool the transport holds: cached, parked and default.
 * Requests already in flight still complete; the next request rebuilds the default pool.
 */
function destroyCachedAgents() {
  addon().destroyCachedAgents();
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
  ResponseCache,
  paginate: onDemand.paginate,
  paginatePages: onDemand.paginatePages,
  paginateChunks: onDemand.paginateChunks,
  malPaginate: onDemand.malPaginate,
  malPaginatePages: onDemand.malPaginatePages,
  fuzzyDate: helpers.fuzzyDate,
  fuzzyDateInt: helpers.fuzzyDateInt,
  crossLink: helpers.crossLink,
  ANILIST_AUTHORIZE_URL: helpers.ANILIST_AUTHORIZE_URL,
  ANILIST_TOKEN_URL: helpers.ANILIST_TOKEN_URL,
  buildAuthorizationUrl: helpers.buildAuthorizationUrl,
  getTokenExpiry: helpers.getTokenExpiry,
  getAccessToken: onDemand.getAccessToken,
  refreshAccessToken: onDemand.refreshAccessToken,
  MAL_API_BASE_URL: contract.slot.mal.api.default,
  MAL_API_REFERENCE: 'https://myanimelist.net/apiconfig/references/api/v2',
  MAL_AUTHORIZE_URL: helpers.MAL_AUTHORIZE_URL,
  MAL_TOKEN_URL: helpers.MAL_TOKEN_URL,
  getMalAccessToken: onDemand.getMalAccessToken,
  refreshMalAccessToken: onDemand.refreshMalAccessToken,
  buildMalAuthorizationUrl: helpers.buildMalAuthorizationUrl,
  getMalTokenExpiry: helpers.getMalTokenExpiry,
  mapExternalIds: onDemand.mapExternalIds,
  // Lower-level entry points: provider clients without AniLink, and their state (api.md §6, §11).
  snapshotTransportState: onDemand.snapshotTransportState,
  buildProviderClients,
  buildMyAnimeListApi,
};
