'use strict';
// A local stand-in for AniList and MyAnimeList in users' tests: answers queued per AniList
// operation or MAL path, played by the scripted server, and a record of every request.

const http = require('node:http');
const { startScriptedServer, rateLimitHeaders } = require('./scripted-server.cjs');
const { describeOperation } = require('./graphql-operation.cjs');
const { AniLink } = require('../anilink.cjs');
const { TESTING_GUIDANCE_KEY } = require('../errors.cjs');

const ANILIST_PATH = '/anilist';
const MAL_PATH = '/mal/v2';
/** Not in any default `retryOnStatus`, so an unscripted request fails at once. */
const UNSCRIPTED_STATUS = 501;
const TEST_MAL_CLIENT_ID = 'anilink-test-client-id';
const ANY = '*';

const DELIVERY_KEYS = [
  'status',
  'headers',
  'rateLimit',
  'retryAfter',
  'delayMs',
  'bodyDelayMs',
  'trickle',
  'drop',
  'hang',
  'closeAfter',
  'body',
];
const ANSWER_KEYS = {
  anilist: ['data', 'errors', 'extensions', ...DELIVERY_KEYS],
  mal: DELIVERY_KEYS,
};
const DROP_MODES = ['before-response', 'mid-body'];

function typeError(provider, message) {
  return new TypeError(`anilink-api-wrapper/testing: ${provider === 'anilist' ? 'AniList' : 'MAL'} answer: ${message}`);
}

/** Check an answer when it is queued, so a typo fails the test where it was written. */
function checkAnswer(provider, answer) {
  if (typeof answer === 'function') return;
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) {
    throw typeError(
      provider,
      `expected an object or a function returning one (received ${answer === null ? 'null' : typeof answer}).`,
    );
  }
  const valid = ANSWER_KEYS[provider];
  for (const key of Object.keys(answer)) {
    if (!valid.includes(key)) throw typeError(provider, `unknown key "${key}". Valid keys are: ${valid.join(', ')}.`);
  }
  const { status, retryAfter, delayMs, drop, errors, rateLimit } = answer;
  if (status !== undefined && !(Number.isInteger(status) && status >= 100 && status <= 599)) {
    throw typeError(provider, `status must be an integer from 100 to 599 (received ${JSON.stringify(status)}).`);
  }
  if (retryAfter !== undefined && typeof retryAfter !== 'string' && !(Number.isFinite(retryAfter) && retryAfter >= 0)) {
    throw typeError(provider, 'retryAfter must be seconds (a finite number >= 0) or a string sent as is.');
  }
  if (delayMs !== undefined && !(Number.isFinite(delayMs) && delayMs >= 0)) {
    throw typeError(provider, 'delayMs must be a finite number >= 0.');
  }
  if (drop !== undefined && !DROP_MODES.includes(drop)) {
    throw typeError(provider, `drop must be one of ${DROP_MODES.map((mode) => `"${mode}"`).join(', ')}.`);
  }
  if (
    errors !== undefined &&
    !(Array.isArray(errors) && errors.every((entry) => entry && typeof entry.message === 'string'))
  ) {
    throw typeError(provider, 'errors must be an array of GraphQL error entries, each with a string `message`.');
  }
  if (
    rateLimit !== undefined &&
    !(rateLimit && Number.isInteger(rateLimit.limit) && Number.isInteger(rateLimit.remaining))
  ) {
    throw typeError(provider, 'rateLimit must be { limit, remaining, reset? } with integer limit and remaining.');
  }
}

function epochSeconds(reset) {
  return reset instanceof Date ? Math.ceil(reset.getTime() / 1000) : reset;
}

/** The HTTP status of an AniList answer: as given, else AniList's rule (the first error's status). */
function aniListStatus(answer) {
  if (answer.status !== undefined) return answer.status;
  const first = answer.errors?.[0]?.status;
  return Number.isInteger(first) && first >= 100 && first <= 599 ? first : 200;
}

/** MAL's error body for a status without a scripted body, e.g. `{ error: "not_found", message: "" }`. */
function malErrorBody(status) {
  const reason = (http.STATUS_CODES[status] ?? 'error').toLowerCase().replace(/[^a-z0-9]+/g, '_');
  return { error: reason, message: '' };
}

