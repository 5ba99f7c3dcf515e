// Cancellation (transport.md 1.3, 1.4) and timeouts (decisions D9). A slot-level or per-request
// AbortSignal cancels a call in flight or in its retry backoff with ABORTED_ERROR; an
// already-aborted signal sends nothing (decisions D22; its hooks: sockets-and-signals.spec.ts). `timeout` is a per-attempt deadline that
// covers the headers and the whole body, defaults to 30000 ms, is disabled by 0, and starts
// afresh for every retry.
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { AniLink, AniLinkNetworkError } from 'anilink-api-wrapper';
import { useTestServer, UUID_V4 } from './support/helpers';
import { graphqlData, rateLimitHeaders, type TestServer } from './support/test-server';

const MEDIA = graphqlData('Media', { id: 1 });

let server: TestServer;
useTestServer((started) => {
  server = started;
});

/** Settle `promise` and report how long that took, in ms. */
async function timed<T>(promise: Promise<T>): Promise<{ outcome: T | unknown; elapsedMs: number; rejected: boolean }> {
  const startedAt = performance.now();
  try {
    const outcome = await promise;
    return { outcome, rejected: false, elapsedMs: performance.now() - startedAt };
  } catch (error) {
    return { outcome: error, rejected: true, elapsedMs: performance.now() - startedAt };
  }
}

function expectAborted(error: unknown): void {
  expect(error).toBeInstanceOf(AniLinkNetworkError);
  expect(error).toMatchObject({ code: 'ABORTED_ERROR', message: 'The request was cancelled.' });
  expect('abortedDuringPacing' in (error as object)).toBe(false);
}

function expectTimedOut(error: unknown, timeoutMs: number): void {
  expect(error).toBeInstanceOf(AniLinkNetworkError);
  expect(error).toMatchObject({ code: 'TIMEOUT_ERROR', message: 'The request timed out.', timeoutMs });
}

