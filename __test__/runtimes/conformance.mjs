// The runtime conformance program (scripts/test-runtimes.mjs runs it under Node, Bun and Deno
// from a consumer folder of its own): one program, unchanged, whose printed results must be
// the same on every runtime. Times are turned into yes/no with wide margins; the only
// difference allowed is the `runtime` line. It never calls process.exit: the runner checks that
// the process ends by itself once its servers are closed.
//
// Launch environment: CONFORMANCE_REDIS_URL (a redis-server the runner started),
// CONFORMANCE_KEY_PREFIX (this run's own keys in it), CONFORMANCE_TLS_DIR (a CA nobody trusts,
// `ca.pem`, and the 127.0.0.1 certificate it issued, `server.pem` / `server.key`).

import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { join } from 'node:path';
import {
  AniLink,
  AniLinkApiError,
  AniLinkError,
  AniLinkGraphQLError,
  AniLinkNetworkError,
  AniLinkValidationError,
  destroyCachedAgents,
} from 'anilink-api-wrapper';
import { startAniListSimulator, startTestUpstream } from 'anilink-api-wrapper/testing';

const results = {};
const MEDIA = 'query { Media(id: 1) { id } }';
const media = (id) => ({ data: { Media: { id } } });
const failure = (error) => ({
  name: error.name,
  code: error.code,
  isAniLinkError: error instanceof AniLinkError,
  isNetworkError: error instanceof AniLinkNetworkError,
  isApiError: error instanceof AniLinkApiError,
  isGraphQLError: error instanceof AniLinkGraphQLError,
  isValidationError: error instanceof AniLinkValidationError,
});
const settle = (promise) =>
  promise.then(
    (value) => ({ ok: value?.Media?.id ?? value?.id ?? value }),
    (error) => failure(error),
  );
const since = (started) => Date.now() - started;

const upstream = await startTestUpstream();
const requests = () => upstream.requests.length;

// A call through baseUrl (the /testing upstream's client sets it).
upstream.anilist.reply('Media', media(1));
results.baseUrl = await settle(upstream.client().anilist.custom(MEDIA));

// A call through ANILINK_ANILIST_URL set inside the program (decisions D38).
process.env.ANILINK_ANILIST_URL = upstream.anilist.url;
upstream.anilist.reply('Media', media(2));
results.environmentUrl = await settle(new AniLink().anilist.custom(MEDIA));
delete process.env.ANILINK_ANILIST_URL;

// A typed network error: nothing listens on port 1.
results.networkError = await settle(
  new AniLink({ anilist: { baseUrl: 'http://127.0.0.1:1', retry: false } }).anilist.custom(MEDIA),
);

// Error classes of answers: a GraphQL error and a validation error (no request sent).
upstream.anilist.reply('Media', { errors: [{ message: 'Not Found.', status: 404 }] });
results.graphqlError = await settle(upstream.client({ anilist: { retry: false } }).anilist.custom(MEDIA));
const sentBefore = requests();
results.validationError = await settle(upstream.client().anilist.query.media({ id: 'one' }));
results.validationSentNothing = requests() === sentBefore;

// A retry after a 429 whose Retry-After says 0.3 s.
upstream.anilist.reply(
  'Media',
  { status: 429, retryAfter: 0.3, errors: [{ message: 'Too Many Requests.', status: 429 }] },
  media(3),
);
let started = Date.now();
const retried = await settle(
  upstream.client({ anilist: { retry: { maxRetries: 2, baseDelayMs: 10, maxDelayMs: 5000 } } }).anilist.custom(MEDIA),
);
results.retryAfter = { ...retried, waitedForRetryAfter: since(started) >= 250 };

// Pacing: at most 2 requests per 400 ms, so the third waits for the window.
upstream.anilist.replyAlways('Media', media(4));
const paced = upstream.client({ anilist: { rateLimit: { maxRequests: 2, windowMs: 400 } } });
started = Date.now();
const pacedIds = [];
for (let i = 0; i < 3; i++) pacedIds.push((await settle(paced.anilist.custom(MEDIA))).ok);
results.pacing = { ids: pacedIds, thirdWaited: since(started) >= 300 };

