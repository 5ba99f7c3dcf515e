'use strict';
// The AniLink class: constructor forms (api.md §2), provider slots, and the `anilist` and `mal`
// namespaces built from the native catalogs.

const { addon, contract } = require('./native.cjs');
const { AniLinkValidationError, fromDescription } = require('./errors.cjs');
const helpers = require('./helpers.cjs');
// The same objects the package exports; their modules load on first use.
const onDemand = require('./on-demand.cjs');
const { bindMapExternalIds, getMalAccessToken } = onDemand;

// What only a client needs loads when the first client is built, and the call path (with its
// JSON writer) at the first call, not when the package is loaded (issue 40: start-up).
let callPath;
let jsonText;
let clientParts;
const callModule = () => (callPath ??= require('./call.cjs'));
const jsonTextModule = () => (jsonText ??= require('./json-text.cjs'));
function clientModules() {
  clientParts ??= {
    createNativeClient: require('./slot-environment.cjs').createNativeClient,
    createRefresher: require('./refresh.cjs').createRefresher,
    createWatch: require('./watch.cjs').createWatch,
    transportState: require('./transport-state.cjs'),
  };
  return clientParts;
}

// What a value is, never what it says: a misplaced argument may be a token (decisions D31).
const { isObject, readGuarded, guardedCopy, describeKind: describeValue } = helpers;

const CREDENTIAL_KEYS = ['anilist', 'mal', 'onHookError', 'diagnostics'];
const CLIENT_LEVEL_KEYS = ['onHookError', 'diagnostics'];

/** Slot objects for both providers from the constructor's arguments. */
function slotsFromArguments(first, second) {
  if (first === undefined || typeof first === 'string') {
    if (second !== undefined && !isObject(second)) {
      throw new TypeError(`AniLink: options must be an object (received ${describeValue(second)}).`);
    }
    // Positional form: the options configure AniList only.
    const anilist = second === undefined ? {} : guardedCopy(second, 'AniLink: options');
    if (first !== undefined) anilist.authToken = first;
    return { anilist, mal: {} };
  }
  if (!isObject(first)) {
    throw new TypeError(
      `AniLink: the first argument must be an AniList token string or a credentials object ({ anilist, mal }) (received ${describeValue(first)}).`,
    );
  }
  if (second !== undefined) {
    throw new TypeError(
      "AniLink: when the first argument is a credentials object, transport settings belong inside each provider's credentials slot. " +
        'Move them into { anilist: { ... } } or { mal: { ... } } (or use the positional form new AniLink(token, options) for AniList).',
    );
  }
  for (const key of readGuarded(first, 'AniLink: credentials', Object.keys)) {
    if (!CREDENTIAL_KEYS.includes(key)) {
      throw new TypeError(`AniLink: unknown credentials key "${key}". Valid keys are: ${CREDENTIAL_KEYS.join(', ')}.`);
    }
  }
  const member = (key) => readGuarded(first, `AniLink: credentials.${key}`, (credentials) => credentials[key]);
  const clientLevel = CLIENT_LEVEL_KEYS.map((key) => [key, member(key)]);
  const slots = {};
  for (const provider of ['anilist', 'mal']) {
    const given = member(provider);
    if (given !== undefined && !isObject(given)) {
      throw new TypeError(`AniLink: credentials.${provider} must be an object (received ${describeValue(given)}).`);
    }
    const slot = given === undefined ? {} : guardedCopy(given, `AniLink: credentials.${provider}`);
    // Client-level observers are defaults for slots that do not set their own.
    for (const [key, value] of clientLevel) {
      if (value !== undefined && !Object.hasOwn(slot, key)) slot[key] = value;
    }
    slots[provider] = slot;
  }
  return slots;
}

function createNative(provider, options) {
  // Outside the try: the addon loads with these modules, and an addon that cannot load says so
  // with its own error.
  const { createNativeClient } = clientModules();
  const { deliver } = callModule();
  try {
    return createNativeClient(provider, options, deliver);
  } catch (error) {
    // A nested option that could not be read is the binding's failure description (with the thrown value as its cause).
    if (error?.code === contract.typeErrorCode) throw fromDescription(error);
    throw new TypeError(error instanceof Error ? error.message : String(error));
  }
}