describe('abort', () => {
  it('a per-request signal aborts a request in flight promptly', async () => {
    const aniLink = new AniLink(undefined, { baseUrl: server.url });
    const controller = new AbortController();
    server.enqueue({ hang: true });

    const call = timed(aniLink.anilist.query.media({ id: 1 }, { signal: controller.signal }));
    await server.waitForRequests(1);
    const abortedAt = performance.now();
    controller.abort();
    const { outcome, rejected } = await call;

    expect(rejected).toBe(true);
    expect(performance.now() - abortedAt).toBeLessThan(1000);
    expectAborted(outcome);
    expect((outcome as AniLinkNetworkError).requestId).toMatch(UUID_V4);
    expect(server.requests).toHaveLength(1); // an abort is never retried
  });

  it('a slot-level signal aborts calls of that slot, during headers or during the body', async () => {
    const controller = new AbortController();
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, signal: controller.signal },
      mal: { clientId: 'cid', baseUrl: server.url },
    });
    server.enqueue({ bodyDelayMs: 5000, body: MEDIA });

    const call = timed(aniLink.anilist.query.media({ id: 1 }));
    await server.waitForRequests(1);
    controller.abort();
    const { outcome, elapsedMs } = await call;

    expectAborted(outcome);
    expect(elapsedMs).toBeLessThan(2000);
    // The MAL slot has no signal: its calls are unaffected.
    await expect(aniLink.mal.anime.get({ id: 1 })).resolves.toBeDefined();
  });

  it('aborting a slot signal cancels every call of the slot in flight', async () => {
    const controller = new AbortController();
    // Quota admission off: a cold scope would hold calls 2 and 3 behind the first (D39 a).
    const aniLink = new AniLink(undefined, { baseUrl: server.url, signal: controller.signal, rateLimitFloor: 0 });
    server.setDefault({ hang: true });

    const calls = [1, 2, 3].map((id) => aniLink.anilist.query.media({ id }).catch((e: unknown) => e));
    await server.waitForRequests(3);
    controller.abort();

    for (const error of await Promise.all(calls)) expectAborted(error);
  });

  it('the abort is reported to onError with the error’s requestId', async () => {
    const reports: { code: unknown; requestId: unknown }[] = [];
    const controller = new AbortController();
    const aniLink = new AniLink({
      anilist: {
        baseUrl: server.url,
        onError: (_error, ctx) => reports.push({ code: ctx.code, requestId: ctx.requestId }),
      },
    });
    server.enqueue({ delayMs: 5000, body: MEDIA });

    const call = aniLink.anilist.query.media({ id: 1 }, { signal: controller.signal }).catch((e: unknown) => e);
    await server.waitForRequests(1);
    controller.abort();
    const error = (await call) as AniLinkNetworkError;

    expectAborted(error);
    expect(reports).toEqual([{ code: 'ABORTED_ERROR', requestId: error.requestId }]);
  });

  it('an abort during the retry backoff rejects at once, without another attempt', async () => {
    const controller = new AbortController();
    const aniLink = new AniLink(undefined, {
      baseUrl: server.url,
      retry: { maxRetries: 3, baseDelayMs: 10_000, jitter: false },
    });
    server.enqueue({ status: 503, body: 'down' });

    const call = timed(aniLink.anilist.query.media({ id: 1 }, { signal: controller.signal }));
    await server.waitForRequests(1);
    controller.abort();
    const { outcome, elapsedMs } = await call;

    expectAborted(outcome);
    expect(elapsedMs).toBeLessThan(2000);
    expect(server.requests).toHaveLength(1);
  });

  it('an already-aborted per-request signal rejects without sending anything', async () => {
    const aniLink = new AniLink(undefined, { baseUrl: server.url });

    const error = await aniLink.anilist.query
      .media({ id: 1 }, { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expectAborted(error);

    // A normal call afterwards is the only request the server ever got.
    await aniLink.anilist.query.media({ id: 1 });
    expect(server.requests).toHaveLength(1);
  });

  it('an already-aborted slot signal rejects every call of that slot without sending anything', async () => {
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, signal: AbortSignal.abort() },
      mal: { clientId: 'cid', baseUrl: server.url, signal: AbortSignal.abort() },
    });

    expectAborted(await aniLink.anilist.query.media({ id: 1 }).catch((e: unknown) => e));
    expectAborted(await aniLink.mal.anime.get({ id: 1 }).catch((e: unknown) => e));
    // A live per-request signal replaces the slot's aborted one.
    await expect(aniLink.anilist.query.media({ id: 1 }, { signal: new AbortController().signal })).resolves.toEqual({
      id: 1,
    });
    expect(server.requests).toHaveLength(1);
  });

  it('an abort during a rate-limit pacing wait rejects with abortedDuringPacing, and onPace reports it', async () => {
    const paces: Record<string, unknown>[] = [];
    const aniLink = new AniLink(undefined, { baseUrl: server.url, onPace: (ctx) => paces.push({ ...ctx }) });
    // The quota is exhausted for the next 5 s: the next call waits before dispatch.
    server.enqueue({ headers: rateLimitHeaders(90, 0, (Date.now() + 5000) / 1000), body: MEDIA });
    await aniLink.anilist.query.media({ id: 1 });
    const controller = new AbortController();

    const call = timed(aniLink.anilist.query.media({ id: 1 }, { signal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    const { outcome, elapsedMs } = await call;

    expect(outcome).toBeInstanceOf(AniLinkNetworkError);
    expect(outcome).toMatchObject({
      code: 'ABORTED_ERROR',
      abortedDuringPacing: true,
      message: 'The request was cancelled while waiting for the rate-limit window to reset.',
    });
    expect(elapsedMs).toBeLessThan(2000);
    expect(paces).toHaveLength(1);
    expect(paces[0]).toMatchObject({ aborted: true, attempt: 1 });
    expect(paces[0].delayMs).toBeGreaterThanOrEqual(30);
    expect(paces[0].delayMs).toBeLessThan(2000);
    expect(server.requests).toHaveLength(1);
  });

  it('aborting after the call settled changes nothing', async () => {
    const controller = new AbortController();
    const aniLink = new AniLink(undefined, { baseUrl: server.url, signal: controller.signal });

    await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    expect(() => controller.abort()).not.toThrow();
  });
});

describe('timeout (D9)', () => {
  it('covers the wait for the headers', async () => {
    const aniLink = new AniLink(undefined, { baseUrl: server.url, retry: false, timeout: 100 });
    server.enqueue({ delayMs: 3000, body: MEDIA });

    const { outcome, elapsedMs } = await timed(aniLink.anilist.query.media({ id: 1 }));

    expectTimedOut(outcome, 100);
    expect((outcome as AniLinkNetworkError).requestId).toMatch(UUID_V4);
    expect(elapsedMs).toBeGreaterThanOrEqual(90);
    expect(elapsedMs).toBeLessThan(2000);
  });

  it('covers a body that arrives after the deadline', async () => {
    const aniLink = new AniLink({ mal: { clientId: 'cid', baseUrl: server.url, retry: false, timeout: 150 } });
    server.enqueue({ bodyDelayMs: 3000, body: { id: 1 } });

    const { outcome, elapsedMs } = await timed(aniLink.mal.anime.get({ id: 1 }));

    expectTimedOut(outcome, 150);
    expect(elapsedMs).toBeLessThan(2000);
  });

  it('is a deadline, not an idle timer: a body trickling in past it fails', async () => {
    const aniLink = new AniLink(undefined, { baseUrl: server.url, retry: false, timeout: 300 });
    // Every piece arrives well within 300 ms of the previous one; the whole body takes ~900 ms.
    server.enqueue({ body: MEDIA, trickle: { chunks: 10, intervalMs: 100 } });

    const { outcome, elapsedMs } = await timed(aniLink.anilist.query.media({ id: 1 }));

    expectTimedOut(outcome, 300);
    expect(elapsedMs).toBeGreaterThanOrEqual(280);
    expect(elapsedMs).toBeLessThan(850);
  });

  it('the default (30000 ms) does not cut a slow answer short', async () => {
    const aniLink = new AniLink(undefined, { baseUrl: server.url, retry: false });
    server.enqueue({ delayMs: 300, bodyDelayMs: 200, body: MEDIA });

    await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
  });

  it('0 disables the timeout', async () => {
    const aniLink = new AniLink(undefined, { baseUrl: server.url, retry: false, timeout: 50 });
    server.enqueue({ delayMs: 300, body: MEDIA });

    await expect(aniLink.anilist.query.media({ id: 1 }, { timeout: 0 })).resolves.toEqual({ id: 1 });
  });

  it('a timed-out attempt is retried as a network failure, with a fresh deadline', async () => {
    const aniLink = new AniLink(undefined, {
      baseUrl: server.url,
      timeout: 150,
      retry: { maxRetries: 1, baseDelayMs: 5, jitter: false },
    });
    server.enqueue({ hang: true }, { body: MEDIA });

    await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    expect(server.requests).toHaveLength(2);
  });

  it('each retry gets its own deadline, not what is left of the first one', async () => {
    const aniLink = new AniLink(undefined, {
      baseUrl: server.url,
      timeout: 500,
      retry: { maxRetries: 1, baseDelayMs: 5, jitter: false },
    });
    // Each attempt takes ~300 ms: within its own deadline, but 600 ms in total.
    server.enqueue({ delayMs: 300, status: 503, body: 'down' }, { delayMs: 300, body: MEDIA });

    const { outcome, rejected, elapsedMs } = await timed(aniLink.anilist.query.media({ id: 1 }));

    expect(rejected).toBe(false);
    expect(outcome).toEqual({ id: 1 });
    expect(elapsedMs).toBeGreaterThanOrEqual(550);
  });

  it('a timeout is reported to onError with TIMEOUT_ERROR', async () => {
    const codes: unknown[] = [];
    const aniLink = new AniLink(undefined, {
      baseUrl: server.url,
      retry: false,
      timeout: 100,
      onError: (_error, ctx) => codes.push(ctx.code),
    });
    server.enqueue({ hang: true });

    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toBeInstanceOf(AniLinkNetworkError);
    expect(codes).toEqual(['TIMEOUT_ERROR']);
  });
});
