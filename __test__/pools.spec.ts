/**
 * Keep-alive connection pools end to end (issue 6; transport.md 1.11, decisions D10, D13),
 * judged by the TCP connections the test server saw: reuse, the `maxSockets` cap, the
 * `maxFreeSockets` idle limit, LRU eviction with parking, `destroyCachedAgents()` and the
 * stale keep-alive connection.
 *
 * Pools are process-wide, so every test starts from a clean slate: all pools released and
 * every connection of earlier tests closed.
 */
import net, { type AddressInfo, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeEach, describe, expect, it } from 'vitest';
import { AniLink, destroyCachedAgents, type RequestOptions } from 'anilink-api-wrapper';
import { aniListClient, useTestServer } from './support/helpers';
import {
  graphqlData,
  startTestServer,
  type RecordedRequest,
  type ScriptedResponse,
  type TestServer,
} from './support/test-server';

const SLOW = (delayMs: number, id = 1): ScriptedResponse => ({ delayMs, body: graphqlData('Media', { id }) });

let server: TestServer;
useTestServer((started) => {
  server = started;
});

beforeEach(async () => {
  destroyCachedAgents();
  // After a reset `connections` lists only the ones still open: wait for all of them to close.
  await server.waitForClosedConnections(server.connections.length);
  server.reset();
});

/** `query.media` of a fresh AniList-only client on `target` (retries off), as `(requestOptions?, id = 1) => call`. */
function mediaCallerFor(target: TestServer, options: RequestOptions = {}) {
  // Quota admission off: the server reports no quota, and a cold scope would hold concurrent
  // calls behind the first (decisions D39 a); these tests are about the pool.
  const aniLink = aniListClient(target, { rateLimitFloor: 0, ...options });
  return (requestOptions?: RequestOptions, id = 1) => aniLink.anilist.query.media({ id }, requestOptions);
}

/** The `id` variable of a recorded Media query. */
function requestedId(request: RecordedRequest): unknown {
  return (request.json as { variables?: { id?: unknown } } | undefined)?.variables?.id;
}

/** Distinct connections that carried the recorded requests. */
function connectionsUsed(): Set<number> {
  return new Set(server.requests.map((request) => request.connectionId));
}

function isOpen(connectionId: number): boolean {
  const record = server.connections.find((connection) => connection.id === connectionId);
  return record !== undefined && record.closedAt === undefined;
}

