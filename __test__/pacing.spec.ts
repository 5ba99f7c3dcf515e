// End-to-end checks of rate-limit pacing (issue 4; seed "Rate-limit pacing" and "Bypassing the
// pacing deadline"; transport.md 1.7; decisions D5, D6): a response reporting an exhausted quota
// holds the *next* request to that host until the reset, judged by when the test server
// received each request.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { AniLink, AniLinkNetworkError, type PaceContext, type ResponseContext } from 'anilink-api-wrapper';
import { clientFor, contextRecorder, failureOf, mediaIdOf, useTestServer } from './support/helpers';
import {
  graphqlData,
  rateLimitHeaders,
  type RecordedRequest,
  type ScriptedResponse,
  type TestServer,
} from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

/** How far ahead the quota resets in these tests. */
const RESET_IN_MS = 1_000;
/** Bounds for a wait of RESET_IN_MS, generous on a shared machine. */
const WAITED_AT_LEAST_MS = 900;
const WAITED_AT_MOST_MS = 3_000;
/** A request that was not held back arrives well before any pacing wait could end. */
const UNPACED_MAX_MS = 500;

/** The quota headers of a response, with the reset RESET_IN_MS from now (epoch seconds, fractional). */
function quota(remaining: number, resetInMs = RESET_IN_MS): Record<string, string> {
  return rateLimitHeaders(90, remaining, (Date.now() + resetInMs) / 1000);
}

/** A successful answer carrying quota headers (the body is what `query.media` unwraps). */
function ok(headers: Record<string, string>): ScriptedResponse {
  return { status: 200, headers, body: graphqlData('Media', { id: 1 }) };
}

/** ms between the server receiving request `later` and request `earlier`. */
function gap(requests: readonly RecordedRequest[], earlier: number, later: number): number {
  return requests[later].receivedAt - requests[earlier].receivedAt;
}

function expectPacedGap(requests: readonly RecordedRequest[], earlier: number, later: number): void {
  expect(gap(requests, earlier, later)).toBeGreaterThanOrEqual(WAITED_AT_LEAST_MS);
  expect(gap(requests, earlier, later)).toBeLessThan(WAITED_AT_MOST_MS);
}

