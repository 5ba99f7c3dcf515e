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

const INTERCEPTOR_KEYS = [
  Symbol.for('client-request-interceptor'),
  Symbol.for('fetch-interceptor'),
  Symbol.for('xhr-interceptor'),
];
const UNDICI_GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

let reported = false;

/** What is intercepting HTTP in this process, or undefined. A few property reads: cheap per call. */
function activeHttpMock() {
  if (INTERCEPTOR_KEYS.some((key) => globalThis[key] !== undefined)) {
    return '@mswjs/interceptors, as used by msw and nock 14+, patches http, https and fetch';
  }
  if (http.ClientRequest !== NODE_CLIENT_REQUEST) return 'http.ClientRequest is replaced, as nock 13 and earlier do';
  if (globalThis[UNDICI_GLOBAL_DISPATCHER]?.constructor?.name === 'MockAgent') {
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
  const mock = activeHttpMock();
  if (mock === undefined) return;
  reported = true;
  const message =
    `An HTTP-mocking library is active (${mock}), but AniLink sends its requests through native sockets ` +
    'that it cannot see: this call goes to the real endpoint (or its baseUrl) unmocked. Script AniList and MAL ' +
    'answers with anilink-api-wrapper/testing instead (README: "Testing your code"). Shown once per process.';
  const record = { source: 'anilink', kind: 'http-mock', hookName: 'httpMockDetection', message };
  reportDiagnostic(record, undefined, { onHookError: call.option('onHookError'), diagnostics: call.option('diagnostics') });
}

module.exports = { reportHttpMockOnce, activeHttpMock };
