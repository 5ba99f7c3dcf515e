// The timeout starts at the connection, not in the pool's queue (decisions D32); `maxSockets: 0`
// means 1 (D21); an already-aborted signal runs the original's hook sequence and sends nothing,
// or is a pacing abort while its host has a pacing deadline (D22).
import { describe, expect, it } from 'vitest';
import { AniLink, AniLinkNetworkError } from 'anilink-api-wrapper';
import { failureOf, recordingHooks, useTestServer, UUID_V4 } from './support/helpers';
import { graphqlData, rateLimitHeaders, type TestServer } from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

describe('timeout and a saturated pool (D32)', () => {
  it('calls queued behind a one-socket pool are not timed out before they reach the server', async () => {
    server.setDefault({ delayMs: 150, body: graphqlData('Media', { id: 1 }) });
    const client = new AniLink({ anilist: { baseUrl: server.url, retry: false, maxSockets: 1, timeout: 400 } });
    // Six calls in a row on one socket take ~900 ms: each one's own exchange stays under 400 ms.
    const outcomes = await Promise.allSettled(Array.from({ length: 6 }, () => client.anilist.query.media({ id: 1 })));
    expect(outcomes.map((o) => o.status)).toEqual(Array(6).fill('fulfilled'));
    expect(server.requests).toHaveLength(6);
    expect(new Set(server.requests.map((r) => r.connectionId)).size).toBe(1);
  });

  it('a call waiting for a socket still times out once it has one, and is still abortable while it waits', async () => {
    server.setDefault({ hang: true });
    const client = new AniLink({ anilist: { baseUrl: server.url, retry: false, maxSockets: 1, timeout: 300 } });
    const controller = new AbortController();
    const first = failureOf(client.anilist.query.media({ id: 1 }));
    const queued = failureOf(client.anilist.query.media({ id: 2 }, { signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    expect((await queued).code).toBe('ABORTED_ERROR');
    expect((await first).code).toBe('TIMEOUT_ERROR');
    expect(server.requests).toHaveLength(1);
  });
});

describe('maxSockets: 0 (D21)', () => {
  it('is accepted and means one socket', async () => {
    server.setDefault({ delayMs: 50, body: graphqlData('Media', { id: 1 }) });
    const client = new AniLink({ anilist: { baseUrl: server.url, retry: false, maxSockets: 0 } });
    await Promise.all(Array.from({ length: 3 }, () => client.anilist.query.media({ id: 1 })));
    expect(new Set(server.requests.map((r) => r.connectionId)).size).toBe(1);
    await expect(client.anilist.query.media({ id: 1 }, { maxSockets: 0 })).resolves.toEqual({ id: 1 });
  });
});

describe('an already-aborted signal (D22)', () => {
  it('gets a requestId, emits onRequestStart, onResponse and onError, and sends nothing', async () => {
    const { hooks, calls } = recordingHooks();
    const client = new AniLink({ anilist: { baseUrl: server.url, ...hooks } });
    const error = await failureOf(client.anilist.query.media({ id: 1 }, { signal: AbortSignal.abort() }));
    expect(error).toBeInstanceOf(AniLinkNetworkError);
    expect(error.code).toBe('ABORTED_ERROR');
    expect(error.requestId).toMatch(UUID_V4);
    expect(calls.map((c) => c.hook)).toEqual(['onRequestStart', 'onResponse', 'onError']);
    expect(calls.every((c) => c.ctx.requestId === error.requestId)).toBe(true);
    expect(server.requests).toHaveLength(0);
  });

  it('is a plain abort while admission would hold it: a request in flight at a cold start is no pacing deadline', async () => {
    const { hooks, calls } = recordingHooks(['onRequestStart', 'onResponse', 'onError', 'onPace']);
    const client = new AniLink({ anilist: { baseUrl: server.url, ...hooks } });
    server.enqueue({ delayMs: 200, body: graphqlData('Media', { id: 1 }) });
    const first = client.anilist.query.media({ id: 1 });
    await server.waitForRequests(1);
    calls.length = 0;
    const error = (await failureOf(
      client.anilist.query.media({ id: 2 }, { signal: AbortSignal.abort() }),
    )) as AniLinkNetworkError;
    expect(error).toMatchObject({ code: 'ABORTED_ERROR', message: 'The request was cancelled.' });
    expect(error.abortedDuringPacing).toBeFalsy();
    expect(calls.map((c) => c.hook)).toEqual(['onRequestStart', 'onResponse', 'onError']);
    await first;
    expect(server.requests).toHaveLength(1);
  });

  it('is a pacing abort while its host has a pacing deadline', async () => {
    const { hooks, calls } = recordingHooks(['onRequestStart', 'onResponse', 'onError', 'onPace']);
    const client = new AniLink({ anilist: { baseUrl: server.url, ...hooks } });
    server.enqueue({
      headers: rateLimitHeaders(90, 0, (Date.now() + 5000) / 1000),
      body: graphqlData('Media', { id: 1 }),
    });
    await client.anilist.query.media({ id: 1 });
    calls.length = 0;
    const error = (await failureOf(
      client.anilist.query.media({ id: 1 }, { signal: AbortSignal.abort() }),
    )) as AniLinkNetworkError;
    expect(error.code).toBe('ABORTED_ERROR');
    expect(error.abortedDuringPacing).toBe(true);
    const pace = calls.find((c) => c.hook === 'onPace');
    expect(pace?.ctx).toMatchObject({ delayMs: 0, aborted: true });
    expect(calls.some((c) => c.hook === 'onRequestStart')).toBe(false);
    expect(server.requests).toHaveLength(1);
  });
});