describe('pacing after a successful response', () => {
  it('returns the exhausting response at once and holds the next request until the reset', async () => {
    const paces = contextRecorder<PaceContext>();
    const responses = contextRecorder<ResponseContext>();
    const aniLink = clientFor(server, { onPace: paces.hook, onResponse: responses.hook });
    server.enqueue(ok(quota(0)));

    const firstStartedAt = performance.now();
    await aniLink.anilist.query.media({ id: 1 });
    expect(performance.now() - firstStartedAt).toBeLessThan(UNPACED_MAX_MS);
    expect(paces.contexts).toEqual([]);

    const secondStartedAt = performance.now();
    const media = await aniLink.anilist.query.media({ id: 2 });
    const secondTookMs = performance.now() - secondStartedAt;

    expect(media).toEqual({ id: 1 });
    // Only two requests: nothing reached the server during the wait.
    expect(server.requests).toHaveLength(2);
    expectPacedGap(server.requests, 0, 1);
    expect(secondTookMs).toBeGreaterThanOrEqual(WAITED_AT_LEAST_MS);

    expect(paces.contexts).toHaveLength(1);
    const pace = paces.contexts[0];
    expect(pace.attempt).toBe(1);
    expect(pace.delayMs).toBeGreaterThan(RESET_IN_MS - 300);
    expect(pace.delayMs).toBeLessThanOrEqual(RESET_IN_MS);
    expect('aborted' in pace).toBe(false);

    const [first, second] = responses.contexts;
    expect('pacedMs' in first).toBe(false);
    expect(second.requestId).toBe(pace.requestId);
    expect(second.pacedMs).toBe(pace.delayMs);
    // durationMs is the network attempt alone (D6).
    expect(second.durationMs).toBeLessThan(secondTookMs - WAITED_AT_LEAST_MS + 100);
    // The elapsed deadline stays visible until a later wait finds it elapsed.
    expect(aniLink.getTransportState().anilist.paceDeadlines).toHaveLength(1);
  });

  it('paces a retry too: the wait runs before every attempt, not only the first', async () => {
    const paces = contextRecorder<PaceContext>();
    const responses = contextRecorder<ResponseContext>();
    const aniLink = clientFor(server, { retry: { baseDelayMs: 400, jitter: false } });
    // Media 1 fails once, then succeeds; media 2 exhausts the quota while media 1 is in backoff.
    let media1Answers = 0;
    server.handle((request) => {
      if (mediaIdOf(request) === 2) return ok(quota(0));
      media1Answers += 1;
      return media1Answers === 1 ? { status: 500 } : ok({});
    });

    const retried = aniLink.anilist.query.media({ id: 1 }, { onPace: paces.hook, onResponse: responses.hook });
    await server.waitForRequests(1);
    await aniLink.anilist.query.media({ id: 2 });
    await retried;

    expect(server.requests).toHaveLength(3);
    expectPacedGap(server.requests, 1, 2);
    expect(paces.contexts.map((pace) => pace.attempt)).toEqual([2]);
    expect(responses.contexts.map((response) => response.attempt)).toEqual([1, 2]);
    expect('pacedMs' in responses.contexts[0]).toBe(false);
    expect(responses.contexts[1].pacedMs).toBe(paces.contexts[0].delayMs);
  });

  it('pacedMs carries a wait of an earlier attempt into the reports of later ones', async () => {
    const paces = contextRecorder<PaceContext>();
    const responses = contextRecorder<ResponseContext>();
    const aniLink = clientFor(server, { retry: { baseDelayMs: 5, jitter: false } });
    server.enqueue(ok(quota(0, 500)), { status: 502 });
    await aniLink.anilist.query.media({ id: 1 });

    await aniLink.anilist.query.media({ id: 2 }, { onPace: paces.hook, onResponse: responses.hook });

    expect(paces.contexts.map((pace) => pace.attempt)).toEqual([1]);
    expect(responses.contexts.map((response) => [response.attempt, response.pacedMs])).toEqual([
      [1, paces.contexts[0].delayMs],
      [2, paces.contexts[0].delayMs],
    ]);
  });

  it('holds every concurrent waiter until the reset', async () => {
    const paces = contextRecorder<PaceContext>();
    const aniLink = clientFor(server, { onPace: paces.hook });
    server.enqueue(ok(quota(0)));
    await aniLink.anilist.query.media({ id: 1 });

    await Promise.all([2, 3, 4].map((id) => aniLink.anilist.query.media({ id })));

    expect(server.requests).toHaveLength(4);
    for (const later of [1, 2, 3]) expectPacedGap(server.requests, 0, later);
    expect(paces.contexts).toHaveLength(3);
    // The stagger is added to the sleep, never to the reported delay.
    expect(paces.contexts.every((pace) => pace.delayMs <= RESET_IN_MS)).toBe(true);
  });

  it('with the default floor of 1, a remaining quota of 1 does not pace', async () => {
    const paces = contextRecorder<PaceContext>();
    const aniLink = clientFor(server, { onPace: paces.hook });
    server.enqueue(ok(quota(1)));

    await aniLink.anilist.query.media({ id: 1 });
    await aniLink.anilist.query.media({ id: 2 });

    expect(gap(server.requests, 0, 1)).toBeLessThan(UNPACED_MAX_MS);
    expect(paces.contexts).toEqual([]);
  });

  it('rateLimitFloor: 5 starts waiting at 4 remaining, not at 5', async () => {
    const paces = contextRecorder<PaceContext>();
    const aniLink = clientFor(server, { rateLimitFloor: 5, onPace: paces.hook });
    server.enqueue(ok(quota(5)), ok(quota(4)));

    await aniLink.anilist.query.media({ id: 1 });
    await aniLink.anilist.query.media({ id: 2 });
    await aniLink.anilist.query.media({ id: 3 });

    expect(gap(server.requests, 0, 1)).toBeLessThan(UNPACED_MAX_MS);
    expectPacedGap(server.requests, 1, 2);
    expect(paces.contexts).toHaveLength(1);
  });

  it('rateLimitFloor: 0 disables floor pacing', async () => {
    const aniLink = clientFor(server, { rateLimitFloor: 0 });
    server.enqueue(ok(quota(0)));

    await aniLink.anilist.query.media({ id: 1 });
    await aniLink.anilist.query.media({ id: 2 });

    expect(gap(server.requests, 0, 1)).toBeLessThan(UNPACED_MAX_MS);
  });

  it('ignorePaceDeadline: true goes straight through, and leaves the deadline for others', async () => {
    const paces = contextRecorder<PaceContext>();
    const aniLink = clientFor(server, { onPace: paces.hook });
    const resetSeconds = (Date.now() + RESET_IN_MS) / 1000;
    server.enqueue(ok(rateLimitHeaders(90, 0, resetSeconds)));

    await aniLink.anilist.query.media({ id: 1 });
    await aniLink.anilist.query.media({ id: 2 }, { ignorePaceDeadline: true });

    expect(gap(server.requests, 0, 1)).toBeLessThan(UNPACED_MAX_MS);
    expect(paces.contexts).toEqual([]);
    expect(aniLink.getTransportState().anilist.paceDeadlines).toEqual([
      { host: server.host, deadlineMs: Math.round(resetSeconds * 1000) },
    ]);

    await aniLink.anilist.query.media({ id: 3 });
    expectPacedGap(server.requests, 0, 2);
    expect(paces.contexts).toHaveLength(1);
  });

  it('paceWithRateLimit: false turns pacing off: the 429 is met and retried instead', async () => {
    const paces = contextRecorder<PaceContext>();
    const aniLink = clientFor(server, {
      paceWithRateLimit: false,
      retry: { baseDelayMs: 5, jitter: false },
      onPace: paces.hook,
    });
    server.enqueue(
      ok(quota(0)),
      // The quota really is gone: the unpaced request earns a 429 telling it when to come back.
      { status: 429, headers: quota(0, 300) },
    );

    await aniLink.anilist.query.media({ id: 1 });
    await aniLink.anilist.query.media({ id: 2 });

    expect(server.requests).toHaveLength(3);
    expect(gap(server.requests, 0, 1)).toBeLessThan(UNPACED_MAX_MS);
    // The retry waited for the 429's x-ratelimit-reset (about 300 ms), not the 5 ms backoff.
    expect(gap(server.requests, 1, 2)).toBeGreaterThanOrEqual(200);
    expect(paces.contexts).toEqual([]);
    expect(aniLink.getTransportState().anilist.paceDeadlines).toEqual([]);
  });
});

