// End-to-end checks of the retry policy (issue 3; seed "Default retry policy" and "Tuning or
// opting out"; transport.md 1.3, 1.5; decisions D1, D4, D5), judged by what the test server
// received: how many attempts, and the time between them.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  AniLinkApiError,
  AniLinkGraphQLError,
  AniLinkNetworkError,
  AniLinkRestError,
  destroyCachedAgents,
  type RequestOptions,
} from 'anilink-api-wrapper';
import { clientFor, failureOf, failureRecorder, mediaIdOf, useTestServer } from './support/helpers';
import { rateLimitHeaders, type RecordedRequest, type TestServer } from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

/** Tiny deterministic backoff: caps of 5, 10 and 20 ms. */
const FAST: RequestOptions['retry'] = { baseDelayMs: 5, jitter: false };

/** ms between consecutive requests, from the server's arrival times. */
function gapsBetween(requests: readonly RecordedRequest[]): number[] {
  return requests.slice(1).map((request, index) => request.receivedAt - requests[index].receivedAt);
}

/**
 * Every attempt waited at least the delay announced for it. The server's arrival times bracket
 * the client's sleep (the response is sent after the first arrival, the retry is sent after the
 * sleep), so only timer rounding can make a gap shorter than the delay.
 */
function expectGapsAtLeast(requests: readonly RecordedRequest[], delays: readonly number[]): void {
  const gaps = gapsBetween(requests);
  expect(gaps).toHaveLength(delays.length);
  gaps.forEach((gap, index) => expect(gap).toBeGreaterThanOrEqual(delays[index] - 1));
}

describe('the default policy', () => {
  it('retries 429, 500, 502, 503 and 504 three times with full-jitter waits under caps of 250, 500 and 1000 ms', async () => {
    const statuses = [429, 500, 502, 503, 504];
    // The requested media id doubles as the status to answer with, so all five run at once.
    server.handle((request) => ({ status: mediaIdOf(request), body: { errors: [{ message: 'upstream trouble' }] } }));
    const aniLink = clientFor(server);
    const retries = new Map(statuses.map((status) => [status, failureRecorder()]));

    const errors = await Promise.all(
      statuses.map((status) =>
        failureOf(aniLink.anilist.query.media({ id: status }, { onRetry: retries.get(status)!.hook })),
      ),
    );

    // Full jitter: across fifteen waits, some fall short of their cap (all fifteen landing exactly
    // on the cap has a probability of about 1e-29).
    const caps = [250, 500, 1000];
    const allDelays = statuses.flatMap((status) =>
      retries.get(status)!.reports.map(({ context }) => context.nextDelayMs),
    );
    expect(allDelays.some((delay, index) => delay !== caps[index % 3])).toBe(true);

    statuses.forEach((status, index) => {
      const error = errors[index];
      expect(error).toBeInstanceOf(AniLinkApiError);
      expect(error).toMatchObject({ code: 'API_ERROR', status });
      const attempts = server.requests.filter((request) => mediaIdOf(request) === status);
      expect(attempts).toHaveLength(4);
      const delays = retries.get(status)!.reports.map(({ context }) => context.nextDelayMs!);
      expect(delays).toHaveLength(3);
      caps.forEach((cap, retry) => {
        expect(Number.isInteger(delays[retry])).toBe(true);
        expect(delays[retry]).toBeGreaterThanOrEqual(0);
        expect(delays[retry]).toBeLessThanOrEqual(cap);
      });
      expectGapsAtLeast(attempts, delays);
    });
  });

  it('retries a connection dropped before the response, each attempt on a fresh connection', async () => {
    // A fresh pool: the first attempt must not ride a reused keep-alive connection, whose loss
    // would be resent once as a stale connection instead of being counted as a failure.
    destroyCachedAgents();
    server.setDefault({ drop: 'before-response' });
    const retries = failureRecorder();

    const error = await failureOf(clientFor(server).anilist.query.media({ id: 1 }, { onRetry: retries.hook }));

    expect(error).toBeInstanceOf(AniLinkNetworkError);
    expect(error.code).toBe('NETWORK_ERROR');
    expect(server.requests).toHaveLength(4);
    expect(new Set(server.requests.map((request) => request.connectionId)).size).toBe(4);
    const delays = retries.reports.map(({ context }) => context.nextDelayMs!);
    expect(delays).toHaveLength(3);
    [250, 500, 1000].forEach((cap, retry) => expect(delays[retry]).toBeLessThanOrEqual(cap));
    expectGapsAtLeast(server.requests, delays);
  });

  it('does not retry 400, 401 or 404', async () => {
    const statuses = [400, 401, 404];
    server.handle((request) => ({ status: mediaIdOf(request), body: { errors: [{ message: 'caller problem' }] } }));
    const aniLink = clientFor(server);

    const errors = await Promise.all(statuses.map((status) => failureOf(aniLink.anilist.query.media({ id: status }))));

    statuses.forEach((status, index) => expect(errors[index]).toMatchObject({ code: 'API_ERROR', status }));
    expect(server.requests.map(mediaIdOf).sort()).toEqual(statuses);
  });

  it('retries a MAL GET (REST reads get the default policy)', async () => {
    server.enqueue({ status: 503, body: 'busy' });

    const anime = await clientFor(server).mal.anime.get({ id: 5 });

    expect(anime).toEqual({ data: { Media: { id: 1 } } });
    expect(server.requests.map((request) => [request.method, request.path])).toEqual([
      ['GET', '/anime/5'],
      ['GET', '/anime/5'],
    ]);
  });
});