/** Start a catalog operation natively, its arguments and `fields` as JSON text (lib/json-text.cjs). */
function startOperation(client, key, input, callOptions, callId, flags) {
  const writer = new (jsonTextModule().JsonWriter)();
  const inputText = writer.text(input, '');
  const fieldsText = writer.text(callOptions?.fields, 'fields');
  addon().startOperation(client.nativeId, key, inputText, fieldsText, writer.problems, callOptions, callId, flags);
}

/** A call of a provider client, through its token refresher when it has one. */
function clientCall(client, options, start, operation) {
  const { runCall } = callModule();
  if (client.refresher === undefined) return runCall(client, options, start, operation);
  return client.refresher.run(() => runCall(client, options, start, operation));
}

function createAniListApi(client) {
  const query = {};
  const page = {};
  const mutation = {};
  for (const operation of addon().anilistOperations()) {
    const path = operation.key.split('.');
    const group = path[0] === 'mutation' ? mutation : path[1] === 'page' ? page : query;
    const key = operation.key;
    group[path[path.length - 1]] = (variables, options) =>
      clientCall(
        client,
        options,
        (callOptions, callId, flags) => startOperation(client, key, variables, callOptions, callId, flags),
        key,
      );
  }
  Object.defineProperty(query, 'page', { value: page, enumerable: true, writable: false, configurable: false });

  const custom = (document, variables, options) =>
    clientCall(
      client,
      options,
      (callOptions, callId, flags) => {
        const { documentText, JsonWriter } = jsonTextModule();
        const text = documentText(document);
        const writer = new JsonWriter();
        const variablesText = writer.text(variables, 'variables');
        addon().startCustom(client.nativeId, text, variablesText, writer.problems, callOptions, callId, flags);
      },
      'custom',
    );

  /** A caller-written `Page` query, walked page by page (api.md §8). */
  const customPage = async (document, itemsKey, variables, options = {}) => {
    let text;
    try {
      text = jsonTextModule().documentText(document);
    } catch (description) {
      throw fromDescription(description);
    }
    const problems = addon().checkCustomPageDocument(text);
    if (problems) throw new AniLinkValidationError(problems);
    const { transportOptions, ...paginateOptions } = options ?? {};
    const fetchPage = async (pageNumber, perPage, signal) => {
      const pageValue = await custom(
        document,
        { ...(variables ?? {}), page: pageNumber, perPage },
        { ...transportOptions, ...(signal ? { signal } : {}) },
      );
      if (!pageValue || !Array.isArray(pageValue[itemsKey])) {
        throw new AniLinkValidationError([`The page response has no "${itemsKey}" list.`]);
      }
      return pageValue;
    };
    return onDemand.paginate(fetchPage, itemsKey, paginateOptions);
  };

  return {
    query,
    mutation,
    custom,
    customPage,
    paginate: onDemand.paginate,
    paginatePages: onDemand.paginatePages,
    paginateChunks: onDemand.paginateChunks,
    fuzzyDate: helpers.fuzzyDate,
    fuzzyDateInt: helpers.fuzzyDateInt,
    flattenMediaListCollection: helpers.flattenMediaListCollection,
    crossLink: helpers.crossLink,
    mapExternalIds: bindMapExternalIds(client.options),
    watch: clientModules().createWatch(page),
  };
}

/**
 * The params object of a call in the positional form of the published 2.x line (decisions
 * D25): `(id, options?)` or `(id, payload, options?)`, told apart from the object form
 * (`({ id, ... }, options?)`) by a first argument that is not an object.
 */
function fromLegacyArguments(legacy, args) {
  const [id, second, third] = args;
  if (legacy === 'id') return { params: { id }, options: second };
  if (second !== undefined && !isObject(second)) {
    throw new AniLinkValidationError([
      `Invalid payload: expected an object of list-status fields (received ${describeValue(second)}).`,
    ]);
  }
  return { params: { ...second, id }, options: third };
}

function createMalApi(client) {
  const api = { anime: {}, manga: {}, user: {}, forum: {} };
  for (const operation of addon().malOperations()) {
    const [group, name] = operation.key.split('.');
    const key = operation.key;
    const call = (params, options) =>
      clientCall(
        client,
        options,
        (callOptions, callId, flags) => startOperation(client, key, params, callOptions, callId, flags),
        key,
      );
    const legacy = operation.legacyArguments;
    let member = call;
    if (operation.optionsFirst) member = (options) => call(undefined, options);
    else if (legacy !== undefined && legacy !== null) {
      member = (...args) => {
        if (args[0] === undefined || args[0] === null || typeof args[0] === 'object') return call(args[0], args[1]);
        try {
          const { params, options } = fromLegacyArguments(legacy, args);
          return call(params, options);
        } catch (error) {
          return Promise.reject(error);
        }
      };
    }
    api[group] ??= {};
    api[group][name] = member;
  }
  api.paginate = onDemand.malPaginate;
  api.paginatePages = onDemand.malPaginatePages;
  api.auth = { buildAuthorizationUrl: helpers.buildMalAuthorizationUrl, exchangeCode: getMalAccessToken };
  return api;
}

