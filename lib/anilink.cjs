'use strict';
// The AniLink class: constructor forms (api.md §2), provider slots, and the `anilist` and `mal`
// namespaces built from the native catalogs.

const native = require('./native.cjs');
const { runCall, deliver } = require('./call.cjs');
const { createRefresher } = require('./refresh.cjs');
const { createWatch } = require('./watch.cjs');
const { AniLinkValidationError } = require('./errors.cjs');
const pagination = require('./paginate.cjs');
const helpers = require('./helpers.cjs');

const { isObject } = helpers;

const CREDENTIAL_KEYS = ['anilist', 'mal', 'onHookError', 'diagnostics'];
const CLIENT_LEVEL_KEYS = ['onHookError', 'diagnostics'];

/** What a value is, never what it says: a misplaced argument may be a token (decisions D31). */
function describeValue(value) {
  return helpers.describeKind(value);
}

/** Slot objects for both providers from the constructor's arguments. */
function slotsFromArguments(first, second) {
  if (first === undefined || typeof first === 'string') {
    if (second !== undefined && !isObject(second)) {
      throw new TypeError(`AniLink: options must be an object (received ${describeValue(second)}).`);
    }
    // Positional form: the options configure AniList only.
    const anilist = { ...(second ?? {}) };
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
  for (const key of Object.keys(first)) {
    if (!CREDENTIAL_KEYS.includes(key)) {
      throw new TypeError(`AniLink: unknown credentials key "${key}". Valid keys are: ${CREDENTIAL_KEYS.join(', ')}.`);
    }
  }
  const slots = {};
  for (const provider of ['anilist', 'mal']) {
    const given = first[provider];
    if (given !== undefined && !isObject(given)) {
      throw new TypeError(`AniLink: credentials.${provider} must be an object (received ${describeValue(given)}).`);
    }
    const slot = { ...(given ?? {}) };
    // Client-level observers are defaults for slots that do not set their own.
    for (const key of CLIENT_LEVEL_KEYS) {
      if (first[key] !== undefined && !Object.prototype.hasOwnProperty.call(slot, key)) slot[key] = first[key];
    }
    slots[provider] = slot;
  }
  return slots;
}

function createNative(provider, options) {
  try {
    return native.NativeClient.create(provider, options, deliver);
  } catch (error) {
    throw new TypeError(error instanceof Error ? error.message : String(error));
  }
}

/** A call of a slot, through its token refresher when it has one. */
function slotCall(slot, options, start) {
  if (slot.refresher === undefined) return runCall(slot, options, start);
  return slot.refresher.run(() => runCall(slot, options, start));
}

function createAniListApi(slot) {
  const query = {};
  const page = {};
  const mutation = {};
  for (const operation of native.anilistOperations()) {
    const path = operation.key.split('.');
    const group = path[0] === 'mutation' ? mutation : path[1] === 'page' ? page : query;
    const key = operation.key;
    group[path[path.length - 1]] = (variables, options) =>
      slotCall(slot, options, (callOptions, callId, flags) =>
        slot.native.operation(key, variables, callOptions?.fields, callOptions, callId, flags),
      );
  }
  Object.defineProperty(query, 'page', { value: page, enumerable: true, writable: false, configurable: false });

  const custom = (document, variables, options) =>
    slotCall(slot, options, (callOptions, callId, flags) =>
      slot.native.custom(String(document), variables, callOptions, callId, flags),
    );

  /** A caller-written `Page` query, walked page by page (api.md §8). */
  const customPage = async (document, itemsKey, variables, options = {}) => {
    const problems = native.checkCustomPageDocument(String(document));
    if (problems) throw new AniLinkValidationError(problems);
    const { transportOptions, ...paginateOptions } = options ?? {};
    const fetchPage = async (pageNumber, perPage, signal) => {
      const pageValue = await custom(document, { ...(variables ?? {}), page: pageNumber, perPage }, { ...transportOptions, ...(signal ? { signal } : {}) });
      if (!pageValue || !Array.isArray(pageValue[itemsKey])) {
        throw new AniLinkValidationError([`The page response has no "${itemsKey}" list.`]);
      }
      return pageValue;
    };
    return pagination.paginate(fetchPage, itemsKey, paginateOptions);
  };

  return {
    query,
    mutation,
    custom,
    customPage,
    paginate: pagination.paginate,
    paginatePages: pagination.paginatePages,
    paginateChunks: pagination.paginateChunks,
    fuzzyDate: helpers.fuzzyDate,
    fuzzyDateInt: helpers.fuzzyDateInt,
    flattenMediaListCollection: helpers.flattenMediaListCollection,
    crossLink: helpers.crossLink,
    watch: createWatch(page),
  };
}

function createMalApi(slot) {
  const api = { anime: {}, manga: {}, user: {}, forum: {} };
  for (const operation of native.malOperations()) {
    const [group, name] = operation.key.split('.');
    const key = operation.key;
    const call = (params, options) =>
      slotCall(slot, options, (callOptions, callId, flags) =>
        slot.native.operation(key, params, callOptions?.fields, callOptions, callId, flags),
      );
    (api[group] ??= {})[name] = operation.optionsFirst ? (options) => call(undefined, options) : call;
  }
  api.paginate = pagination.malPaginate;
  api.paginatePages = pagination.malPaginatePages;
  return api;
}

function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

class AniLink {
  #slots;

  /**
   * @param {string | object} [authToken] an AniList token, or credentials `{ anilist, mal, onHookError, diagnostics }`
   * @param {object} [options] transport options for AniList (positional form only)
   */
  constructor(authToken, options) {
    const slots = slotsFromArguments(authToken, options);
    this.#slots = {
      anilist: { options: slots.anilist, native: createNative('anilist', slots.anilist) },
      mal: { options: slots.mal, native: createNative('mal', slots.mal) },
    };
    for (const provider of ['anilist', 'mal']) {
      this.#slots[provider].refresher = createRefresher(provider, this.#slots[provider]);
    }
    this.anilist = createAniListApi(this.#slots.anilist);
    this.mal = createMalApi(this.#slots.mal);
  }

  /** A deep-frozen copy of each provider's breaker, budget and pacing state (api.md §6). */
  getTransportState() {
    return deepFreeze({
      anilist: this.#slots.anilist.native.snapshot(),
      mal: this.#slots.mal.native.snapshot(),
    });
  }
}

module.exports = { AniLink };
