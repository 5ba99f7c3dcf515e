// Coalescing identical reads (`coalesce: true`, our extension; docs/pacing-and-admission.md,
// "Coalescing identical reads"): identical reads in flight share one request and its answer, writes never do, each
// caller's signal is its own, errors fan out with each caller's requestId, and followers report
// `coalesced: true` with the leader's requestId. The upstream is a server of this file that holds
// every request until the test answers it, so each test waits for all its callers to have joined
// (their onRequestStart) before the answer, and never for a timer.
import diagnosticsChannel from 'node:diagnostics_channel';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  AniLink,
  AniLinkApiError,
  AniLinkNetworkError,
  ResponseCache,
  destroyCachedAgents,
  type RequestContext,
} from 'anilink-api-wrapper';
import { recordingHooks, UUID_V4 } from './support/helpers';

/** A request the holding server received, answered when the test says so. */
interface HeldRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  json: { query?: string; variables?: Record<string, unknown> } | undefined;
  answer(status: number, body: unknown): void;
}

/** Records every request and keeps it waiting for the test's answer. */
class HoldingServer {
  readonly requests: HeldRequest[] = [];
  url = '';
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      this.requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        json: text ? JSON.parse(text) : undefined,
        answer: (status, body) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        },
      });
    });
  });

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves once `count` requests have arrived. */
  async waitForRequests(count: number): Promise<void> {
    await vi.waitFor(() => expect(this.requests.length).toBeGreaterThanOrEqual(count), {
      timeout: 5000,
      interval: 5,
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const MEDIA = { data: { Media: { id: 1, tags: ['a'] } } };

let server: HoldingServer;
beforeAll(async () => {
  server = new HoldingServer();
  await server.start();
});
beforeEach(() => {
  server.requests.length = 0;
});
afterAll(async () => {
  destroyCachedAgents();
  await server.close();
});

/** Resolves once `count` calls have reported onRequestStart (leader and followers alike). */
async function waitForStarts(starts: RequestContext[], count: number): Promise<void> {
  await vi.waitFor(() => expect(starts.length).toBeGreaterThanOrEqual(count), { timeout: 5000, interval: 5 });
}

/** An AniList slot on the holding server that coalesces, recording every onRequestStart. */
function coalescingClient(options: Record<string, unknown> = {}) {
  const starts: RequestContext[] = [];
  const aniLink = new AniLink({
    anilist: {
      baseUrl: server.url,
      retry: false,
      coalesce: true,
      // Quota admission off: a cold scope would hold distinct requests behind the first
      // (decisions D39 a), and these tests hold several in flight.
      rateLimitFloor: 0,
      onRequestStart: (ctx: RequestContext) => starts.push(ctx),
      ...options,
    },
  });
  return { aniLink, starts };
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to reject');
}

describe('identical reads in flight', () => {
  it('share one request; each caller gets its own copy of the answer', async () => {
    const { aniLink, starts } = coalescingClient();
    const calls = Array.from({ length: 5 }, () => aniLink.anilist.query.media({ id: 1 }));
    await server.waitForRequests(1);
    await waitForStarts(starts, 5);
    server.requests[0].answer(200, MEDIA);
    const results = (await Promise.all(calls)) as { id: number; tags: string[] }[];

    expect(server.requests).toHaveLength(1);
    for (const result of results) expect(result).toEqual({ id: 1, tags: ['a'] });
    results[0].tags.push('mutated');
    expect(results[1].tags).toEqual(['a']);
  });

  it('followers report coalesced: true and the leader requestId on onRequestStart and onResponse', async () => {
    const { calls, hooks } = recordingHooks(['onRequestStart', 'onResponse']);
    const aniLink = new AniLink({ anilist: { baseUrl: server.url, retry: false, coalesce: true, ...hooks } });
    const pending = [aniLink.anilist.query.media({ id: 1 }), aniLink.anilist.query.media({ id: 1 })];
    await server.waitForRequests(1);
    await vi.waitFor(() => expect(calls.filter((c) => c.hook === 'onRequestStart')).toHaveLength(2));
    server.requests[0].answer(200, MEDIA);
    await Promise.all(pending);

    const leaderStart = calls.find((c) => c.hook === 'onRequestStart' && !c.ctx.coalesced);
    const leaderId = leaderStart?.ctx.requestId as string;
    expect(leaderId).toMatch(UUID_V4);
    const follower = calls.filter((c) => c.ctx.coalesced === true);
    expect(follower.map((c) => c.hook)).toEqual(['onRequestStart', 'onResponse']);
    for (const call of follower) {
      expect(call.ctx).toMatchObject({ coalesced: true, leaderRequestId: leaderId, attempt: 1 });
      expect(call.ctx.requestId).toMatch(UUID_V4);
      expect(call.ctx.requestId).not.toBe(leaderId);
    }
    expect(follower[1].ctx).toMatchObject({ durationMs: 0 });
    const leaderResponse = calls.find((c) => c.hook === 'onResponse' && c.ctx.requestId === leaderId);
    expect(leaderResponse?.ctx).not.toHaveProperty('coalesced');
    expect(leaderResponse?.ctx).not.toHaveProperty('leaderRequestId');
  });

  it('coalesce: true per request works on a slot without it, and without the option nothing is shared', async () => {
    const starts: RequestContext[] = [];
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, retry: false, onRequestStart: (ctx: RequestContext) => starts.push(ctx) },
    });
    const shared = [1, 2, 3].map(() => aniLink.anilist.query.media({ id: 1 }, { coalesce: true }));
    await server.waitForRequests(1);
    await waitForStarts(starts, 3);
    server.requests[0].answer(200, MEDIA);
    await Promise.all(shared);
    expect(server.requests).toHaveLength(1);

    const separate = [1, 2].map(() => aniLink.anilist.query.media({ id: 1 }));
    await server.waitForRequests(3);
    for (const request of server.requests.slice(1)) request.answer(200, MEDIA);
    await Promise.all(separate);
    expect(server.requests).toHaveLength(3);
  });

  it('different variables, tokens or outcome-shaping options send their own requests', async () => {
    const { aniLink, starts } = coalescingClient({ authToken: 'token-a' });
    const other = coalescingClient({ authToken: 'token-b' });
    const pending = [
      aniLink.anilist.query.media({ id: 1 }),
      aniLink.anilist.query.media({ id: 2 }),
      aniLink.anilist.query.media({ id: 1 }, { allowPartialData: true }),
      aniLink.anilist.query.media({ id: 1 }, { maxResponseBytes: 1 << 20 }),
      other.aniLink.anilist.query.media({ id: 1 }),
    ];
    await server.waitForRequests(5);
    expect(starts.length + other.starts.length).toBe(5);
    for (const request of server.requests) request.answer(200, MEDIA);
    await Promise.all(pending);
    expect(server.requests).toHaveLength(5);
    expect(new Set(server.requests.map((r) => r.headers.authorization))).toEqual(
      new Set(['Bearer token-a', 'Bearer token-b']),
    );
  });

  it('mutations never coalesce, whatever the option says', async () => {
    const { aniLink } = coalescingClient({ authToken: 'token' });
    const mutation = 'mutation { SaveMediaListEntry(mediaId: 1) { id } }';
    const writes = [1, 2].map(() => aniLink.anilist.custom(mutation, {}, { coalesce: true }));
    await server.waitForRequests(2);
    for (const request of server.requests) request.answer(200, { data: { SaveMediaListEntry: { id: 1 } } });
    await Promise.all(writes);
    expect(server.requests).toHaveLength(2);
  });
});

