/**
 * The circuit breaker end to end (issue 5): what the test server receives while the breaker is
 * closed, open and half-open, the hooks it emits, and the snapshot `getTransportState()` shows.
 *
 * Every test builds its own `AniLink`, so breaker state never leaks between tests. Retries are
 * off unless the test is about how retries and the breaker interact. Open periods are measured
 * from the breaker's own clock (`openedAt`, epoch ms) rather than from sleeps, so timing on a
 * busy machine cannot make a test pass or fail by accident.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  AniLink,
  AniLinkApiError,
  AniLinkGraphQLError,
  AniLinkNetworkError,
  type AniLinkError,
  type CircuitStateSnapshot,
  type RequestOptions,
} from 'anilink-api-wrapper';
import { failureRecorder, recordingHooks, rejectionOf, useTestServer, type RequestHookName } from './support/helpers';
import { rateLimitHeaders, type ScriptedResponse, type TestServer } from './support/test-server';

const OPEN_MESSAGE = (threshold: number) =>
  `The request failed fast: the circuit breaker is open after ${threshold} consecutive failures. Retrying is possible after the cooldown elapses.`;
const PROBING_MESSAGE = (threshold: number) =>
  `The request failed fast: the circuit breaker is probing the upstream after ${threshold} consecutive failures. Retrying is possible once the probe settles.`;

const UNAVAILABLE: ScriptedResponse = { status: 503, body: 'unavailable' };
const NOT_FOUND: ScriptedResponse = { status: 404, body: { errors: [{ message: 'Not Found.', status: 404 }] } };
const STATUSLESS_ENVELOPE: ScriptedResponse = {
  body: { data: null, errors: [{ message: 'Cannot query field "nope".' }] },
};
const ENVELOPE_503: ScriptedResponse = {
  body: { data: { Media: null }, errors: [{ message: 'Service Unavailable', status: 503 }] },
};
const PARTIAL_503: ScriptedResponse = {
  body: { data: { Media: { id: 7 } }, errors: [{ message: 'Service Unavailable', status: 503 }] },
};

let server: TestServer;
useTestServer((started) => {
  server = started;
});

/** An AniList client on the test server (retries off), recording every hook it fires. */
function breakerClient(options: RequestOptions) {
  const { calls: events, hooks } = recordingHooks([
    'onRequestStart',
    'onResponse',
    'onError',
    'onCircuitOpen',
    'onCircuitClose',
  ]);
  // Quota admission off: a cold scope would hold calls behind a slow first one (decisions
  // D39 a), and these tests keep requests in flight across a trip.
  const aniLink = new AniLink({
    anilist: { baseUrl: server.url, retry: false, rateLimitFloor: 0, ...hooks, ...options },
  });
  return {
    aniLink,
    events,
    /** The events of one hook, in order. */
    of: (hook: RequestHookName) => events.filter((event) => event.hook === hook),
    /** The hooks fired for one logical request, in order. */
    hooksOf: (requestId: string | undefined) =>
      events.filter((event) => event.ctx.requestId === requestId).map((event) => event.hook),
    media: (requestOptions?: RequestOptions) => aniLink.anilist.query.media({ id: 1 }, requestOptions),
    /** This client's breaker for the test server (undefined before the breaker saw a request). */
    circuit: (): CircuitStateSnapshot | undefined =>
      aniLink.getTransportState().anilist.circuit.find((entry) => entry.host === server.host),
  };
}

type BreakerClient = ReturnType<typeof breakerClient>;

/** Send `count` calls one after another, each answered with `response`; they must all reject. */
async function failSequentially(client: BreakerClient, count: number, response: ScriptedResponse = UNAVAILABLE) {
  const errors: AniLinkError[] = [];
  for (let i = 0; i < count; i++) {
    server.enqueue(response);
    errors.push(await rejectionOf(client.media()));
  }
  return errors;
}

/** Wait until the wall clock reaches `epochMs` (the breaker keeps epoch milliseconds). */
async function sleepUntil(epochMs: number): Promise<void> {
  const remaining = epochMs - Date.now();
  if (remaining > 0) await sleep(remaining);
}

/** The epoch ms from which the open breaker admits a probe, given the expected open period. */
function probeAllowedAt(client: BreakerClient, openPeriodMs: number): number {
  const openedAt = client.circuit()?.openedAt;
  if (typeof openedAt !== 'number') throw new Error('the breaker is not open');
  return openedAt + openPeriodMs;
}