// Hooks, in order, for a success and a failure.
const hookNames = [];
const hooked = upstream.client({
  anilist: {
    retry: false,
    onRequestStart: () => hookNames.push('onRequestStart'),
    onResponse: () => hookNames.push('onResponse'),
    onError: () => hookNames.push('onError'),
  },
});
await settle(hooked.anilist.custom(MEDIA));
upstream.reset();
upstream.anilist.reply('Media', { status: 500, errors: [{ message: 'Boom.', status: 500 }] });
await settle(hooked.anilist.custom(MEDIA));
results.hooks = hookNames;

// The breaker: two failures open it, the third call is refused without a request.
upstream.reset();
upstream.anilist.replyAlways('Media', { status: 500, errors: [{ message: 'Boom.', status: 500 }] });
const breaking = upstream.client({ anilist: { retry: false, circuitBreaker: { threshold: 2, cooldownMs: 60_000 } } });
const breakerCodes = [];
for (let i = 0; i < 3; i++) breakerCodes.push((await settle(breaking.anilist.custom(MEDIA))).code);
results.breaker = { codes: breakerCodes, requests: requests() };

// Abort: a call waiting on a slow answer rejects as soon as its signal fires.
upstream.reset();
upstream.anilist.reply('Media', { ...media(5), delayMs: 3000 });
const controller = new AbortController();
setTimeout(() => controller.abort(), 50);
started = Date.now();
const aborted = await settle(upstream.client().anilist.custom(MEDIA, undefined, { signal: controller.signal }));
results.abort = { ...aborted, promptly: since(started) < 2000 };

// Pools: a dedicated pool (maxSockets), torn down between two calls, serves the second afresh.
upstream.reset();
upstream.anilist.replyAlways('Media', media(6));
const pooled = upstream.client({ anilist: { maxSockets: 2 } });
const connectionsBefore = upstream.connections.length;
const beforeTeardown = await settle(pooled.anilist.custom(MEDIA));
destroyCachedAgents();
const afterTeardown = await settle(pooled.anilist.custom(MEDIA));
results.pools = { beforeTeardown, afterTeardown, connectionsOpened: upstream.connections.length - connectionsBefore };

// /testing: every queued answer used, nothing unscripted.
upstream.reset();
upstream.anilist.reply('Media', media(7));
const scripted = await settle(upstream.client().anilist.custom(MEDIA));
let assertDone = 'passed';
try {
  upstream.assertDone();
} catch (error) {
  assertDone = error.message;
}
results.testing = { scripted, assertDone };

// The AniList simulator.
const simulator = await startAniListSimulator();
results.simulator = {
  ...(await settle(simulator.client().anilist.query.media({ id: 21 }))),
  requests: simulator.stats().requests,
};
await simulator.close();

// Shared state with a real redis-server: a breaker opened by one client is open for another.
const sharedState = { redis: process.env.CONFORMANCE_REDIS_URL, keyPrefix: process.env.CONFORMANCE_KEY_PREFIX };
upstream.reset();
upstream.anilist.replyAlways('Media', { status: 500, errors: [{ message: 'Boom.', status: 500 }] });
const fleet = () =>
  upstream.client({
    anilist: {
      authToken: 'fleet-token',
      retry: false,
      sharedState,
      circuitBreaker: { threshold: 1, cooldownMs: 60_000 },
    },
  });
const [first, second] = [fleet(), fleet()];
results.sharedState = {
  first: (await settle(first.anilist.custom(MEDIA))).code,
  second: (await settle(second.anilist.custom(MEDIA))).code,
  requests: requests(),
  mode: second.getTransportState().anilist.sharedState,
};

// Variables set inside the program are what the clients built after see (D38): every one the
// package reads is cleared first, then set around the clients that should see it.
for (const name of [
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'ALL_PROXY',
  'NO_PROXY',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_TLS_REJECT_UNAUTHORIZED',
]) {
  delete process.env[name];
  delete process.env[name.toLowerCase()];
}
const listen = async (server) => {
  const sockets = new Set();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    port: server.address().port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
};