describe('network failures and timeouts', () => {
  it('retries a response cut off mid-body', async () => {
    destroyCachedAgents();
    server.setDefault({ drop: 'mid-body' });

    const error = await failureOf(clientFor(server).anilist.query.media({ id: 1 }, { retry: FAST }));

    expect(error.code).toBe('NETWORK_ERROR');
    expect(server.requests).toHaveLength(4);
  });

  it('retries a timed-out attempt like a network error', async () => {
    server.setDefault({ delayMs: 1_000 });

    const error = await failureOf(clientFor(server).anilist.query.media({ id: 1 }, { timeout: 50, retry: FAST }));

    expect(error).toMatchObject({ code: 'TIMEOUT_ERROR', timeoutMs: 50 });
    expect(server.requests).toHaveLength(4);
  });

  it('retryOnNetworkError: false surfaces a dropped connection at once', async () => {
    destroyCachedAgents();
    server.setDefault({ drop: 'before-response' });

    const error = await failureOf(
      clientFor(server).anilist.query.media({ id: 1 }, { retry: { ...FAST, retryOnNetworkError: false } }),
    );

    expect(error.code).toBe('NETWORK_ERROR');
    expect(server.requests).toHaveLength(1);
  });
});

describe('opting out and tuning', () => {
  it('retry: false sends a failing request exactly once, at slot and at request level', async () => {
    server.setDefault({ status: 503 });

    const slotOff = await failureOf(clientFor(server, { retry: false }).anilist.query.media({ id: 1 }));
    expect(slotOff).toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(1);

    server.reset();
    server.setDefault({ status: 503 });
    await failureOf(clientFor(server, { retry: FAST }).anilist.query.media({ id: 1 }, { retry: false }));
    expect(server.requests).toHaveLength(1);
  });

  it('maxRetries bounds the attempts to maxRetries + 1', async () => {
    server.setDefault({ status: 500 });
    const aniLink = clientFor(server);

    await failureOf(aniLink.anilist.query.media({ id: 1 }, { retry: { ...FAST, maxRetries: 1 } }));
    expect(server.requests).toHaveLength(2);

    server.reset();
    server.setDefault({ status: 500 });
    await failureOf(aniLink.anilist.query.media({ id: 1 }, { retry: { ...FAST, maxRetries: 5 } }));
    expect(server.requests).toHaveLength(6);

    server.reset();
    server.setDefault({ status: 500 });
    await failureOf(aniLink.anilist.query.media({ id: 1 }, { retry: { maxRetries: 0 } }));
    expect(server.requests).toHaveLength(1);
  });

  it('baseDelayMs with jitter: false waits exactly 1x, 2x and 4x the base', async () => {
    server.setDefault({ status: 502 });
    const retries = failureRecorder();

    await failureOf(
      clientFor(server).anilist.query.media(
        { id: 1 },
        { retry: { baseDelayMs: 60, jitter: false }, onRetry: retries.hook },
      ),
    );

    const delays = retries.reports.map(({ context }) => context.nextDelayMs);
    expect(delays).toEqual([60, 120, 240]);
    expect(server.requests).toHaveLength(4);
    expectGapsAtLeast(server.requests, [60, 120, 240]);
    // Each wait is the cap, not a random fraction of a larger one.
    gapsBetween(server.requests).forEach((gap, index) => expect(gap).toBeLessThan([60, 120, 240][index] + 500));
  });

  it('maxDelayMs caps the exponential growth', async () => {
    server.setDefault({ status: 504 });
    const retries = failureRecorder();

    await failureOf(
      clientFor(server).anilist.query.media(
        { id: 1 },
        { retry: { baseDelayMs: 50, maxDelayMs: 80, maxRetries: 4, jitter: false }, onRetry: retries.hook },
      ),
    );

    expect(retries.reports.map(({ context }) => context.nextDelayMs)).toEqual([50, 80, 80, 80]);
    expect(server.requests).toHaveLength(5);
    expectGapsAtLeast(server.requests, [50, 80, 80, 80]);
  });

  it('retryOnStatus is authoritative: unlisted statuses are surfaced, listed ones retried', async () => {
    const aniLink = clientFor(server, { retry: { ...FAST, retryOnStatus: [503, 408] } });

    server.setDefault({ status: 500 });
    await failureOf(aniLink.anilist.query.media({ id: 1 }));
    expect(server.requests).toHaveLength(1);

    server.reset();
    server.setDefault({ status: 408 });
    await failureOf(aniLink.anilist.query.media({ id: 1 }));
    expect(server.requests).toHaveLength(4);

    server.reset();
    server.setDefault({ status: 503 });
    await failureOf(aniLink.anilist.query.media({ id: 1 }));
    expect(server.requests).toHaveLength(4);
  });

  it('a 429 is surfaced at once when retryOnStatus leaves it out (D4)', async () => {
    server.setDefault({ status: 429, headers: { 'retry-after': '0' } });

    const error = await failureOf(
      clientFor(server).anilist.query.media({ id: 1 }, { retry: { ...FAST, retryOnStatus: [500, 503] } }),
    );

    expect(error).toMatchObject({ code: 'API_ERROR', status: 429 });
    expect(server.requests).toHaveLength(1);
  });

  it('a per-request retry object replaces the slot policy; its unset knobs take the built-in defaults', async () => {
    server.enqueue({ status: 500 });
    const retries = failureRecorder();
    const aniLink = clientFor(server, { retry: { baseDelayMs: 2_000, maxRetries: 1, jitter: false } });

    await aniLink.anilist.query.media({ id: 1 }, { retry: { jitter: false }, onRetry: retries.hook });

    // The built-in base of 250 ms, not the slot's 2000 ms.
    expect(retries.reports.map(({ context }) => context.nextDelayMs)).toEqual([250]);
    expect(server.requests).toHaveLength(2);
  });

  it('throws the last error when the retries run out', async () => {
    server.enqueue(
      { status: 500, body: { attempt: 1 } },
      { status: 502, body: { attempt: 2 } },
      { status: 503, body: { attempt: 3 } },
    );
    const errors = failureRecorder();

    const error = await failureOf(
      clientFor(server).anilist.query.media({ id: 1 }, { retry: { ...FAST, maxRetries: 2 }, onError: errors.hook }),
    );

    expect(server.requests).toHaveLength(3);
    expect(error).toBeInstanceOf(AniLinkApiError);
    expect(error).toMatchObject({ status: 503, data: { attempt: 3 } });
    const terminal = errors.reports.at(-1)!;
    expect(terminal.context.nextDelayMs).toBeUndefined();
    expect(error.requestId).toBe(terminal.context.requestId);
  });
});

