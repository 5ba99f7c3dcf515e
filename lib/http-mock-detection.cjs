'use strict';
// Whether an HTTP-mocking library is intercepting Node's http/https or fetch in this process.
// AniLink's requests leave through native sockets, so such mocks never see them: the first call
// made while one is active gets a `http-mock` diagnostic, once per process (per module instance).
//
// Detected: @mswjs/interceptors (msw 2's setupServer, nock 14+), which registers each applied
// interceptor on globalThis under Symbol.for keys; a replaced http.ClientRequest (nock 13 and
// earlier, and other patchers of it), seen against Node's own class in _http_client; undici's
// MockAgent installed as the global dispatcher of fetch. Not detectable: axios-mock-adapter and
// other mocks that replace one library's adapter, not Node's http or fetch.

const http = require('node:http');
const { ClientRequest: NODE_CLIENT_REQUEST } = require('node:_http_client');
const { reportDiagnostic } = require('./diagnostics.cjs');

const CLIENT_REQUEST_INTERCEPTOR = Symbol.for('client-request-interceptor');
const FETCH_INTERCEPTOR = Symbol.for('fetch-interceptor');
const UNDICI_GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

let reported = false;
/** What the last full check saw; while both are unchanged, no mock can have been activated since. */
let checked = false;
let seenClientRequest;
let seenFetch;

/** What is intercepting HTTP in this process, or undefined. */
function activeHttpMock() {
  if (globalThis[CLIENT_REQUEST_INTERCEPTOR] !== undefined || globalThis[FETCH_INTERCEPTOR] !== undefined) {
    return '@mswjs/interceptors, as used by msw and nock 14+, patches http, https and fetch';
  }
  if (http.ClientRequest !== NODE_CLIENT_REQUEST) return 'http.ClientRequest is replaced, as nock 13 and earlier do';
  const dispatcher = globalThis[UNDICI_GLOBAL_DISPATCHER];
  if (dispatcher !== undefined && dispatcher.constructor?.name === 'MockAgent') {
    return "undici's MockAgent is the global dispatcher of fetch";
  }
  return undefined;
}

/**
 * Report an active HTTP mock through the call's diagnostics route, the first time a call sees one.
 * @param {{ option(key: string): unknown }} call the call being started (its per-request and slot options)
 */
function reportHttpMockOnce(call) {
  if (reported) return;
  // Every interceptor named above replaces http.ClientRequest or fetch (MockAgent: only noticed
  // when installed before the first call, or together with a change of those); two identity
  // checks per call instead of the global lookups, which cost about 0.1 µs.
  if (checked && http.ClientRequest === seenClientRequest && globalThis.fetch === seenFetch) return;
  checked = true;
  seenClientRequest = http.ClientRequest;
  seenFetch = globalThis.fetch;
  const mock = activeHttpMock();
  if (mock === undefined) return;
  reported = true;
  const message =
    `An HTTP-mocking library is active (${mock}), but AniLink sends its requests through native sockets ` +
    'that it cannot see: this call goes to the real endpoint (or its baseUrl) unmocked. Script AniList and MAL ' +
    'answers with anilink-api-wrapper/testing instead (README: "Testing your code"). Shown once per process.';
  const record = { source: 'anilink', kind: 'http-mock', hookName: 'httpMockDetection', message };
  reportDiagnostic(record, undefined, {
    onHookError: call.option('onHookError'),
    diagnostics: call.option('diagnostics'),
  });
}

module.exports = { reportHttpMockOnce, activeHttpMock };
