'use strict';
// The public functions whose modules loading the package does not need: pagination, the OAuth
// token exchanges, mapExternalIds and snapshotTransportState (whose module the first client
// loads). Each is exported here as a function of the same name and parameters that loads its
// module on first use and hands back what that module's function returns (the same promise or
// async iterator), so loading the package does not pay for modules most programs never run
// (issue 40: start-up). Every entry and `aniLink.anilist` / `.mal` hand out these same objects.

let pagination;
let oauth;
let mapping;
let transportState;
const paginationModule = () => (pagination ??= require('./paginate.cjs'));
const oauthModule = () => (oauth ??= require('./oauth.cjs'));
const mappingModule = () => (mapping ??= require('./map-external-ids.cjs'));
const transportStateModule = () => (transportState ??= require('./transport-state.cjs'));

function paginate(fetchPage, itemsKey, options) {
  return paginationModule().paginate(fetchPage, itemsKey, options);
}

function paginatePages(fetchPage, options) {
  return paginationModule().paginatePages(fetchPage, options);
}

function paginateChunks(fetchChunk, itemsKey, options) {
  return paginationModule().paginateChunks(fetchChunk, itemsKey, options);
}

function malPaginate(fetchPage, options) {
  return paginationModule().malPaginate(fetchPage, options);
}

function malPaginatePages(fetchPage, options) {
  return paginationModule().malPaginatePages(fetchPage, options);
}

function getAccessToken(clientId, clientSecret, code, redirectUri, options) {
  return oauthModule().getAccessToken(clientId, clientSecret, code, redirectUri, options);
}

function refreshAccessToken(clientId, clientSecret, refreshToken, options) {
  return oauthModule().refreshAccessToken(clientId, clientSecret, refreshToken, options);
}

function getMalAccessToken(request) {
  return oauthModule().getMalAccessToken(request);
}

function refreshMalAccessToken(request) {
  return oauthModule().refreshMalAccessToken(request);
}

function mapExternalIds(source, ids, options) {
  return mappingModule().mapExternalIds(source, ids, options);
}

function snapshotTransportState(owner, responseCache) {
  return transportStateModule().snapshotTransportState(owner, responseCache);
}

/** `aniLink.anilist.mapExternalIds`: bound to the slot when first called. */
function bindMapExternalIds(slotOptions) {
  let bound;
  return (source, ids, options) => {
    bound ??= mappingModule().bindMapExternalIds(slotOptions);
    return bound(source, ids, options);
  };
}

module.exports = {
  paginate,
  paginatePages,
  paginateChunks,
  malPaginate,
  malPaginatePages,
  getAccessToken,
  refreshAccessToken,
  getMalAccessToken,
  refreshMalAccessToken,
  mapExternalIds,
  bindMapExternalIds,
  snapshotTransportState,
};