describe('server-directed waits', () => {
  it('a 429 with Retry-After: 1 waits one second, not jittered', async () => {
    server.enqueue({ status: 429, headers: { 'retry-after': '1' } });
    const retries = failureRecorder();

    const media = await clientFor(server).anilist.query.media({ id: 1 }, { onRetry: retries.hook });

    expect(media).toEqual({ id: 1 });
    expect(retries.reports.map(({ context }) => context.nextDelayMs)).toEqual([1000]);
    expect(server.requests).toHaveLength(2);
    const [gap] = gapsBetween(server.requests);
    expect(gap).toBeGreaterThanOrEqual(999);
    expect(gap).toBeLessThan(3000);
  });

  it('a 429 with an HTTP-date Retry-After waits until that date', async () => {
    // HTTP-dates have whole seconds: aim at the first whole second at least 1 s away.
    const retryAtMs = Math.ceil((Date.now() + 1000) / 1000) * 1000;
    let answeredAtMs = 0;
    server.handle(() => {
      if (answeredAtMs !== 0) return undefined;
      answeredAtMs = Date.now();
      return { status: 429, headers: { 'retry-after': new Date(retryAtMs).toUTCString() } };
    });
    const retries = failureRecorder();

    await clientFor(server).anilist.query.media({ id: 1 }, { onRetry: retries.hook });

    const [delay] = retries.reports.map(({ context }) => context.nextDelayMs!);
    const expected = retryAtMs - answeredAtMs;
    expect(delay).toBeLessThanOrEqual(expected);
    expect(delay).toBeGreaterThan(expected - 300);
    expect(server.requests).toHaveLength(2);
    expectGapsAtLeast(server.requests, [delay]);
  });

  it('a 503 with Retry-After is honoured too (D5)', async () => {
    server.enqueue({ status: 503, headers: { 'retry-after': '1' } });
    const retries = failureRecorder();

    await clientFor(server).anilist.query.media({ id: 1 }, { onRetry: retries.hook });

    expect(retries.reports.map(({ context }) => context.nextDelayMs)).toEqual([1000]);
    const [gap] = gapsBetween(server.requests);
    expect(gap).toBeGreaterThanOrEqual(999);
    expect(gap).toBeLessThan(3000);
  });

  it('a 429 without Retry-After waits for x-ratelimit-reset', async () => {
    const resetAtMs = Date.now() + 1000;
    server.enqueue({ status: 429, headers: rateLimitHeaders(90, 0, resetAtMs / 1000) });
    const retries = failureRecorder();

    await clientFor(server).anilist.query.media({ id: 1 }, { onRetry: retries.hook });

    const [delay] = retries.reports.map(({ context }) => context.nextDelayMs!);
    // Far beyond the 250 ms jitter cap of a first retry, and never past the reset.
    expect(delay).toBeGreaterThan(700);
    expect(delay).toBeLessThanOrEqual(1000);
    expect(retries.reports[0].context.rateLimit).toEqual({ limit: 90, remaining: 0, reset: resetAtMs / 1000 });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1].receivedAt - server.requests[0].receivedAt).toBeGreaterThanOrEqual(delay - 1);
  });
});