/**
 * A provider client: the native client (and its id, which the functions that start calls
 * take), token refresher and options of one slot.
 */
function createProviderClient(provider, options) {
  const nativeClient = createNative(provider, options);
  const client = { provider, options, native: nativeClient, nativeId: nativeClient.id };
  client.refresher = clientModules().createRefresher(provider, client);
  return client;
}

/** Both provider clients from their slots, with their state owners (api.md §11). */
function clientsFromSlots(slotOptions) {
  const anilist = createProviderClient('anilist', slotOptions.anilist);
  const mal = createProviderClient('mal', slotOptions.mal);
  const { createStateOwner } = clientModules().transportState;
  const clients = {
    anilist: createAniListApi(anilist),
    mal: createMalApi(mal),
    stateOwners: Object.freeze({ anilist: createStateOwner(anilist.native), mal: createStateOwner(mal.native) }),
  };
  const caches = {};
  for (const [provider, options] of Object.entries(slotOptions)) {
    if (options.responseCache) caches[provider] = options.responseCache;
  }
  if (Object.keys(caches).length > 0) clients.responseCaches = Object.freeze(caches);
  return clients;
}

/**
 * The provider clients an `AniLink` is made of, from a credentials object: `{ anilist, mal,
 * stateOwners, responseCaches? }`. `legacyOptions` (the positional form's transport options)
 * apply to AniList when its slot carries no transport setting of its own.
 */
function buildProviderClients(credentials, legacyOptions) {
  if (credentials !== undefined && !isObject(credentials)) {
    throw new TypeError(
      'buildProviderClients: credentials must be an object ({ anilist, mal, onHookError, diagnostics }).',
    );
  }
  if (legacyOptions !== undefined && !isObject(legacyOptions)) {
    throw new TypeError('buildProviderClients: legacyOptions must be an object of transport options.');
  }
  const slots = slotsFromArguments(credentials ?? {});
  const { CREDENTIAL_FIELDS } = require('./external.cjs');
  if (legacyOptions !== undefined && Object.keys(slots.anilist).every((key) => CREDENTIAL_FIELDS.includes(key))) {
    slots.anilist = { ...legacyOptions, ...slots.anilist };
  }
  return clientsFromSlots(slots);
}

/**
 * A MyAnimeList client alone, from a MAL credentials slot. `stateOwner`, when given, is bound to
 * it so that `snapshotTransportState(stateOwner)` reads its state.
 */
function buildMyAnimeListApi(credentials, stateOwner) {
  if (credentials !== undefined && !isObject(credentials)) {
    throw new TypeError('buildMyAnimeListApi: credentials must be an object (a MyAnimeList credentials slot).');
  }
  const client = createProviderClient(
    'mal',
    credentials === undefined ? {} : guardedCopy(credentials, 'buildMyAnimeListApi: credentials'),
  );
  if (stateOwner !== undefined) clientModules().transportState.bindStateOwner(stateOwner, client.native);
  return createMalApi(client);
}

class AniLink {
  #stateOwners;

  /**
   * @param {string | object} [authToken] an AniList token, or credentials `{ anilist, mal, onHookError, diagnostics }`
   * @param {object} [options] transport options for AniList (positional form only)
   */
  constructor(authToken, options) {
    const clients = clientsFromSlots(slotsFromArguments(authToken, options));
    this.#stateOwners = clients.stateOwners;
    this.anilist = clients.anilist;
    this.mal = clients.mal;
  }

  /** A deep-frozen copy of each provider's breaker, budget and pacing state (api.md §6). */
  getTransportState() {
    return Object.freeze({
      anilist: onDemand.snapshotTransportState(this.#stateOwners.anilist),
      mal: onDemand.snapshotTransportState(this.#stateOwners.mal),
    });
  }
}

module.exports = { AniLink, buildProviderClients, buildMyAnimeListApi };
