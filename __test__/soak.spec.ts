/**
 * A bounded soak of the connection pools (issue 6): a few thousand calls spread over more
 * socket configurations than the pool cache holds, so pools are created, evicted, parked and
 * released all the time. Connections must stay bounded, teardown must close every one of them,
 * and, after a warm-up half, the memory the client holds must stay flat between two more halves.
 */
import { createRequire } from 'node:module';
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
 * Growth allowed between the halves, after a full garbage collection, of the bytes the C
 * allocator has in use (the addon's Rust allocations, sockets' buffers and tasks, and Node's
 * and V8's own): measured at 35–110 KB on Node 20, 22 and 24 with two busy loops beside it.
 * Holding 2 KB per call (a Buffer kept per call: 3.4 MB over a half) fails it; so would
 * leaking a connection per call.
 *
 * The resident set is not compared: glibc keeps freed arena pages resident (10–28 MB of them
 * between two halves on Node 24 under load, with the bytes in use flat), and V8 keeps its young
 * generation's pages resident and grows them over the run.
 */
const MAX_NATIVE_GROWTH_BYTES = 2 * 1024 * 1024;
/**
 * Where the C library cannot say what it has in use (not glibc), the resident set outside V8's
 * heap is compared instead, with room for the free pages it includes.
 */
const MAX_RESIDENT_GROWTH_BYTES = 32 * 1024 * 1024;
/**
 * Growth allowed of the live JavaScript heap after a full collection (measured within 0.4 MB
 * on Node 20, 22 and 24): retaining a promise, listener or result per call would exceed it.
 */
const MAX_LIVE_HEAP_GROWTH_BYTES = 4 * 1024 * 1024;

// A full collection before each measurement, so the comparison sees retained memory rather
// than garbage the collector has not reached yet.
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

const require = createRequire(import.meta.url);
const { nativeHeapInUse } = require('../lib/native.cjs').addon() as { nativeHeapInUse: () => number | null };
const HEAP_IN_USE_KNOWN = nativeHeapInUse() !== null;

interface SettledMemory {
  /** Bytes the C allocator has in use, or else resident bytes outside V8's heap. */
  native: number;
  /** Bytes of live JavaScript objects. */
  liveHeap: number;
}

/**
 * What the process retains, measured after a full garbage collection. The bytes in use are the
 * least of a few samples 20 ms apart: a single sample moved by up to 4.5 MB either way (work
 * on Node's and V8's own threads, most likely), the least of four by under 0.12 MB.
 */
async function settledMemory(): Promise<SettledMemory> {
  let native = Number.POSITIVE_INFINITY;
  let liveHeap = 0;
  for (let sample = 0; sample < 4; sample += 1) {
    if (sample > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    collectGarbage();
    const heap = v8.getHeapStatistics();
    const inUse = nativeHeapInUse() ?? process.memoryUsage().rss - heap.total_physical_size;
    native = Math.min(native, inUse);
    liveHeap = heap.used_heap_size;
  }
  return { native, liveHeap };
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
  return await settledMemory();
}

describe('pool soak', () => {
  it('keeps connections and memory flat over thousands of calls across many socket configurations', async () => {
    const aniLink = aniListClient(server);
    // The first half only warms up: JIT, the pools' caches and the allocators reach their
    // working size, so the measured halves compare steady states.
    await runHalf(aniLink);
    const afterFirstHalf = await runHalf(aniLink);
    const afterSecondHalf = await runHalf(aniLink);
    expect(afterSecondHalf.native - afterFirstHalf.native).toBeLessThan(
      HEAP_IN_USE_KNOWN ? MAX_NATIVE_GROWTH_BYTES : MAX_RESIDENT_GROWTH_BYTES,
    );
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