describe('server-directed waits: limits and malformed values', () => {
  /** The first retry delay a single 429/503/500 answer leads to, under a 5 ms fixed backoff. */
  async function firstDelayAfter(status: number, headers: Record<string, string>): Promise<number | undefined> {
    server.reset();
    server.enqueue({ status, headers });
    const retries = failureRecorder();
    await clientFor(server).anilist.query.media({ id: 1 }, { retry: FAST, onRetry: retries.hook });
    return retries.reports[0]?.context.nextDelayMs;
  }

  it('reads fractional seconds and treats a past HTTP-date as no wait', async () => {
    expect(await firstDelayAfter(429, { 'retry-after': '0.2' })).toBe(200);
    expect(await firstDelayAfter(429, { 'retry-after': new Date(Date.now() - 60_000).toUTCString() })).toBe(0);
  });

  it('ignores negative or unparseable values and falls back to the backoff', async () => {
    expect(await firstDelayAfter(429, { 'retry-after': '-3' })).toBe(5);
    expect(await firstDelayAfter(429, { 'retry-after': 'soon' })).toBe(5);
    expect(await firstDelayAfter(503, { 'retry-after': 'later' })).toBe(5);
  });

  it('ignores Retry-After on statuses other than 429 and 503', async () => {
    expect(await firstDelayAfter(500, { 'retry-after': '1' })).toBe(5);
  });

  it('caps a server-directed wait at 60 s', async () => {
    server.enqueue({ status: 429, headers: { 'retry-after': '120' } });
    const controller = new AbortController();
    const delays: (number | undefined)[] = [];
    const call = clientFor(server).anilist.query.media(
      { id: 1 },
      {
        signal: controller.signal,
        // Seen the schedule: no need to sit through it.
        onRetry: (_error, context) => {
          delays.push(context.nextDelayMs);
          setImmediate(() => controller.abort());
        },
      },
    );

    const error = await failureOf(call);

    expect(delays).toEqual([60_000]);
    expect(error.code).toBe('ABORTED_ERROR');
    expect(server.requests).toHaveLength(1);
  });

  it('a GraphQL envelope 429 waits for its x-ratelimit-reset', async () => {
    server.enqueue({
      status: 200,
      headers: rateLimitHeaders(90, 0, (Date.now() + 300) / 1000),
      body: { data: null, errors: [{ message: 'Too Many Requests.', status: 429 }] },
    });
    const retries = failureRecorder();

    await clientFor(server).anilist.query.media({ id: 1 }, { retry: FAST, onRetry: retries.hook });

    const [delay] = retries.reports.map(({ context }) => context.nextDelayMs!);
    expect(delay).toBeGreaterThan(100);
    expect(delay).toBeLessThanOrEqual(300);
    expect(retries.reports[0].error).toBeInstanceOf(AniLinkGraphQLError);
  });
});