/** Poll until `condition` holds; fail with `description` after `timeoutMs`. */
async function waitFor(condition: () => boolean, description: string, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}`);
    await sleep(10);
  }
}

/**
 * A raw HTTP/1.1 server that answers the first request on each connection and closes the
 * connection unanswered when a second one arrives on it, with a FIN (`end`) or a reset: from
 * the client's side, what a server closing an idle keep-alive connection looks like when a
 * reused connection loses the race. (The scriptable test server cannot close without a reset,
 * nor close before it answers.)
 */
async function startClosingServer(
  closeWith: 'end' | 'reset',
): Promise<{ url: string; requestsPerConnection: number[]; close(): Promise<void> }> {
  const requestsPerConnection: number[] = [];
  const sockets = new Set<Socket>();
  const body = JSON.stringify(graphqlData('Media', { id: 1 }));
  const answer =
    'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const tcp = net.createServer((socket) => {
    const index = requestsPerConnection.push(0) - 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const headEnd = pending.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        const head = pending.subarray(0, headEnd).toString('latin1');
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (pending.length < headEnd + 4 + length) return;
        pending = pending.subarray(headEnd + 4 + length);
        requestsPerConnection[index] += 1;
        if (requestsPerConnection[index] === 1) socket.write(answer);
        else if (closeWith === 'end') socket.end();
        else socket.resetAndDestroy();
      }
    });
  });
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  const { port } = tcp.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requestsPerConnection,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        tcp.close(() => resolve());
      }),
  };
}

describe('connection reuse and bounds', () => {
  it('reuses one keep-alive connection for sequential calls', async () => {
    const media = mediaCallerFor(server);
    for (let i = 0; i < 10; i++) await expect(media()).resolves.toEqual({ id: 1 });
    expect(server.requests).toHaveLength(10);
    expect(server.connections).toHaveLength(1);
    expect(connectionsUsed().size).toBe(1);
  });

  it('reuses one connection for sequential calls on a dedicated pool too', async () => {
    const media = mediaCallerFor(server, { maxSockets: 3, maxFreeSockets: 1 });
    for (let i = 0; i < 5; i++) await media();
    expect(server.connections).toHaveLength(1);
  });

  it('never opens more than maxSockets connections at once for 50 concurrent calls', async () => {
    const media = mediaCallerFor(server, { maxSockets: 4 });
    server.setDefault(SLOW(30));
    const results = await Promise.all(Array.from({ length: 50 }, () => media()));
    expect(results).toHaveLength(50);
    expect(server.requests).toHaveLength(50);
    expect(server.maxOpenConnections).toBe(4);
    expect(server.connections).toHaveLength(4);
    expect(connectionsUsed().size).toBe(4);
  });

  it('closes idle connections beyond maxFreeSockets and keeps the rest for reuse', async () => {
    const media = mediaCallerFor(server, { maxSockets: 8, maxFreeSockets: 2 });
    server.setDefault(SLOW(150));
    await Promise.all(Array.from({ length: 8 }, () => media()));
    expect(server.maxOpenConnections).toBe(8);

    await server.waitForClosedConnections(6);
    await sleep(100);
    expect(server.openConnections()).toBe(2);
    const kept = server.connections.filter((connection) => connection.closedAt === undefined).map((c) => c.id);

    server.reset();
    server.setDefault(SLOW(50));
    await Promise.all([media(), media()]);
    const ascending = (ids: number[]) => [...ids].sort((a, b) => a - b);
    expect(ascending(server.connections.map((connection) => connection.id))).toEqual(ascending(kept));
    expect(ascending([...connectionsUsed()])).toEqual(ascending(kept));
  });

  it('caps the default pool at 20 connections per host and keeps 5 of them idle', async () => {
    const media = mediaCallerFor(server);
    server.setDefault(SLOW(150));
    await Promise.all(Array.from({ length: 30 }, () => media()));
    expect(server.maxOpenConnections).toBe(20);
    await server.waitForClosedConnections(15);
    await sleep(100);
    expect(server.openConnections()).toBe(5);
  });

  it('hands a freed connection to a call waiting for a socket instead of closing it and opening another', async () => {
    // maxFreeSockets limits connections left idle; one with a call waiting for it is not idle
    // (as with Node's agents, which the pools stand in for: D13). Closing it and dialling again
    // churns connections and, for a moment, leaves more than maxSockets open.
    const media = mediaCallerFor(server, { maxSockets: 2, maxFreeSockets: 0 });
    server.setDefault(SLOW(100));
    await Promise.all(Array.from({ length: 6 }, () => media()));
    expect(server.requests).toHaveLength(6);
    expect(connectionsUsed().size).toBe(2);
    expect(server.maxOpenConnections).toBeLessThanOrEqual(2);
  });

  it('keeps no idle connection with maxFreeSockets: 0', async () => {
    const media = mediaCallerFor(server, { maxFreeSockets: 0 });
    for (let i = 0; i < 3; i++) await media();
    expect(connectionsUsed().size).toBe(3);
    await server.waitForClosedConnections(3);
    expect(server.openConnections()).toBe(0);
  });
});

describe('the pool cache', () => {
  it('shares one pool between calls with identical bounds, even from different clients', async () => {
    const first = mediaCallerFor(server);
    const second = mediaCallerFor(server);
    await first({ maxSockets: 2, maxFreeSockets: 1 });
    await second({ maxSockets: 2, maxFreeSockets: 1 });
    expect(server.connections).toHaveLength(1);
    // Different bounds: a different pool, so a different connection.
    await first({ maxSockets: 3, maxFreeSockets: 1 });
    expect(server.connections).toHaveLength(2);
    // Bounds equal to the defaults still select a dedicated pool, not the default one.
    await first();
    await first({ maxSockets: 20 });
    expect(server.connections).toHaveLength(4);
  });

  it('evicts the least recently used of nine configurations without breaking its in-flight calls', async () => {
    const media = mediaCallerFor(server);
    // Two calls on the pool for maxSockets 1: the first is slow, the second waits for its socket.
    server.handle((request) => (requestedId(request) === 101 ? SLOW(600, 101) : undefined));
    server.setDefault((request) => SLOW(0, Number(requestedId(request))));
    const inFlight = [media({ maxSockets: 1 }, 101), media({ maxSockets: 1 }, 102)];
    await server.waitForRequests(1);
    const evictedConnection = server.requests[0].connectionId;

    // Eight more configurations: the ninth distinct one pushes maxSockets 1 out of the cache.
    for (let maxSockets = 2; maxSockets <= 9; maxSockets++) {
      await expect(media({ maxSockets })).resolves.toEqual({ id: 1 });
    }
    expect(server.connections).toHaveLength(9);

    await expect(Promise.all(inFlight)).resolves.toEqual([{ id: 101 }, { id: 102 }]);
    const onEvictedPool = server.requests.filter((request) => [101, 102].includes(Number(requestedId(request))));
    expect(onEvictedPool.map((request) => request.connectionId)).toEqual([evictedConnection, evictedConnection]);

    // The parked pool lets go of its connection once nothing is in flight (D13);
    // the eight cached pools keep theirs.
    await waitFor(() => !isOpen(evictedConnection), 'the parked pool to close its idle connection');
    await sleep(100);
    expect(server.openConnections()).toBe(8);

    // The evicted configuration gets a fresh pool; a cached one still reuses its connection.
    const before = server.connections.length;
    await media({ maxSockets: 9 });
    expect(server.connections).toHaveLength(before);
    await media({ maxSockets: 1 });
    expect(server.connections).toHaveLength(before + 1);
  });
});

describe('destroyCachedAgents()', () => {
  it('closes the idle connections of the default and dedicated pools, is harmless twice, and the next call works', async () => {
    const media = mediaCallerFor(server);
    server.setDefault(SLOW(100));
    await Promise.all([media(), media(), media(), media({ maxSockets: 3 }), media({ maxSockets: 3 })]);
    expect(server.openConnections()).toBe(5);
    const oldConnections = new Set(server.connections.map((connection) => connection.id));

    destroyCachedAgents();
    await server.waitForClosedConnections(5, 2_000);
    expect(server.openConnections()).toBe(0);
    expect(() => destroyCachedAgents()).not.toThrow();

    server.reset();
    await expect(media()).resolves.toEqual({ id: 1 });
    await expect(media({ maxSockets: 3 })).resolves.toEqual({ id: 1 });
    expect(server.requests).toHaveLength(2);
    for (const connectionId of connectionsUsed()) expect(oldConnections.has(connectionId)).toBe(false);
  });

  it('lets a call still waiting for a socket complete when the pools are torn down', async () => {
    const media = mediaCallerFor(server, { maxSockets: 1 });
    server.handle((request) => (requestedId(request) === 1 ? SLOW(300, 1) : undefined));
    server.setDefault((request) => SLOW(0, Number(requestedId(request))));
    const first = media(undefined, 1);
    const queued = media(undefined, 2);
    await server.waitForRequests(1);
    destroyCachedAgents();
    await expect(Promise.all([first, queued])).resolves.toEqual([{ id: 1 }, { id: 2 }]);
    // The cap still held: the queued call went out only once the slow one had its answer.
    const [slow, next] = server.requests;
    expect(next.receivedAt - slow.receivedAt).toBeGreaterThanOrEqual(250);
  });

  it('is safe to call before any pool exists', () => {
    expect(() => {
      destroyCachedAgents();
      destroyCachedAgents();
    }).not.toThrow();
  });

  it.each([
    { name: 'the default pool', options: {} },
    { name: 'a dedicated pool', options: { maxSockets: 2, maxFreeSockets: 2 } },
  ])('lets a call in flight on $name complete, then closes its connection', async ({ options }) => {
    const media = mediaCallerFor(server, options);
    server.enqueue(SLOW(300, 42));
    const inFlight = media();
    await server.waitForRequests(1);
    destroyCachedAgents();
    await expect(inFlight).resolves.toEqual({ id: 42 });
    // Its pool was released, so the connection is not kept once the call is done.
    await server.waitForClosedConnections(1, 2_000);
    // And the next call works on a fresh pool.
    await expect(media()).resolves.toEqual({ id: 1 });
    expect(connectionsUsed().size).toBe(2);
  });
});

describe('stale keep-alive connections', () => {
  it('never fails a call when the server closes idle connections after 1 s and calls come about a second apart', async () => {
    const closing = await startTestServer({ keepAliveTimeoutMs: 1_000 });
    try {
      const starts: Array<{ attempt: number }> = [];
      const media = mediaCallerFor(closing, { onRequestStart: (ctx) => starts.push(ctx) });
      // Around the server's idle limit, where a reused connection may be closing as the request goes out.
      const gapsMs = [985, 995, 998, 1_000, 1_001, 1_002, 999, 1_000, 1_005, 1_015];
      await media();
      for (const gapMs of gapsMs) {
        // Node 20 arms its own keep-alive timer 1 s later than keepAliveTimeout; re-arm the
        // idle connection's timer so the server really closes it after exactly 1 s of idleness.
        closing.setKeepAliveTimeout(1_000);
        await sleep(gapMs);
        await expect(media()).resolves.toEqual({ id: 1 });
      }
      // The server really did close idle connections under the client.
      expect(closing.connections.length).toBeGreaterThan(1);
      // A resend on a fresh connection is not an attempt: one start per call, all first attempts.
      expect(starts).toHaveLength(gapsMs.length + 1);
      expect(starts.every((ctx) => ctx.attempt === 1)).toBe(true);
    } finally {
      await closing.close();
    }
  });

  it.each([
    { closeWith: 'end' as const, how: 'closes the reused connection cleanly (FIN)' },
    // Closing a socket whose receive buffer still holds the request makes the kernel send a
    // reset: that is how the race with a Node server's keep-alive timeout usually looks.
    { closeWith: 'reset' as const, how: 'resets the reused connection (RST) with the request unanswered' },
  ])('resends a query once on a fresh connection, uncharged, when the server $how', async ({ closeWith }) => {
    const closer = await startClosingServer(closeWith);
    try {
      const reports: string[] = [];
      const aniLink = aniListClient(closer, {
        onRequestStart: (ctx) => reports.push(`start ${ctx.attempt}`),
        onRetry: () => reports.push('retry'),
        onError: () => reports.push('error'),
      });
      await aniLink.anilist.query.media({ id: 1 });
      reports.length = 0;
      await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
      expect(reports).toEqual(['start 1']);
      // Two requests on the first connection (the second one unanswered), the resend on a new one.
      expect(closer.requestsPerConnection).toEqual([2, 1]);
    } finally {
      await closer.close();
    }
  });

  it('never resends a mutation, even when the server closed the reused connection cleanly', async () => {
    const closer = await startClosingServer('end');
    try {
      const aniLink = aniListClient(closer);
      await aniLink.anilist.query.media({ id: 1 });
      const mutation = aniLink.anilist.custom('mutation { ToggleFavourite(animeId: 1) { anime { nodes { id } } } }');
      await expect(mutation).rejects.toMatchObject({ code: 'NETWORK_ERROR' });
      expect(closer.requestsPerConnection).toEqual([2]);
    } finally {
      await closer.close();
    }
  });

  it('does not resend a request whose connection was fresh', async () => {
    const media = mediaCallerFor(server);
    server.enqueue({ drop: 'before-response' });
    await expect(media()).rejects.toMatchObject({ code: 'NETWORK_ERROR' });
    expect(server.requests).toHaveLength(1);
  });
});

describe('invalid socket bounds', () => {
  const invalid: Array<{ option: 'maxSockets' | 'maxFreeSockets'; value: unknown }> = [
    { option: 'maxSockets', value: -1 },
    { option: 'maxSockets', value: 1.5 },
    { option: 'maxSockets', value: Number.NaN },
    { option: 'maxSockets', value: Number.POSITIVE_INFINITY },
    { option: 'maxSockets', value: '4' },
    { option: 'maxFreeSockets', value: -1 },
    { option: 'maxFreeSockets', value: 0.5 },
    { option: 'maxFreeSockets', value: Number.NaN },
  ];

  it.each(invalid)(
    'rejects a per-request $option of $value with a TypeError before any I/O or hook',
    async ({ option, value }) => {
      const started: unknown[] = [];
      const media = mediaCallerFor(server, { onRequestStart: (ctx) => started.push(ctx) });
      const failure = media({ [option]: value } as RequestOptions);
      await expect(failure).rejects.toThrow(TypeError);
      await expect(failure).rejects.toThrow(option);
      expect(server.requests).toHaveLength(0);
      expect(started).toEqual([]);
    },
  );

  it.each(invalid)('throws a TypeError at construction for a slot $option of $value', ({ option, value }) => {
    expect(() => new AniLink({ anilist: { baseUrl: server.url, [option]: value } })).toThrow(TypeError);
    expect(() => new AniLink(undefined, { baseUrl: server.url, [option]: value })).toThrow(option);
  });
});