describe('signals', () => {
  it("a follower's abort ends only that follower; the request goes on for the others", async () => {
    const { aniLink, starts } = coalescingClient();
    const controller = new AbortController();
    const leader = aniLink.anilist.query.media({ id: 1 });
    const aborted = aniLink.anilist.query.media({ id: 1 }, { signal: controller.signal });
    const stays = aniLink.anilist.query.media({ id: 1 });
    await server.waitForRequests(1);
    await waitForStarts(starts, 3);
    controller.abort();
    const error = await rejectionOf(aborted);
    expect(error).toBeInstanceOf(AniLinkNetworkError);
    expect(error).toMatchObject({ code: 'ABORTED_ERROR' });

    server.requests[0].answer(200, MEDIA);
    expect(await leader).toEqual({ id: 1, tags: ['a'] });
    expect(await stays).toEqual({ id: 1, tags: ['a'] });
    expect(server.requests).toHaveLength(1);
  });

  it("a leader's abort fails only the leader: a follower sends the request again and the others follow it", async () => {
    const { aniLink, starts } = coalescingClient();
    const controller = new AbortController();
    const leader = aniLink.anilist.query.media({ id: 1 }, { signal: controller.signal });
    await server.waitForRequests(1);
    const followers = [1, 2].map(() => aniLink.anilist.query.media({ id: 1 }));
    await waitForStarts(starts, 3);
    controller.abort();
    expect(await rejectionOf(leader)).toMatchObject({ code: 'ABORTED_ERROR' });

    await server.waitForRequests(2);
    // Both followers joined again: one leads (no `coalesced`), the other follows it.
    await waitForStarts(starts, 5);
    const [, second] = server.requests;
    second.answer(200, MEDIA);
    for (const result of await Promise.all(followers)) expect(result).toEqual({ id: 1, tags: ['a'] });
    expect(server.requests).toHaveLength(2);
    const again = starts.slice(3);
    expect(again.filter((ctx) => ctx.coalesced)).toHaveLength(1);
    expect(again.find((ctx) => ctx.coalesced)?.leaderRequestId).toBe(again.find((ctx) => !ctx.coalesced)?.requestId);
  });
});