/** An answer as the scripted server plays it. */
function toScripted(provider, answer) {
  const { rateLimit, retryAfter, data, errors, extensions, ...delivery } = answer;
  const headers = {};
  if (rateLimit)
    Object.assign(headers, rateLimitHeaders(rateLimit.limit, rateLimit.remaining, epochSeconds(rateLimit.reset)));
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  Object.assign(headers, answer.headers);
  const scripted = { ...delivery, headers };
  if (provider === 'anilist') {
    scripted.status = aniListStatus(answer);
    if (answer.body === undefined) {
      scripted.body = errors === undefined ? { data: data ?? null } : { errors, data: data ?? null };
      if (extensions !== undefined) scripted.body.extensions = extensions;
    }
  } else {
    scripted.status = answer.status ?? 200;
    if (answer.body === undefined && scripted.status >= 400) scripted.body = malErrorBody(scripted.status);
  }
  return scripted;
}

/** Per-key answer queues and standing answers of one provider. */
function createRoutes(provider) {
  const queued = new Map();
  const standing = new Map();

  function checkKey(key) {
    if (typeof key !== 'string' || key.trim() === '') {
      const what =
        provider === 'anilist'
          ? 'an operation name or root field (e.g. "Media")'
          : 'a path (e.g. "/anime/1" or "GET /anime/1")';
      throw typeError(provider, `the key must be ${what}, or "*" for any request.`);
    }
  }

  return {
    reply(key, answers) {
      checkKey(key);
      for (const answer of answers) checkAnswer(provider, answer);
      if (!queued.has(key)) queued.set(key, []);
      queued.get(key).push(...answers);
    },
    replyAlways(key, answer) {
      checkKey(key);
      checkAnswer(provider, answer);
      standing.set(key, answer);
    },
    /** The first queued answer for any of `keys` (in order, then `*`), else a standing one. */
    take(keys) {
      for (const key of [...keys, ANY]) {
        const answers = queued.get(key);
        if (answers?.length) return answers.shift();
      }
      for (const key of [...keys, ANY]) if (standing.has(key)) return standing.get(key);
      return undefined;
    },
    pending() {
      return [...queued]
        .filter(([, answers]) => answers.length > 0)
        .map(([key, answers]) => ({ provider, key, count: answers.length }));
    },
    clear() {
      queued.clear();
      standing.clear();
    },
  };
}

function describeAniListRequest(recorded) {
  const json = recorded.json && typeof recorded.json === 'object' ? recorded.json : {};
  const document = typeof json.query === 'string' ? json.query : '';
  const requestedName = typeof json.operationName === 'string' ? json.operationName : undefined;
  const { operationName, rootFields } = describeOperation(document, requestedName);
  const variables = json.variables && typeof json.variables === 'object' ? json.variables : {};
  return { ...recorded, provider: 'anilist', document, operationName, rootFields, variables };
}

/** `root field "Media"` or `root fields "Media", "Page"`. */
function rootFieldsPhrase(fields) {
  return `${fields.length > 1 ? 'root fields' : 'root field'} ${fields.map((field) => JSON.stringify(field)).join(', ')}`;
}

/**
 * A request as a person tells it apart: an AniList operation name (left out where it only
 * repeats the one root field, as the catalog's documents are named) and root fields, a MAL
 * method and path.
 */
function requestLabel(request) {
  if (request.provider !== 'anilist') return `MAL ${request.method} ${request.path}`;
  const { operationName, rootFields } = request;
  const named = operationName !== undefined && !(rootFields.length === 1 && rootFields[0] === operationName);
  if (named) {
    return `AniList operation ${JSON.stringify(operationName)}${rootFields.length ? ` (${rootFieldsPhrase(rootFields)})` : ''}`;
  }
  if (rootFields.length) return `AniList ${rootFieldsPhrase(rootFields)}`;
  return 'AniList request without an operation name or root field';
}

/**
 * The answer to an unscripted request: a 501 (retried by no default) that says what to queue,
 * in the provider's error shape and under the key the client puts in the error's message.
 */