describe('hooks around retries', () => {
  it('onRetry reports every scheduled retry with nextDelayMs and retryWaitMs; onError the terminal failure', async () => {
    server.setDefault({ status: 500 });
    const retries = failureRecorder();
    const errors = failureRecorder();

    const error = await failureOf(
      clientFor(server).anilist.query.media({ id: 1 }, { retry: FAST, onRetry: retries.hook, onError: errors.hook }),
    );

    expect(retries.reports.map(({ context }) => context.attempt)).toEqual([1, 2, 3]);
    expect(retries.reports.map(({ context }) => context.nextDelayMs)).toEqual([5, 10, 20]);
    // retryWaitMs sums the waits scheduled before the report, and is absent while there were none.
    expect('retryWaitMs' in retries.reports[0].context).toBe(false);
    expect(retries.reports.slice(1).map(({ context }) => context.retryWaitMs)).toEqual([5, 15]);
    expect(errors.reports).toHaveLength(1);
    const terminal = errors.reports[0].context;
    expect(terminal).toMatchObject({ attempt: 4, code: 'API_ERROR', status: 500, retryWaitMs: 35 });
    expect('nextDelayMs' in terminal).toBe(false);
    expect('budgetExhausted' in terminal).toBe(false);
    const requestIds = new Set([...retries.reports, ...errors.reports].map(({ context }) => context.requestId));
    expect(requestIds).toEqual(new Set([error.requestId]));
  });

  it('without onRetry, onError receives the retried attempts too', async () => {
    server.setDefault({ status: 503 });
    const errors = failureRecorder();

    await failureOf(clientFor(server).anilist.query.media({ id: 1 }, { retry: FAST, onError: errors.hook }));

    expect(errors.reports.map(({ context }) => context.nextDelayMs)).toEqual([5, 10, 20, undefined]);
    expect(errors.reports.map(({ context }) => context.retryWaitMs)).toEqual([undefined, 5, 15, 35]);
    expect(errors.reports.every(({ error }) => error instanceof AniLinkApiError && error.status === 503)).toBe(true);
  });
});

describe('mutations and writes (D1)', () => {
  it('an AniList mutation operation is sent once by default', async () => {
    server.setDefault({ status: 503 });

    const error = await failureOf(
      clientFor(server, { authToken: 'token' }).anilist.mutation.saveMediaListEntry({ mediaId: 1, status: 'CURRENT' }),
    );

    expect(error).toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(1);
    expect((server.requests[0].json as { query: string }).query).toMatch(/^\s*mutation\b/);
  });

  it('a custom mutation document is sent once by default, a custom query is retried', async () => {
    server.setDefault({ status: 503 });
    const aniLink = clientFor(server, { authToken: 'token' });

    await failureOf(
      aniLink.anilist.custom('mutation ($id: Int) { ToggleFavourite(animeId: $id) { __typename } }', { id: 1 }),
    );
    expect(server.requests).toHaveLength(1);

    server.reset();
    server.setDefault({ status: 503 });
    await failureOf(aniLink.anilist.custom('query { Media(id: 1) { id } }', {}, { retry: FAST }));
    expect(server.requests).toHaveLength(4);
  });

  it('a MAL list-status write is sent once by default', async () => {
    server.setDefault({ status: 503, body: 'busy' });

    const error = await failureOf(
      clientFor(server, {}, { accessToken: 'mal-token' }).mal.anime.updateMyListStatus({ id: 7, status: 'watching' }),
    );

    expect(error).toBeInstanceOf(AniLinkRestError);
    expect(error).toMatchObject({ code: 'REST_ERROR', status: 503 });
    expect(server.requests.map((request) => [request.method, request.path])).toEqual([
      ['PATCH', '/anime/7/my_list_status'],
    ]);
  });

  it('a MAL list delete is sent once by default', async () => {
    server.setDefault({ status: 502, body: 'bad gateway' });

    await failureOf(clientFor(server, {}, { accessToken: 'mal-token' }).mal.anime.deleteFromList({ id: 7 }));

    expect(server.requests.map((request) => request.method)).toEqual(['DELETE']);
  });

  it('a per-request retry: undefined leaves a mutation unretried even under a slot policy', async () => {
    server.setDefault({ status: 503 });

    await failureOf(
      clientFor(server, { authToken: 'token', retry: FAST }).anilist.mutation.saveMediaListEntry(
        { mediaId: 1, status: 'CURRENT' },
        { retry: undefined },
      ),
    );

    expect(server.requests).toHaveLength(1);
  });

  it('retry: true opts a mutation in to the default policy', async () => {
    server.enqueue({ status: 503 });
    server.setDefault({ status: 200, body: { data: { SaveMediaListEntry: { id: 9 } } } });

    const entry = await clientFor(server, { authToken: 'token' }).anilist.mutation.saveMediaListEntry(
      { mediaId: 1, status: 'CURRENT' },
      { retry: true },
    );

    expect(entry).toEqual({ id: 9 });
    expect(server.requests).toHaveLength(2);
  });

  it('a slot-level policy object opts mutations and MAL writes in', async () => {
    server.setDefault({ status: 503, body: 'busy' });
    const aniLink = clientFor(server, { authToken: 'token', retry: FAST }, { accessToken: 'mal-token', retry: FAST });

    await failureOf(aniLink.anilist.mutation.toggleFavourite({ animeId: 1 }));
    expect(server.requests).toHaveLength(4);

    server.reset();
    server.setDefault({ status: 503, body: 'busy' });
    await failureOf(aniLink.mal.anime.updateMyListStatus({ id: 7, status: 'watching' }));
    expect(server.requests).toHaveLength(4);
    expect(server.requests.every((request) => request.method === 'PATCH')).toBe(true);
  });

  it('slot-level retry: true opts MAL writes in to the default policy', async () => {
    server.enqueue({ status: 503, body: 'busy' });
    server.setDefault({ status: 200, body: { status: 'watching' } });

    const status = await clientFor(server, {}, { accessToken: 'mal-token', retry: true }).mal.anime.updateMyListStatus({
      id: 7,
      status: 'watching',
    });

    expect(status).toEqual({ status: 'watching' });
    expect(server.requests.map((request) => request.method)).toEqual(['PATCH', 'PATCH']);
  });
});