describe('diagnostics channels', () => {
  it('a follower whose leader aborted ends that attempt as abandoned, then starts over', async () => {
    const ends: { requestId: string; attempt: number; outcome: string }[] = [];
    const onEnd = (message: unknown) => ends.push(message as (typeof ends)[number]);
    diagnosticsChannel.subscribe('anilink:attempt:end', onEnd);
    try {
      const { aniLink, starts } = coalescingClient();
      const controller = new AbortController();
      const leader = aniLink.anilist.query.media({ id: 1 }, { signal: controller.signal });
      await server.waitForRequests(1);
      const follower = aniLink.anilist.query.media({ id: 1 });
      await waitForStarts(starts, 2);
      controller.abort();
      await rejectionOf(leader);
      await server.waitForRequests(2);
      server.requests[1].answer(200, MEDIA);
      await follower;

      const followerId = starts[1].requestId;
      expect(
        ends.filter((end) => end.requestId === followerId).map(({ attempt, outcome }) => [attempt, outcome]),
      ).toEqual([
        [1, 'abandoned'],
        [1, 'success'],
      ]);
    } finally {
      diagnosticsChannel.unsubscribe('anilink:attempt:end', onEnd);
    }
  });
});

describe('failures', () => {
  it('every follower rejects with the same class, code and status, under its own requestId', async () => {
    const { calls, hooks } = recordingHooks(['onRequestStart', 'onError']);
    const aniLink = new AniLink({ anilist: { baseUrl: server.url, retry: false, coalesce: true, ...hooks } });
    const pending = [1, 2, 3].map(() => rejectionOf(aniLink.anilist.query.media({ id: 1 })));
    await server.waitForRequests(1);
    await vi.waitFor(() => expect(calls.filter((c) => c.hook === 'onRequestStart')).toHaveLength(3));
    server.requests[0].answer(500, { errors: [{ message: 'upstream broke', status: 500 }] });
    const errors = (await Promise.all(pending)) as AniLinkApiError[];

    expect(server.requests).toHaveLength(1);
    const leader = errors[0];
    expect(leader).toBeInstanceOf(AniLinkApiError);
    for (const error of errors) {
      expect(error.constructor).toBe(leader.constructor);
      expect(error).toMatchObject({ code: leader.code, status: 500, message: leader.message });
      expect(error.requestId).toMatch(UUID_V4);
    }
    expect(new Set(errors.map((e) => e.requestId)).size).toBe(3);
    const reported = calls.filter((c) => c.hook === 'onError');
    expect(reported).toHaveLength(3);
    for (const report of reported) expect(report.error?.requestId).toBe(report.ctx.requestId);
    expect(reported.filter((c) => c.ctx.coalesced === true)).toHaveLength(2);
  });

  it("followers share the leader's retries: one attempt sequence for the group", async () => {
    const { aniLink, starts } = coalescingClient({ retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1 } });
    const pending = [1, 2].map(() => aniLink.anilist.query.media({ id: 1 }));
    await server.waitForRequests(1);
    await waitForStarts(starts, 2);
    server.requests[0].answer(503, { errors: [{ message: 'busy', status: 503 }] });
    await server.waitForRequests(2);
    server.requests[1].answer(200, MEDIA);
    for (const result of await Promise.all(pending)) expect(result).toEqual({ id: 1, tags: ['a'] });
    expect(server.requests).toHaveLength(2);
  });
});

describe('with admission', () => {
  it('a group is admitted once: a ceiling of one request a minute serves three identical callers', async () => {
    const { aniLink, starts } = coalescingClient({ rateLimit: { maxRequests: 1, windowMs: 60_000 } });
    const pending = [1, 2, 3].map(() => aniLink.anilist.query.media({ id: 1 }));
    await server.waitForRequests(1);
    await waitForStarts(starts, 3);
    server.requests[0].answer(200, MEDIA);
    for (const result of await Promise.all(pending)) expect(result).toEqual({ id: 1, tags: ['a'] });
    expect(server.requests).toHaveLength(1);
  });
});

describe('with the response cache', () => {
  it('a coalesced miss is one request and one cache write; the next read is a hit', async () => {
    const cache = new ResponseCache();
    const { aniLink, starts } = coalescingClient({ responseCache: cache });
    const pending = [1, 2, 3].map(() => aniLink.anilist.query.media({ id: 1 }));
    await server.waitForRequests(1);
    await waitForStarts(starts, 3);
    server.requests[0].answer(200, MEDIA);
    await Promise.all(pending);
    expect(cache.stats()).toMatchObject({ entries: 1, misses: 1, hits: 0 });

    expect(await aniLink.anilist.query.media({ id: 1 })).toEqual({ id: 1, tags: ['a'] });
    expect(cache.stats()).toMatchObject({ entries: 1, misses: 1, hits: 1 });
    expect(server.requests).toHaveLength(1);
  });
});