describe('pacing after a terminal failure', () => {
  it('a terminal 429 with quota headers paces the next call', async () => {
    const paces = contextRecorder<PaceContext>();
    const aniLink = clientFor(server, { retry: false, onPace: paces.hook });
    server.enqueue({ status: 429, headers: quota(0) });

    const error = await failureOf(aniLink.anilist.query.media({ id: 1 }));
    expect(error).toMatchObject({ status: 429 });
    await aniLink.anilist.query.media({ id: 2 });

    expect(server.requests).toHaveLength(2);
    expectPacedGap(server.requests, 0, 1);
    expect(paces.contexts).toHaveLength(1);
  });

  it('a 429 that exhausts the retries paces the next call', async () => {
    const paces = contextRecorder<PaceContext>();
    const aniLink = clientFor(server, { retry: { maxRetries: 1, baseDelayMs: 5, jitter: false }, onPace: paces.hook });
    // Retry-After: 0 lets the retry go at once; the quota headers say when the quota is back.
    const tooMany = { status: 429, headers: { 'retry-after': '0', ...quota(0) } };
    server.enqueue(tooMany, tooMany);

    await failureOf(aniLink.anilist.query.media({ id: 1 }));
    await aniLink.anilist.query.media({ id: 2 });

    expect(server.requests).toHaveLength(3);
    expect(gap(server.requests, 0, 1)).toBeLessThan(UNPACED_MAX_MS);
    expectPacedGap(server.requests, 0, 2);
    expect(paces.contexts).toHaveLength(1);
  });

  it('a terminal 503 with quota headers records nothing', async () => {
    const aniLink = clientFor(server, { retry: false });
    server.enqueue({ status: 503, headers: quota(0) });

    await failureOf(aniLink.anilist.query.media({ id: 1 }));
    await aniLink.anilist.query.media({ id: 2 });

    expect(gap(server.requests, 0, 1)).toBeLessThan(UNPACED_MAX_MS);
    expect(aniLink.getTransportState().anilist.paceDeadlines).toEqual([]);
  });
});

describe('pacing per provider client', () => {
  it("MAL's X-RateLimit-* headers pace the MAL slot only", async () => {
    const aniListPaces = contextRecorder<PaceContext>();
    const malPaces = contextRecorder<PaceContext>();
    const aniLink = clientFor(server, { onPace: aniListPaces.hook }, { onPace: malPaces.hook });
    const resetSeconds = (Date.now() + RESET_IN_MS) / 1000;
    server.enqueue(
      ok({ 'X-RateLimit-Limit': '60', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(resetSeconds) }),
    );

    await aniLink.mal.anime.get({ id: 1 });
    await aniLink.anilist.query.media({ id: 2 });
    expect(gap(server.requests, 0, 1)).toBeLessThan(UNPACED_MAX_MS);
    expect(aniListPaces.contexts).toEqual([]);

    const state = aniLink.getTransportState();
    expect(state.mal.paceDeadlines).toEqual([{ host: server.host, deadlineMs: Math.round(resetSeconds * 1000) }]);
    expect(state.anilist.paceDeadlines).toEqual([]);

    await aniLink.mal.anime.get({ id: 3 });
    expect(server.requests.map((request) => request.method)).toEqual(['GET', 'POST', 'GET']);
    expectPacedGap(server.requests, 0, 2);
    expect(malPaces.contexts).toHaveLength(1);
  });

  it("the AniList slot's deadline never delays the MAL slot", async () => {
    const malPaces = contextRecorder<PaceContext>();
    const aniLink = clientFor(server, {}, { onPace: malPaces.hook });
    server.enqueue(ok(quota(0)));

    await aniLink.anilist.query.media({ id: 1 });
    await aniLink.mal.anime.get({ id: 2 });

    expect(gap(server.requests, 0, 1)).toBeLessThan(UNPACED_MAX_MS);
    expect(malPaces.contexts).toEqual([]);
    expect(aniLink.getTransportState().anilist.paceDeadlines).toHaveLength(1);
    expect(aniLink.getTransportState().mal.paceDeadlines).toEqual([]);
  });

  it('another AniLink instance is not paced by this one', async () => {
    server.enqueue(ok(quota(0)));

    await clientFor(server).anilist.query.media({ id: 1 });
    await clientFor(server).anilist.query.media({ id: 2 });

    expect(gap(server.requests, 0, 1)).toBeLessThan(UNPACED_MAX_MS);
  });
});