describe('GraphQL envelope errors', () => {
  it('an envelope error carrying status 503 in a 200 is retried', async () => {
    server.setDefault({ status: 200, body: { data: null, errors: [{ message: 'Service unavailable', status: 503 }] } });

    const error = await failureOf(clientFor(server).anilist.query.media({ id: 1 }, { retry: FAST }));

    expect(error).toBeInstanceOf(AniLinkGraphQLError);
    expect(error).toMatchObject({ code: 'GRAPHQL_ERROR', status: 503 });
    expect(server.requests).toHaveLength(4);
  });

  it('a status-less envelope error is not retried', async () => {
    server.setDefault({ status: 200, body: { data: null, errors: [{ message: 'Cannot query field "nope"' }] } });

    const error = await failureOf(clientFor(server).anilist.query.media({ id: 1 }, { retry: FAST }));

    expect(error).toMatchObject({ code: 'GRAPHQL_ERROR', status: 200 });
    expect(server.requests).toHaveLength(1);
  });
});

describe('cancellation', () => {
  it('an abort during a backoff wait rejects at once with ABORTED_ERROR and reports nothing more', async () => {
    server.setDefault({ status: 500 });
    const controller = new AbortController();
    const retries = failureRecorder();
    const errors = failureRecorder();
    let requestStarts = 0;
    const call = clientFor(server).anilist.query.media(
      { id: 1 },
      {
        retry: { baseDelayMs: 5000, jitter: false },
        signal: controller.signal,
        onRetry: retries.hook,
        onError: errors.hook,
        onRequestStart: () => {
          requestStarts += 1;
        },
      },
    );

    await server.waitForRequests(1);
    await sleep(100);
    const abortedAt = performance.now();
    controller.abort();
    const error = await failureOf(call);

    expect(performance.now() - abortedAt).toBeLessThan(1000);
    expect(error).toBeInstanceOf(AniLinkNetworkError);
    expect(error).toMatchObject({ code: 'ABORTED_ERROR', message: 'The request was cancelled.' });
    expect((error as AniLinkNetworkError).abortedDuringPacing).toBeUndefined();
    expect(error.requestId).toBe(retries.reports[0].context.requestId);
    expect(retries.reports.map(({ context }) => context.nextDelayMs)).toEqual([5000]);
    expect(errors.reports).toHaveLength(0);
    expect(requestStarts).toBe(1);
    expect(server.requests).toHaveLength(1);
  });
});
