// The runtime conformance program (scripts/test-runtimes.mjs runs it under Node, Bun and Deno
// from a consumer folder of its own): one program, unchanged, whose printed results must be
// the same on every runtime. Times are turned into yes/no with wide margins; the only
// difference allowed is the `runtime` line. It never calls process.exit: the runner checks that
// the process ends by itself once its servers are closed.
//
// Launch environment: CONFORMANCE_REDIS_URL (a redis-server the runner started) and
// CONFORMANCE_KEY_PREFIX (this run's own keys in it).

import http from 'node:http';
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
await upstream.close();
destroyCachedAgents();

const runtime = process.versions.bun
  ? `bun ${process.versions.bun}`
  : process.versions.deno
    ? `deno ${process.versions.deno}`
    : `node ${process.versions.node}`;
console.log(`runtime ${runtime}`);
console.log(JSON.stringify(results, null, 2));
