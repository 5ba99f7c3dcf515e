'use strict';
// Whether an HTTP-mocking library is intercepting Node's http/https or fetch in this process.
// AniLink's requests leave through native sockets, so such mocks never see them: the first call
// made while one is active gets a `http-mock` diagnostic, once per process (per module instance).
//
// Detected:
// - @mswjs/interceptors 0.44 and later (msw 3, nock 15, and the library used directly): each
//   applied interceptor sits in a registry on globalThis with readyState "ACTIVE";
// - earlier @mswjs/interceptors (msw 2, nock 14): each applied interceptor under a Symbol.for
//   key on globalThis;
// - a replaced http.ClientRequest (nock 13 and earlier, and other patchers of it);
// - undici's MockAgent installed as the global dispatcher of fetch.
// Not detectable: axios-mock-adapter and other mocks that replace one library's adapter, not
// Node's http or fetch.
//
// Nothing is loaded at import, and node:http only once something else in the process has
// loaded it.

const { reportDiagnostic } = require('./diagnostics.cjs');

const INTERCEPTORS_REGISTRY = '__MSW_INTERCEPTORS_REGISTRY';
const CLIENT_REQUEST_INTERCEPTOR = Symbol.for('client-request-interceptor');
const FETCH_INTERCEPTOR = Symbol.for('fetch-interceptor');
// undici 7 and later set the first; Node's own fetch and earlier undici read the second.
const NEW_DISPATCHER = Symbol.for('undici.globalDispatcher.2');
const OLD_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

/** node:http, once this process has loaded it. */
let http;

/**
 * node:http if the process has loaded it, else undefined: nobody can have patched a module
 * nobody loaded, and loading it costs milliseconds (issue 40). Node lists the built-ins it has
 * loaded; Bun and Deno keep that list empty, so there it is loaded (cheaply).
 */
function httpIfLoaded() {
  if (http === undefined) {
    const loaded = process.moduleLoadList;
    const listed = Array.isArray(loaded) && loaded.length > 0;
    if (!listed || loaded.includes('NativeModule http')) http = require('node:http');
  }
  return http;
}

/** What a later load or patch of node:http changes: its ClientRequest, or Node's count of loaded built-ins. */
function httpState() {
  return http === undefined ? process.moduleLoadList.length : http.ClientRequest;
}

/**
 * Whether http.ClientRequest is not the runtime's own class: that one's prototype comes
 * straight from OutgoingMessage's (in Node, Bun and Deno alike), a replacement's does not
 * (nock 13 subclasses it, others wrap it).
 */
function clientRequestReplaced() {
  const loaded = httpIfLoaded();
  return (
    loaded !== undefined && Object.getPrototypeOf(loaded.ClientRequest.prototype) !== loaded.OutgoingMessage.prototype
  );
}

function activeInterceptors() {
  const registry = globalThis[INTERCEPTORS_REGISTRY];
  if (!(registry instanceof Map)) return false;
  for (const interceptor of registry.values()) if (interceptor?.readyState === 'ACTIVE') return true;
  return false;
}

function mockAgentInstalled() {
  return [NEW_DISPATCHER, OLD_DISPATCHER].some((key) => globalThis[key]?.constructor?.name === 'MockAgent');
}

/** What is intercepting HTTP in this process, or undefined. */
function activeHttpMock() {
  if (activeInterceptors()) {
    return '@mswjs/interceptors, as used by msw 3 and nock 15, patches sockets and fetch';
  }
  if (globalThis[CLIENT_REQUEST_INTERCEPTOR] !== undefined || globalThis[FETCH_INTERCEPTOR] !== undefined) {
    return '@mswjs/interceptors, as used by msw 2 and nock 14, patches http, https and fetch';
  }
  if (clientRequestReplaced()) return 'http.ClientRequest is replaced, as nock 13 and earlier do';
  if (mockAgentInstalled()) return "undici's MockAgent is the global dispatcher of fetch";
  return undefined;
}

let reported = false;
/** What the last full check saw; while all are unchanged, no mock can have been activated since. */
let checked = false;
let seenHttp;
let seenFetch;
let seenNewDispatcher;
let seenOldDispatcher;

/**
 * Report an active HTTP mock through the call's diagnostics route, the first time a call sees one.
 * @param {{ option(key: string): unknown }} call the call being started (its per-request and slot options)
 */
function reportHttpMockOnce(call) {
  if (reported) return;
  // Every mock named above replaces http.ClientRequest, fetch or a global dispatcher, or is
  // marked active in the interceptors' registry: cheap looks per call, the full one on a change.
  if (
    checked &&
    httpState() === seenHttp &&
    globalThis.fetch === seenFetch &&
    globalThis[NEW_DISPATCHER] === seenNewDispatcher &&
    globalThis[OLD_DISPATCHER] === seenOldDispatcher &&
    !activeInterceptors()
  ) {
    return;
  }
  const mock = activeHttpMock();
  checked = true;
  seenHttp = httpState();
  seenFetch = globalThis.fetch;
  seenNewDispatcher = globalThis[NEW_DISPATCHER];
  seenOldDispatcher = globalThis[OLD_DISPATCHER];
  if (mock === undefined) return;
  reported = true;
  const message =
    `An HTTP-mocking library is active (${mock}), but AniLink sends its requests through native sockets ` +
    'that it cannot see: this call goes to the real endpoint (or its baseUrl) unmocked. Script AniList and MAL ' +
    'answers with anilink-api-wrapper/testing instead (docs/testing.md). Shown once per process.';
  const record = { source: 'anilink', kind: 'http-mock', hookName: 'httpMockDetection', message };
  reportDiagnostic(record, undefined, {
    onHookError: call.option('onHookError'),
    diagnostics: call.option('diagnostics'),
  });
}

module.exports = { reportHttpMockOnce };
