/**
 * A bounded soak of the connection pools (issue 6): a few thousand calls spread over more
 * socket configurations than the pool cache holds, so pools are created, evicted, parked and
 * released all the time. Connections must stay bounded, teardown must close every one of them,
 * and, after a warm-up half, the memory the client holds must stay flat between two more halves.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { destroyCachedAgents, type AniLink, type RequestOptions } from 'anilink-api-wrapper';
import { aniListClient, useTestServer } from './support/helpers';
import { type TestServer } from './support/test-server';

const CALLS_PER_HALF = 1_500;
const CONCURRENCY = 50;
/** The default pool plus 16 dedicated configurations: twice what the pool cache holds (8). */
const SOCKET_CONFIGURATIONS: Array<RequestOptions | undefined> = [
  undefined,
  ...Array.from({ length: 16 }, (_, i) => ({ maxSockets: 1 + i, maxFreeSockets: i % 3 })),
];
/** Idle connections the pools may keep once quiet: 8 cached pools with at most 2 each, plus the default pool's 5. */
const MAX_IDLE_CONNECTIONS = 8 * 2 + 5;
/**
 * Growth allowed between the halves, after a full garbage collection, of the memory outside the
 * JavaScript heap: the resident set minus the pages V8's heap holds, i.e. what the addon (Rust
 * allocations, sockets' buffers, tasks) and Node's native side retain. Measured within 1 MB on
 * Node 20 and 22 and 8–13 MB on Node 24 (whose V8 keeps more freed pages of its own); holding
 * 32 KB per call fails it on all three. Leaking a connection per call would exceed it; leaks of
 * a few hundred bytes per call need a longer run than this one.
 *
 * The whole resident set is not compared: V8 keeps the young generation's pages resident
 * after a collection and grows them over the run, and Node 24's default young generation is
 * large enough (up to 128 MB) for that alone to add tens of MB between the halves.
 */
const MAX_NATIVE_GROWTH_BYTES = 24 * 1024 * 1024;
/**
 * Growth allowed of the live JavaScript heap after a full collection (measured within 0.4 MB
 * on Node 20, 22 and 24): retaining a promise, listener or result per call would exceed it.
 */
const MAX_LIVE_HEAP_GROWTH_BYTES = 4 * 1024 * 1024;

// A full collection before each measurement, so the comparison sees retained memory rather
// than garbage the collector has not reached yet.
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

interface SettledMemory {
  /** Resident bytes outside V8's heap. */
  native: number;
  /** Bytes of live JavaScript objects. */
  liveHeap: number;
}

/** What the process retains, measured after a full garbage collection. */
function settledMemory(): SettledMemory {
  collectGarbage();
  const heap = v8.getHeapStatistics();
  return { native: process.memoryUsage().rss - heap.total_physical_size, liveHeap: heap.used_heap_size };
}

let server: TestServer;
useTestServer((started) => {
  server = started;
});

/** Run `total` calls, at most `CONCURRENCY` at once, cycling through the socket configurations. */
async function runCalls(aniLink: AniLink, total: number): Promise<number> {
  let next = 0;
  let failures = 0;
  const worker = async () => {
    while (next < total) {
      const index = next++;
      try {
        await aniLink.anilist.query.media({ id: 1 }, SOCKET_CONFIGURATIONS[index % SOCKET_CONFIGURATIONS.length]);
      } catch {
        failures += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return failures;
}

/**
 * One half of the run: every call succeeds, the server sees exactly those calls, and it never
 * has more connections open than calls in flight plus what the pools may keep idle.
 * Returns the settled memory afterwards.
 */
async function runHalf(aniLink: AniLink): Promise<SettledMemory> {
  expect(await runCalls(aniLink, CALLS_PER_HALF)).toBe(0);
  expect(server.requests).toHaveLength(CALLS_PER_HALF);
  expect(server.maxOpenConnections).toBeLessThanOrEqual(CONCURRENCY + MAX_IDLE_CONNECTIONS);
  // Drop the server's own records so only the client's memory is compared.
  server.reset();
  return settledMemory();
}

describe('pool soak', () => {
  it('keeps connections and memory flat over thousands of calls across many socket configurations', async () => {
    const aniLink = aniListClient(server);
    // The first half only warms up: JIT, the pools' caches and the allocators reach their
    // working size, so the measured halves compare steady states.
    await runHalf(aniLink);
    const afterFirstHalf = await runHalf(aniLink);
    const afterSecondHalf = await runHalf(aniLink);
    expect(afterSecondHalf.native - afterFirstHalf.native).toBeLessThan(MAX_NATIVE_GROWTH_BYTES);
    expect(afterSecondHalf.liveHeap - afterFirstHalf.liveHeap).toBeLessThan(MAX_LIVE_HEAP_GROWTH_BYTES);

    // Quiet again: only what the cached and default pools may keep idle stays open. (After a
    // reset, `connections` lists just the connections that were still open.)
    await server.waitForClosedConnections(Math.max(0, server.connections.length - MAX_IDLE_CONNECTIONS));
    expect(server.openConnections()).toBeLessThanOrEqual(MAX_IDLE_CONNECTIONS);

    destroyCachedAgents();
    await server.waitForClosedConnections(server.connections.length);
    expect(server.openConnections()).toBe(0);
  });
});