// HTTP_PROXY: plain HTTP goes to the proxy, which answers itself here.
let proxied = 0;
const proxy = await listen(
  http.createServer((request, response) => {
    proxied++;
    request.resume();
    request.on('end', () => response.end(JSON.stringify(media(9))));
  }),
);
process.env.HTTP_PROXY = `http://127.0.0.1:${proxy.port}`;
const viaProxy = new AniLink({ anilist: { baseUrl: 'http://anilist.test', retry: false } });
delete process.env.HTTP_PROXY;
results.proxy = { ...(await settle(viaProxy.anilist.custom(MEDIA))), proxied };
proxy.close();

// TLS against a server whose CA nobody trusts: refused, trusted through NODE_EXTRA_CA_CERTS,
// and unverified under NODE_TLS_REJECT_UNAUTHORIZED=0 with one process warning (D37).
const tlsDir = process.env.CONFORMANCE_TLS_DIR;
const warnings = [];
process.on('warning', (warning) => warnings.push(warning.message));
const tlsServer = https.createServer(
  { key: readFileSync(join(tlsDir, 'server.key')), cert: readFileSync(join(tlsDir, 'server.pem')) },
  (request, response) => {
    request.resume();
    request.on('end', () => response.end(JSON.stringify(media(10))));
  },
);
tlsServer.on('tlsClientError', () => {});
const tls = await listen(tlsServer);
const tlsClient = () => new AniLink({ anilist: { baseUrl: `https://127.0.0.1:${tls.port}`, retry: false } });
const untrusted = tlsClient();
process.env.NODE_EXTRA_CA_CERTS = join(tlsDir, 'ca.pem');
const extraCa = tlsClient();
delete process.env.NODE_EXTRA_CA_CERTS;
process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
const [unverified, alsoUnverified] = [tlsClient(), tlsClient()];
process.env.NODE_TLS_REJECT_UNAUTHORIZED = '1';
const verifiedAgain = tlsClient();
delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
const tlsOutcomes = [];
for (const client of [untrusted, extraCa, unverified, alsoUnverified, verifiedAgain]) {
  const outcome = await settle(client.anilist.custom(MEDIA));
  tlsOutcomes.push(outcome.ok ?? outcome.code);
}
tls.close();
results.tls = {
  outcomes: tlsOutcomes,
  warnings: warnings.filter((message) => message.includes('NODE_TLS_REJECT_UNAUTHORIZED')).length,
};

// A plain node:http server of the program's own, closed before the end like everything else.
const server = http.createServer((request, response) => {
  request.resume();
  request.on('end', () => response.end(JSON.stringify(media(8))));
});
await new Promise((listening) => server.listen(0, '127.0.0.1', listening));
results.ownServer = await settle(
  new AniLink({ anilist: { baseUrl: `http://127.0.0.1:${server.address().port}` } }).anilist.custom(MEDIA),
);
server.close();

// The http-mock diagnostic, for http.ClientRequest replaced as nock 13 does (the @mswjs and
// undici signals are plain globals): reported once, to onHookError.
const OriginalClientRequest = http.ClientRequest;
function OverriddenClientRequest(...args) {
  return Reflect.construct(OriginalClientRequest, args, OverriddenClientRequest);
}
Object.setPrototypeOf(OverriddenClientRequest.prototype, OriginalClientRequest.prototype);
http.ClientRequest = OverriddenClientRequest;
const diagnostics = [];
upstream.reset();
upstream.anilist.replyAlways('Media', media(11));
const observed = upstream.client({
  onHookError: (hookName, error) => diagnostics.push([hookName, error.diagnostic?.kind]),
});
results.httpMock = { ...(await settle(observed.anilist.custom(MEDIA))), diagnostics };
await settle(observed.anilist.custom(MEDIA));
http.ClientRequest = OriginalClientRequest;
await upstream.close();
destroyCachedAgents();

const runtime = process.versions.bun
  ? `bun ${process.versions.bun}`
  : process.versions.deno
    ? `deno ${process.versions.deno}`
    : `node ${process.versions.node}`;
console.log(`runtime ${runtime}`);
console.log(JSON.stringify(results, null, 2));