/**
 * The open period the breaker applies right now, from a fast-fail's `retryAfterMs` and the
 * snapshot's `openedAt`: `period = (now - openedAt) + retryAfterMs`, with `now` bracketed by the
 * clock before and after the call (so the result is exact up to those few milliseconds).
 */
async function measureOpenPeriod(client: BreakerClient): Promise<{ min: number; max: number }> {
  const before = Date.now();
  const error = await rejectionOf(client.media());
  const after = Date.now();
  expect(error.code).toBe('CIRCUIT_OPEN_ERROR');
  const report = client.of('onError').find((event) => event.ctx.requestId === error.requestId);
  const retryAfterMs = report?.ctx.retryAfterMs;
  if (typeof retryAfterMs !== 'number') throw new Error('the fast-fail carried no retryAfterMs');
  const openedAt = client.circuit()?.openedAt;
  if (typeof openedAt !== 'number') throw new Error('the breaker is not open');
  return { min: before - openedAt + retryAfterMs - 1, max: after - openedAt + retryAfterMs + 1 };
}

describe('circuit breaker: tripping and fast-failing', () => {
  it('is off by default: a long run of 503s all reach the server and nothing is recorded', async () => {
    const client = breakerClient({});
    await failSequentially(client, 8);
    expect(server.requests).toHaveLength(8);
    expect(client.of('onCircuitOpen')).toHaveLength(0);
    expect(client.aniLink.getTransportState().anilist.circuit).toEqual([]);
  });

  it('opens after `threshold` consecutive 503s and then fast-fails without touching the network', async () => {
    const client = breakerClient({ circuitBreaker: { threshold: 3, cooldownMs: 5_000 } });
    const failures = await failSequentially(client, 3);
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(AniLinkApiError);
      expect(failure).toMatchObject({ code: 'API_ERROR', status: 503 });
    }
    expect(client.of('onCircuitOpen')).toHaveLength(1);

    for (let i = 0; i < 5; i++) {
      const fastFail = await rejectionOf(client.media());
      expect(fastFail).toBeInstanceOf(AniLinkNetworkError);
      expect(fastFail.code).toBe('CIRCUIT_OPEN_ERROR');
      expect(fastFail.message).toBe(OPEN_MESSAGE(3));
      expect(fastFail.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
    expect(server.requests).toHaveLength(3);
    expect(client.of('onCircuitOpen')).toHaveLength(1);
  });

  it('reports the trip through onCircuitOpen with host and failure count, on the tripping request', async () => {
    const client = breakerClient({ circuitBreaker: { threshold: 2, cooldownMs: 5_000 } });
    const [, tripping] = await failSequentially(client, 2);
    const [open] = client.of('onCircuitOpen');
    expect(open.ctx).toEqual({
      requestId: tripping.requestId,
      url: expect.stringMatching(new RegExp(`^${server.url}/?$`)),
      method: 'POST',
      attempt: 1,
      host: server.host,
      failures: 2,
    });
    // The breaker event comes after the response and before the failure report (transport.md 1.10.2).
    expect(client.hooksOf(tripping.requestId)).toEqual(['onRequestStart', 'onResponse', 'onCircuitOpen', 'onError']);
  });

  it('fast-fails emit onRequestStart then onError with host and retryAfterMs, and no onResponse', async () => {
    const client = breakerClient({ circuitBreaker: { threshold: 1, cooldownMs: 2_000 } });
    await failSequentially(client, 1);
    const fastFail = await rejectionOf(client.media());
    expect(client.hooksOf(fastFail.requestId)).toEqual(['onRequestStart', 'onError']);
    const [start] = client.of('onRequestStart').filter((event) => event.ctx.requestId === fastFail.requestId);
    expect(start.ctx).toEqual({ requestId: fastFail.requestId, url: expect.any(String), method: 'POST', attempt: 1 });
    const report = client.of('onError').find((event) => event.ctx.requestId === fastFail.requestId);
    expect(report?.error).toBe(fastFail);
    expect(report?.ctx).toEqual({
      requestId: fastFail.requestId,
      url: expect.any(String),
      method: 'POST',
      attempt: 1,
      code: 'CIRCUIT_OPEN_ERROR',
      host: server.host,
      retryAfterMs: expect.any(Number),
    });
    expect(report?.ctx.retryAfterMs).toBeGreaterThan(0);
    expect(report?.ctx.retryAfterMs).toBeLessThanOrEqual(2_000);
  });

  it('shows its state in getTransportState().anilist.circuit', async () => {
    const client = breakerClient({ circuitBreaker: { threshold: 2, cooldownMs: 5_000 } });
    expect(client.circuit()).toBeUndefined();
    await failSequentially(client, 1);
    expect(client.circuit()).toEqual({
      host: server.host,
      consecutiveFailures: 1,
      openedAt: null,
      probeInFlight: false,
      failedProbes: 0,
    });
    const before = Date.now();
    await failSequentially(client, 1);
    const after = Date.now();
    const open = client.circuit();
    expect(open).toMatchObject({ host: server.host, consecutiveFailures: 2, probeInFlight: false, failedProbes: 0 });
    expect(open?.openedAt).toBeGreaterThanOrEqual(before);
    expect(open?.openedAt).toBeLessThanOrEqual(after);
    // The other provider's breaker is untouched.
    expect(client.aniLink.getTransportState().mal.circuit).toEqual([]);
  });

  it('never trips on 404s between 500s: a 4xx proves the upstream answered and resets the streak', async () => {
    const client = breakerClient({ circuitBreaker: { threshold: 2, cooldownMs: 5_000 } });
    for (let i = 0; i < 4; i++) {
      await failSequentially(client, 1, { status: 500, body: 'boom' });
      expect(client.circuit()?.consecutiveFailures).toBe(1);
      await failSequentially(client, 1, NOT_FOUND);
      expect(client.circuit()?.consecutiveFailures).toBe(0);
    }
    expect(server.requests).toHaveLength(8);
    expect(client.of('onCircuitOpen')).toHaveLength(0);
    // Two 500s in a row still trip it: the streak was reset, not disabled.
    await failSequentially(client, 2, { status: 500, body: 'boom' });
    expect(client.of('onCircuitOpen')).toHaveLength(1);
  });

  it('treats status-less GraphQL errors as neutral: they neither trip nor reset the streak', async () => {
    const client = breakerClient({ circuitBreaker: { threshold: 3, cooldownMs: 5_000 } });
    await failSequentially(client, 2);
    const neutral = await failSequentially(client, 5, STATUSLESS_ENVELOPE);
    for (const error of neutral) {
      expect(error).toBeInstanceOf(AniLinkGraphQLError);
      expect(error).toMatchObject({ code: 'GRAPHQL_ERROR', status: 200 });
    }
    expect(server.requests).toHaveLength(7);
    expect(client.circuit()).toMatchObject({ consecutiveFailures: 2, openedAt: null });
    expect(client.of('onCircuitOpen')).toHaveLength(0);
    // The third availability failure trips it: the neutral errors erased nothing.
    await failSequentially(client, 1);
    expect(client.of('onCircuitOpen').map((event) => event.ctx.failures)).toEqual([3]);
  });

  const availabilityFailures: Array<{
    name: string;
    response: ScriptedResponse;
    options?: RequestOptions;
    code: string;
  }> = [
    { name: 'a 500', response: { status: 500, body: 'boom' }, code: 'API_ERROR' },
    { name: 'a 502', response: { status: 502, body: 'bad gateway' }, code: 'API_ERROR' },
    { name: 'a 429 without quota headers', response: { status: 429, body: 'slow down' }, code: 'API_ERROR' },
    {
      name: 'a GraphQL entry with status 429',
      response: { body: { data: null, errors: [{ message: 'Too Many Requests.', status: 429 }] } },
      code: 'GRAPHQL_ERROR',
    },
    // Every answer is a reset, so a call fails whichever connection carries it.
    { name: 'a reset connection', response: { drop: 'before-response' }, code: 'NETWORK_ERROR' },
    { name: 'a timeout', response: { hang: true }, options: { timeout: 50 }, code: 'TIMEOUT_ERROR' },
  ];
  it.each(availabilityFailures)('counts $name as an availability failure', async ({ response, options, code }) => {
    const client = breakerClient({ circuitBreaker: { threshold: 2, cooldownMs: 5_000 }, ...options });
    server.setDefault(response);
    const failures = [await rejectionOf(client.media()), await rejectionOf(client.media())];
    expect(failures.map((error) => error.code)).toEqual([code, code]);
    expect(client.of('onCircuitOpen').map((event) => event.ctx.failures)).toEqual([2]);
    expect((await rejectionOf(client.media())).code).toBe('CIRCUIT_OPEN_ERROR');
  });

  it('trips on GraphQL entries with status 503 in strict mode', async () => {
    const client = breakerClient({ circuitBreaker: { threshold: 2, cooldownMs: 5_000 } });
    const failures = await failSequentially(client, 2, ENVELOPE_503);
    for (const error of failures) {
      expect(error).toBeInstanceOf(AniLinkGraphQLError);
      expect(error).toMatchObject({ status: 503 });
    }
    expect(client.of('onCircuitOpen')).toHaveLength(1);
    expect((await rejectionOf(client.media())).code).toBe('CIRCUIT_OPEN_ERROR');
    expect(server.requests).toHaveLength(2);
  });

  it('trips on GraphQL entries with status 503 with allowPartialData, while still resolving the data', async () => {
    const client = breakerClient({ circuitBreaker: { threshold: 2, cooldownMs: 5_000 }, allowPartialData: true });
    for (let i = 0; i < 2; i++) {
      server.enqueue(PARTIAL_503);
      await expect(client.media()).resolves.toEqual({ id: 7 });
    }
    const partialReports = client.of('onError');
    expect(partialReports).toHaveLength(2);
    for (const report of partialReports) {
      expect(report.error).toBeInstanceOf(AniLinkGraphQLError);
      expect(report.ctx).toMatchObject({ code: 'GRAPHQL_ERROR', status: 503 });
    }
    expect(client.of('onCircuitOpen').map((event) => event.ctx.failures)).toEqual([2]);
    const fastFail = await rejectionOf(client.media());
    expect(fastFail.code).toBe('CIRCUIT_OPEN_ERROR');
    expect(server.requests).toHaveLength(2);
  });

  it('leaves the streak unchanged on a partial-data envelope whose entries carry no status', async () => {
    const client = breakerClient({ circuitBreaker: { threshold: 2, cooldownMs: 5_000 }, allowPartialData: true });
    await failSequentially(client, 1);
    server.enqueue({ body: { data: { Media: { id: 7 } }, errors: [{ message: 'Field "x" is deprecated' }] } });
    await expect(client.media()).resolves.toEqual({ id: 7 });
    expect(client.circuit()?.consecutiveFailures).toBe(1);
    await failSequentially(client, 1);
    expect(client.of('onCircuitOpen').map((event) => event.ctx.failures)).toEqual([2]);
  });

  it('resets the streak on a partial-data envelope whose entries carry a caller-side status', async () => {
    const client = breakerClient({ circuitBreaker: { threshold: 2, cooldownMs: 5_000 }, allowPartialData: true });
    await failSequentially(client, 1);
    server.enqueue({ body: { data: { Media: { id: 7 } }, errors: [{ message: 'Not Found.', status: 404 }] } });
    await expect(client.media()).resolves.toEqual({ id: 7 });
    expect(client.circuit()?.consecutiveFailures).toBe(0);
    await failSequentially(client, 1);
    expect(client.of('onCircuitOpen')).toHaveLength(0);
  });
});

describe('circuit breaker: probing after the cooldown', () => {
  it('lets exactly one of 50 concurrent calls through as the probe; the others fail fast as "probing"', async () => {
    const cooldownMs = 100;
    const client = breakerClient({ circuitBreaker: { threshold: 2, cooldownMs } });
    await failSequentially(client, 2);
    await sleepUntil(probeAllowedAt(client, cooldownMs) + 5);

    // The probe is answered slowly, so all 50 calls arrive while it is out.
    server.setDefault({ status: 200, delayMs: 400, body: { data: { Media: { id: 1 } } } });
    const outcomes = await Promise.allSettled(Array.from({ length: 50 }, () => client.media()));

    expect(server.requests).toHaveLength(3);
    const fulfilled = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    expect(fulfilled).toEqual([{ status: 'fulfilled', value: { id: 1 } }]);
    const rejected = outcomes.flatMap((outcome) =>
      outcome.status === 'rejected' ? [outcome.reason as AniLinkError] : [],
    );
    expect(rejected).toHaveLength(49);
    for (const error of rejected) {
      expect(error).toBeInstanceOf(AniLinkNetworkError);
      expect(error.code).toBe('CIRCUIT_OPEN_ERROR');
      expect(error.message).toBe(PROBING_MESSAGE(2));
      // While a probe is out there is no deadline to announce (transport.md 1.8 T7).
      const report = client.of('onError').find((event) => event.ctx.requestId === error.requestId);
      expect(report?.ctx).toMatchObject({ code: 'CIRCUIT_OPEN_ERROR', host: server.host });
      expect(report?.ctx).not.toHaveProperty('retryAfterMs');
    }
  });

  it('reports probeInFlight while the probe is out, and a successful probe closes the breaker', async () => {
    const cooldownMs = 80;
    const client = breakerClient({ circuitBreaker: { threshold: 2, cooldownMs } });
    await failSequentially(client, 2);
    await sleepUntil(probeAllowedAt(client, cooldownMs) + 5);

    server.enqueue({ status: 200, delayMs: 200, body: { data: { Media: { id: 5 } } } });
    const probe = client.media();
    await server.waitForRequests(3);
    expect(client.circuit()).toMatchObject({ openedAt: null, probeInFlight: true, failedProbes: 0 });
    await expect(probe).resolves.toEqual({ id: 5 });

    const closes = client.of('onCircuitClose');
    expect(closes).toHaveLength(1);
    const probeStart = client.of('onRequestStart').at(-1);
    expect(closes[0].ctx).toEqual({
      requestId: probeStart?.ctx.requestId,
      url: expect.any(String),
      method: 'POST',
      attempt: 1,
      host: server.host,
    });
    expect(client.circuit()).toEqual({
      host: server.host,
      consecutiveFailures: 0,
      openedAt: null,
      probeInFlight: false,
      failedProbes: 0,
    });
    // Closed again: traffic flows.
    await expect(client.media()).resolves.toEqual({ id: 1 });
    expect(server.requests).toHaveLength(4);
  });

  it('reopens after a failed probe with the cooldown doubled per failure, capped at 8x, without onCircuitOpen', async () => {
    // Long enough that the fast-fail measuring each period cannot arrive after it has ended.
    const cooldownMs = 150;
    const client = breakerClient({ circuitBreaker: { threshold: 1, cooldownMs } });
    server.setDefault(UNAVAILABLE);
    await rejectionOf(client.media());
    let period = await measureOpenPeriod(client);
    expect(cooldownMs).toBeGreaterThanOrEqual(period.min);
    expect(cooldownMs).toBeLessThanOrEqual(period.max);

    // Failed probes widen the period: 2x, 4x, 8x, then stays at 8x.
    for (const [failedProbes, multiplier] of [
      [1, 2],
      [2, 4],
      [3, 8],
      [4, 8],
    ]) {
      const requestsBefore = server.requests.length;
      await sleepUntil(probeAllowedAt(client, period.max) + 2);
      const probeFailure = await rejectionOf(client.media());
      expect(probeFailure).toMatchObject({ code: 'API_ERROR', status: 503 });
      expect(server.requests).toHaveLength(requestsBefore + 1);
      expect(client.circuit()).toMatchObject({ failedProbes, probeInFlight: false, openedAt: expect.any(Number) });
      period = await measureOpenPeriod(client);
      expect(cooldownMs * multiplier).toBeGreaterThanOrEqual(period.min);
      expect(cooldownMs * multiplier).toBeLessThanOrEqual(period.max);
      expect(server.requests).toHaveLength(requestsBefore + 1);
    }
    expect(client.of('onCircuitOpen')).toHaveLength(1);
    expect(client.of('onCircuitClose')).toHaveLength(0);

    // A successful probe closes the breaker and resets the multiplier.
    await sleepUntil(probeAllowedAt(client, cooldownMs * 8) + 2);
    server.setDefault({ body: { data: { Media: { id: 1 } } } });
    await expect(client.media()).resolves.toEqual({ id: 1 });
    expect(client.of('onCircuitClose')).toHaveLength(1);
    expect(client.circuit()).toMatchObject({ failedProbes: 0, consecutiveFailures: 0, openedAt: null });
    server.setDefault(UNAVAILABLE);
    await rejectionOf(client.media());
    period = await measureOpenPeriod(client);
    expect(cooldownMs).toBeGreaterThanOrEqual(period.min);
    expect(cooldownMs).toBeLessThanOrEqual(period.max);
  });

  const closingProbes: Array<{ name: string; response: ScriptedResponse; expected: object }> = [
    { name: 'a 404', response: NOT_FOUND, expected: { code: 'API_ERROR', status: 404 } },
    {
      name: 'a status-less GraphQL error',
      response: STATUSLESS_ENVELOPE,
      expected: { code: 'GRAPHQL_ERROR', status: 200 },
    },
  ];
  it.each(closingProbes)('closes when the probe fails with $name', async ({ response, expected }) => {
    const cooldownMs = 60;
    const client = breakerClient({ circuitBreaker: { threshold: 2, cooldownMs } });
    await failSequentially(client, 2);
    await sleepUntil(probeAllowedAt(client, cooldownMs) + 2);
    const [probeFailure] = await failSequentially(client, 1, response);
    expect(probeFailure).toMatchObject(expected);
    expect(client.of('onCircuitClose')).toHaveLength(1);
    expect(client.of('onCircuitClose')[0].ctx).toMatchObject({ requestId: probeFailure.requestId, host: server.host });
    expect(client.circuit()).toMatchObject({
      consecutiveFailures: 0,
      openedAt: null,
      probeInFlight: false,
      failedProbes: 0,
    });
    await expect(client.media()).resolves.toEqual({ id: 1 });
    expect(server.requests).toHaveLength(4);
  });

  it('closes when the probe is aborted in flight', async () => {
    const cooldownMs = 60;
    const client = breakerClient({ circuitBreaker: { threshold: 2, cooldownMs } });
    await failSequentially(client, 2);
    await sleepUntil(probeAllowedAt(client, cooldownMs) + 2);

    server.enqueue({ hang: true });
    const controller = new AbortController();
    const probe = client.media({ signal: controller.signal });
    await server.waitForRequests(3);
    controller.abort();
    const aborted = await rejectionOf(probe);
    expect(aborted).toBeInstanceOf(AniLinkNetworkError);
    expect(aborted.code).toBe('ABORTED_ERROR');
    expect(client.of('onCircuitClose')).toHaveLength(1);
    expect(client.circuit()).toMatchObject({ consecutiveFailures: 0, openedAt: null, probeInFlight: false });
    await expect(client.media()).resolves.toEqual({ id: 1 });
    expect(server.requests).toHaveLength(4);
  });

  it('closes when the reserved probe is aborted during its pacing wait, before reaching the server', async () => {
    const cooldownMs = 30;
    const client = breakerClient({ circuitBreaker: { threshold: 1, cooldownMs } });
    // A terminal 429 that announces an exhausted quota both trips the breaker and records a pace deadline.
    const resetEpochSeconds = Math.ceil(Date.now() / 1000) + 1;
    await failSequentially(client, 1, {
      status: 429,
      headers: rateLimitHeaders(90, 0, resetEpochSeconds),
      body: 'slow down',
    });
    expect(client.of('onCircuitOpen')).toHaveLength(1);
    await sleepUntil(probeAllowedAt(client, cooldownMs) + 2);

    const controller = new AbortController();
    const probe = client.media({ signal: controller.signal });
    await sleep(50);
    expect(client.circuit()).toMatchObject({ probeInFlight: true });
    controller.abort();
    const aborted = await rejectionOf(probe);
    expect(aborted).toMatchObject({ code: 'ABORTED_ERROR', abortedDuringPacing: true });
    expect(server.requests).toHaveLength(1);
    expect(client.of('onCircuitClose')).toHaveLength(1);
    expect(client.circuit()).toMatchObject({ consecutiveFailures: 0, openedAt: null, probeInFlight: false });
  });
});

describe('circuit breaker and retries', () => {
  it('fast-fails the next retry attempt of a failing call once the breaker is open', async () => {
    const retries = failureRecorder();
    const client = breakerClient({
      circuitBreaker: { threshold: 2, cooldownMs: 5_000 },
      retry: { maxRetries: 3, baseDelayMs: 5, jitter: false },
      onRetry: retries.hook,
    });
    server.setDefault(UNAVAILABLE);
    const failure = await rejectionOf(client.media());

    expect(server.requests).toHaveLength(2);
    expect(failure).toBeInstanceOf(AniLinkNetworkError);
    expect(failure.code).toBe('CIRCUIT_OPEN_ERROR');
    expect(failure.message).toBe(OPEN_MESSAGE(2));
    expect(retries.reports.map(({ context }) => [context.attempt, context.nextDelayMs])).toEqual([
      [1, 5],
      [2, 10],
    ]);
    const [report] = client.of('onError');
    expect(report.error).toBe(failure);
    expect(report.ctx).toMatchObject({
      requestId: failure.requestId,
      attempt: 3,
      code: 'CIRCUIT_OPEN_ERROR',
      host: server.host,
      retryAfterMs: expect.any(Number),
    });
    expect(report.ctx).not.toHaveProperty('nextDelayMs');
    expect(client.hooksOf(failure.requestId)).toEqual([
      'onRequestStart',
      'onResponse',
      'onRequestStart',
      'onResponse',
      'onCircuitOpen',
      'onRequestStart',
      'onError',
    ]);
  });

  it('never retries a failed probe', async () => {
    const cooldownMs = 60;
    const retries = failureRecorder();
    const client = breakerClient({
      circuitBreaker: { threshold: 1, cooldownMs },
      retry: { maxRetries: 3, baseDelayMs: 5, jitter: false },
      onRetry: retries.hook,
    });
    server.setDefault(UNAVAILABLE);
    await rejectionOf(client.media()); // trips on its first attempt; its retry fast-fails
    expect(server.requests).toHaveLength(1);
    await sleepUntil(probeAllowedAt(client, cooldownMs) + 2);

    retries.reports.length = 0;
    const probeFailure = await rejectionOf(client.media());
    expect(probeFailure).toMatchObject({ code: 'API_ERROR', status: 503 });
    expect(server.requests).toHaveLength(2);
    expect(retries.reports).toEqual([]);
    const report = client.of('onError').find((event) => event.ctx.requestId === probeFailure.requestId);
    expect(report?.ctx).toMatchObject({ attempt: 1, code: 'API_ERROR', status: 503 });
    expect(report?.ctx).not.toHaveProperty('nextDelayMs');
    expect(client.circuit()).toMatchObject({ failedProbes: 1, openedAt: expect.any(Number) });
  });
});

describe('circuit breaker and aborts', () => {
  it('resets the streak when a request is aborted in flight', async () => {
    const client = breakerClient({ circuitBreaker: { threshold: 3, cooldownMs: 5_000 } });
    await failSequentially(client, 2);
    server.enqueue({ hang: true });
    const controller = new AbortController();
    const aborted = rejectionOf(client.media({ signal: controller.signal }));
    await server.waitForRequests(3);
    controller.abort();
    expect((await aborted).code).toBe('ABORTED_ERROR');
    expect(client.circuit()?.consecutiveFailures).toBe(0);
  });

  it('leaves the streak of the previous attempt unchanged when a request is aborted during retry backoff', async () => {
    const client = breakerClient({ circuitBreaker: { threshold: 3, cooldownMs: 5_000 } });
    await failSequentially(client, 1);
    server.enqueue(UNAVAILABLE);
    const controller = new AbortController();
    const retryingSlowly = { maxRetries: 3, baseDelayMs: 2_000, jitter: false };
    const aborted = rejectionOf(client.media({ signal: controller.signal, retry: retryingSlowly }));
    await server.waitForRequests(2);
    await sleep(50);
    controller.abort();
    expect((await aborted).code).toBe('ABORTED_ERROR');
    expect(server.requests).toHaveLength(2);
    expect(client.circuit()).toMatchObject({ consecutiveFailures: 2, openedAt: null });
  });

  it("leaves a closed breaker's streak unchanged when a request is aborted during its pacing wait", async () => {
    const client = breakerClient({ circuitBreaker: { threshold: 3, cooldownMs: 5_000 } });
    // A terminal 429 announcing an exhausted quota counts once and paces the next request.
    const resetEpochSeconds = Math.ceil(Date.now() / 1000) + 1;
    await failSequentially(client, 1, {
      status: 429,
      headers: rateLimitHeaders(90, 0, resetEpochSeconds),
      body: 'slow down',
    });
    const controller = new AbortController();
    const aborted = rejectionOf(client.media({ signal: controller.signal }));
    await sleep(50);
    controller.abort();
    expect(await aborted).toMatchObject({ code: 'ABORTED_ERROR', abortedDuringPacing: true });
    expect(server.requests).toHaveLength(1);
    expect(client.circuit()).toMatchObject({ consecutiveFailures: 1, openedAt: null, probeInFlight: false });
    expect(client.of('onCircuitClose')).toHaveLength(0);
  });
});

describe('circuit breaker: requests already in flight when it trips', () => {
  it('extends the open period when an in-flight request fails after the trip (D7)', async () => {
    const cooldownMs = 250;
    const client = breakerClient({ circuitBreaker: { threshold: 2, cooldownMs } });
    server.enqueue({ ...UNAVAILABLE, delayMs: 300 });
    const slow = rejectionOf(client.media());
    await server.waitForRequests(1);
    await failSequentially(client, 2);
    const trippedAt = client.circuit()?.openedAt;
    if (typeof trippedAt !== 'number') throw new Error('the breaker did not open');

    await slow;
    const extendedFrom = client.circuit()?.openedAt;
    if (typeof extendedFrom !== 'number') throw new Error('the breaker is no longer open');
    expect(extendedFrom).toBeGreaterThan(trippedAt + 100);
    expect(client.circuit()).toMatchObject({ consecutiveFailures: 3, probeInFlight: false });
    expect(client.of('onCircuitOpen')).toHaveLength(1);

    // Past the cooldown counted from the trip, but not from the last failure: still open.
    await sleepUntil(trippedAt + cooldownMs + 10);
    expect(Date.now()).toBeLessThan(extendedFrom + cooldownMs);
    const fastFail = await rejectionOf(client.media());
    expect(fastFail.code).toBe('CIRCUIT_OPEN_ERROR');
    expect(server.requests).toHaveLength(3);

    await sleepUntil(extendedFrom + cooldownMs + 2);
    await expect(client.media()).resolves.toEqual({ id: 1 });
    expect(server.requests).toHaveLength(4);
    expect(client.of('onCircuitClose')).toHaveLength(1);
  });

  it('lets only the probe settle a half-open breaker: an older request succeeding meanwhile changes nothing (D8)', async () => {
    const cooldownMs = 80;
    const client = breakerClient({ circuitBreaker: { threshold: 2, cooldownMs } });
    server.enqueue({ delayMs: 600, body: { data: { Media: { id: 9 } } } });
    const older = client.media();
    await server.waitForRequests(1);
    await failSequentially(client, 2);
    await sleepUntil(probeAllowedAt(client, cooldownMs) + 2);

    server.enqueue({ ...UNAVAILABLE, delayMs: 800 });
    const probe = rejectionOf(client.media());
    await server.waitForRequests(4);
    await expect(older).resolves.toEqual({ id: 9 });
    expect(client.of('onCircuitClose')).toHaveLength(0);
    expect(client.circuit()).toMatchObject({ probeInFlight: true });

    expect(await probe).toMatchObject({ code: 'API_ERROR', status: 503 });
    expect(client.of('onCircuitClose')).toHaveLength(0);
    expect(client.circuit()).toMatchObject({ probeInFlight: false, failedProbes: 1, openedAt: expect.any(Number) });
  });

  it('closes when a request that was in flight before the trip succeeds while no probe is out (D17)', async () => {
    const client = breakerClient({ circuitBreaker: { threshold: 2, cooldownMs: 5_000 } });
    server.enqueue({ delayMs: 300, body: { data: { Media: { id: 9 } } } });
    const slow = client.media();
    await server.waitForRequests(1);
    await failSequentially(client, 2);
    expect(client.circuit()?.openedAt).toEqual(expect.any(Number));

    await expect(slow).resolves.toEqual({ id: 9 });
    expect(client.of('onCircuitClose')).toHaveLength(1);
    expect(client.of('onCircuitClose')[0].ctx).toMatchObject({ host: server.host });
    expect(client.circuit()).toMatchObject({ consecutiveFailures: 0, openedAt: null, probeInFlight: false });
    await expect(client.media()).resolves.toEqual({ id: 1 });
  });
});
