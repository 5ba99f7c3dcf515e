'use strict';
// State owners (api.md §6, §11): the opaque object that names one provider client's
// cross-request state (breaker, retry budget, pacing deadlines, admission; shared or not). `buildProviderClients` hands
// them out; `snapshotTransportState(owner, responseCache?)` reads the state behind one.

const { ResponseCache } = require('./native.cjs');

/** owner → the native client whose state it names; owners are plain frozen objects. */
const nativeClients = new WeakMap();

/** A new state owner for a native client. */
function createStateOwner(nativeClient) {
  const owner = Object.freeze(Object.create(null));
  nativeClients.set(owner, nativeClient);
  return owner;
}

/** Bind a caller's owner to a native client (buildMyAnimeListApi); an owner names one client. */
function bindStateOwner(owner, nativeClient) {
  if (owner === null || (typeof owner !== 'object' && typeof owner !== 'function')) {
    throw new TypeError('stateOwner must be an object (the state owner of one provider client).');
  }
  if (nativeClients.has(owner)) {
    throw new TypeError(
      'stateOwner already names the state of another provider client; give each client its own owner.',
    );
  }
  nativeClients.set(owner, nativeClient);
  return owner;
}

function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * A deep-frozen copy of the state an owner names; an owner that names nothing yet has an empty
 * state. `responseCache` adds (or replaces) the `responseCache` counters with that cache's.
 */
function snapshotTransportState(owner, responseCache) {
  if (owner === null || (typeof owner !== 'object' && typeof owner !== 'function')) {
    throw new TypeError(
      'snapshotTransportState: owner must be an object (a state owner from buildProviderClients().stateOwners).',
    );
  }
  if (responseCache !== undefined && !(responseCache instanceof ResponseCache)) {
    throw new TypeError('snapshotTransportState: responseCache must be a ResponseCache when given.');
  }
  const nativeClient = nativeClients.get(owner);
  const snapshot = nativeClient
    ? nativeClient.snapshot()
    : { capturedAt: Date.now(), sharedState: 'off', admission: [], circuit: [], paceDeadlines: [], retryBudgets: [] };
  if (responseCache !== undefined) snapshot.responseCache = { ...responseCache.stats() };
  return deepFreeze(snapshot);
}

module.exports = { createStateOwner, bindStateOwner, snapshotTransportState };