function unscripted(provider, request) {
  const label = requestLabel(request);
  const suggestion =
    provider === 'anilist'
      ? `upstream.anilist.reply(${JSON.stringify(request.operationName ?? request.rootFields[0] ?? ANY)}, { data: { … } })`
      : `upstream.mal.reply(${JSON.stringify(request.path)}, { body: { … } })`;
  const message = `anilink-api-wrapper/testing: no answer queued for ${label}. Queue one with ${suggestion}.`;
  const body =
    provider === 'anilist'
      ? { errors: [{ message, status: UNSCRIPTED_STATUS }], data: null }
      : { error: 'not_scripted', message };
  return { status: UNSCRIPTED_STATUS, body: { ...body, [TESTING_GUIDANCE_KEY]: message } };
}

/**
 * Start a local AniList + MAL upstream on 127.0.0.1.
 * @param {{ keepAliveTimeoutMs?: number }} [options]
 */
async function startTestUpstream(options = {}) {
  const server = await startScriptedServer(options);
  const routes = { anilist: createRoutes('anilist'), mal: createRoutes('mal') };
  const records = { all: [], anilist: [], mal: [], unmatched: [] };

  function route(recorded) {
    let provider;
    let request;
    let keys;
    if (recorded.path === ANILIST_PATH) {
      provider = 'anilist';
      request = describeAniListRequest(recorded);
      keys = [request.operationName, ...request.rootFields].filter(Boolean);
    } else if (recorded.path.startsWith(`${MAL_PATH}/`)) {
      provider = 'mal';
      request = { ...recorded, provider, path: recorded.path.slice(MAL_PATH.length) };
      keys = [`${request.method} ${request.path}`, request.path];
    } else {
      records.all.push(recorded);
      records.unmatched.push(recorded);
      const message = `anilink-api-wrapper/testing: ${recorded.path} is neither ${ANILIST_PATH} (AniList) nor under ${MAL_PATH}/ (MAL); point clients at upstream.anilist.url and upstream.mal.url.`;
      return { status: 404, body: { message } };
    }
    records.all.push(request);
    records[provider].push(request);
    const answer = routes[provider].take(keys);
    if (answer === undefined) {
      records.unmatched.push(request);
      return unscripted(provider, request);
    }
    const resolved = typeof answer === 'function' ? answer(request) : answer;
    checkAnswer(provider, resolved);
    return toScripted(provider, resolved);
  }
  server.handle(route);

  function providerApi(provider, url) {
    const api = {
      url,
      requests: records[provider],
      reply(key, ...answers) {
        routes[provider].reply(key, answers);
        return api;
      },
      replyAlways(key, answer) {
        routes[provider].replyAlways(key, answer);
        return api;
      },
    };
    return api;
  }

  const pending = () => [...routes.anilist.pending(), ...routes.mal.pending()];
  const upstream = {
    url: server.url,
    host: server.host,
    anilist: providerApi('anilist', `${server.url}${ANILIST_PATH}`),
    mal: providerApi('mal', `${server.url}${MAL_PATH}`),
    requests: records.all,
    unmatched: records.unmatched,
    pending,
    assertDone() {
      const left = pending();
      if (left.length === 0 && records.unmatched.length === 0) return;
      const parts = left.map(
        ({ provider, key, count }) => `${count} ${provider} answer(s) for ${JSON.stringify(key)} never requested`,
      );
      for (const request of records.unmatched)
        parts.push(
          request.provider === undefined
            ? `request ${request.method} ${request.path} outside both providers`
            : `unscripted ${requestLabel(request)}`,
        );
      throw new Error(`anilink-api-wrapper/testing: ${parts.join('; ')}.`);
    },
    client(credentials = {}) {
      const { anilist, mal, ...clientLevel } = credentials;
      return new AniLink({
        ...clientLevel,
        anilist: { baseUrl: upstream.anilist.url, ...anilist },
        mal: { baseUrl: upstream.mal.url, clientId: TEST_MAL_CLIENT_ID, ...mal },
      });
    },
    waitForRequests: (n, timeoutMs) => server.waitForRequests(n, timeoutMs),
    connections: server.connections,
    openConnections: server.openConnections,
    reset() {
      routes.anilist.clear();
      routes.mal.clear();
      for (const list of Object.values(records)) list.length = 0;
      server.reset();
      server.handle(route);
    },
    close: server.close,
  };
  if (typeof Symbol.asyncDispose === 'symbol') upstream[Symbol.asyncDispose] = server.close;
  return upstream;
}

module.exports = { startTestUpstream, TEST_MAL_CLIENT_ID };