describe('cancelling a pacing wait', () => {
  it('rejects with ABORTED_ERROR and abortedDuringPacing, and reports the aborted wait', async () => {
    const paces = contextRecorder<PaceContext>();
    const aniLink = clientFor(server, { onPace: paces.hook });
    server.enqueue(ok(quota(0, 2_000)));
    await aniLink.anilist.query.media({ id: 1 });

    const controller = new AbortController();
    const otherHooks: string[] = [];
    const waiting = aniLink.anilist.query.media(
      { id: 2 },
      {
        signal: controller.signal,
        onRequestStart: () => otherHooks.push('onRequestStart'),
        onResponse: () => otherHooks.push('onResponse'),
        onError: () => otherHooks.push('onError'),
      },
    );
    await sleep(200);
    const abortedAt = performance.now();
    controller.abort();
    const error = await failureOf(waiting);

    expect(performance.now() - abortedAt).toBeLessThan(500);
    expect(error).toBeInstanceOf(AniLinkNetworkError);
    expect(error).toMatchObject({
      code: 'ABORTED_ERROR',
      abortedDuringPacing: true,
      message: 'The request was cancelled while waiting for the rate-limit window to reset.',
    });
    expect(typeof error.requestId).toBe('string');
    expect(server.requests).toHaveLength(1);
    expect(otherHooks).toEqual([]);

    expect(paces.contexts).toHaveLength(1);
    const [pace] = paces.contexts;
    expect(pace.aborted).toBe(true);
    expect(pace.requestId).toBe(error.requestId);
    // The time actually waited, not the full delay.
    expect(pace.delayMs).toBeGreaterThanOrEqual(150);
    expect(pace.delayMs).toBeLessThan(1_500);
  });
});

describe('options and state', () => {
  it('an invalid rateLimitFloor throws a TypeError', async () => {
    for (const floor of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '5']) {
      expect(() => clientFor(server, { rateLimitFloor: floor as number }), String(floor)).toThrow(TypeError);
      expect(() => clientFor(server, { rateLimitFloor: floor as number }), String(floor)).toThrow(/rateLimitFloor/);
      expect(() => new AniLink(undefined, { baseUrl: server.url, rateLimitFloor: floor as number })).toThrow(TypeError);
    }
    // Per request: the call rejects before any I/O.
    await expect(clientFor(server).anilist.query.media({ id: 1 }, { rateLimitFloor: -1 })).rejects.toThrow(TypeError);
    expect(server.requests).toHaveLength(0);
  });

  it('getTransportState() lists the recorded deadlines', async () => {
    const aniLink = clientFor(server);
    expect(aniLink.getTransportState().anilist.paceDeadlines).toEqual([]);
    const resetSeconds = (Date.now() + 60_000) / 1000;
    server.enqueue(ok(rateLimitHeaders(90, 0, resetSeconds)));

    await aniLink.anilist.query.media({ id: 1 });

    const state = aniLink.getTransportState();
    expect(state.anilist.paceDeadlines).toEqual([{ host: server.host, deadlineMs: Math.round(resetSeconds * 1000) }]);
    expect(Object.isFrozen(state.anilist.paceDeadlines)).toBe(true);
    expect(state.mal.paceDeadlines).toEqual([]);
  });

  it('caps a far-away reset at five minutes', async () => {
    const aniLink = clientFor(server);
    server.enqueue(ok(rateLimitHeaders(90, 0, (Date.now() + 3_600_000) / 1000)));

    const before = Date.now();
    await aniLink.anilist.query.media({ id: 1 });
    const after = Date.now();

    const [deadline] = aniLink.getTransportState().anilist.paceDeadlines;
    expect(deadline.deadlineMs).toBeGreaterThanOrEqual(before + 300_000);
    expect(deadline.deadlineMs).toBeLessThanOrEqual(after + 300_000);
  });
});
