// A fleet-wide response cache (issue 36, `new ResponseCache({ shared: true })` on slots with
// `sharedState`) against a real redis-server: identical reads across clients and processes
// cost one upstream request per TTL, a mutation in one invalidates for all, entries expire and
// are capped per scope, no secret reaches Redis, and a Redis outage falls back to each
// process's own cache (one diagnostic, no failed call) until Redis is back.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AniLink, destroyCachedAgents, ResponseCache } from 'anilink-api-wrapper';
import { type DiagnosticRecord, startFleet, readThenReadAgainElsewhere } from '../support/fleet';
import { type RedisServer, keysUnder, startRedisServer } from '../support/redis-server';
import { graphqlData, type RecordedRequest, startTestServer, type TestServer } from '../support/test-server';

const TOKEN = 'fleet-cache-secret-token-7f3a';
/** Generous on 2 loaded cores: a slow answer here must not look like an outage. */
const REDIS_TIMEOUT_MS = 1_000;
/** The link's rejoin interval (shared_state::link::REJOIN_INTERVAL_MS), plus slack. */
const REJOIN_WAIT_MS = 600;

let redis: RedisServer;
let upstream: TestServer;
beforeAll(async () => {
  redis = await startRedisServer();
  upstream = await startTestServer();
});
afterAll(async () => {
  destroyCachedAgents();
  await upstream?.close();
  await redis?.stop();
});

function isMediaQuery(request: RecordedRequest, id: number): boolean {
  const body = request.json as { query?: string; variables?: { id?: number } } | undefined;
  return !!body?.query?.includes('Media(') && body.variables?.id === id;
}

/** Media queries for `id` the upstream answered since the test began. */
function upstreamReads(id: number): number {
  return upstream.requests.filter((request) => isMediaQuery(request, id)).length;
}

function answerQueriesAndMutations(): void {
  upstream.reset();
  upstream.handle((request) => {
    const body = request.json as { query: string; variables?: { id?: number } };
    if (body.query.includes('SaveMediaListEntry')) return { body: graphqlData('SaveMediaListEntry', { id: 1 }) };
    return { body: graphqlData('Media', { id: body.variables?.id }) };
  });
}

interface FleetClient {
  aniLink: AniLink;
  cache: ResponseCache;
  diagnostics: DiagnosticRecord[];
}

/** One client of the fleet: its own `ResponseCache` (shared), the fleet's Redis under `keyPrefix`. */
function fleetClient(keyPrefix: string, cacheOptions: Record<string, unknown> = {}): FleetClient {
  const cache = new ResponseCache({ ttlMs: 60_000, shared: true, ...cacheOptions });
  const diagnostics: DiagnosticRecord[] = [];
  const aniLink = new AniLink({
    anilist: {
      baseUrl: upstream.url,
      authToken: TOKEN,
      retry: false,
      responseCache: cache,
      sharedState: { redis: redis.url, keyPrefix, timeoutMs: REDIS_TIMEOUT_MS },
      diagnostics: 'hook',
      onHookError: (_name, error) => diagnostics.push((error as { diagnostic: DiagnosticRecord }).diagnostic),
    },
  });
  return { aniLink, cache, diagnostics };
}

async function media(client: FleetClient, id: number): Promise<unknown> {
  const answer = (await client.aniLink.anilist.query.media({ id })) as { id: number };
  expect(answer.id).toBe(id);
  return answer;
}

const cacheKeys = async (prefix: string) => (await keysUnder(redis, prefix)).filter((key) => key.includes(':cache}'));

describe('a fleet-wide ResponseCache (shared: true) on sharedState', () => {
  it('identical reads across clients cost one upstream request; stats and the transport state say so', async () => {
    answerQueriesAndMutations();
    const [a, b] = [fleetClient('fc-share'), fleetClient('fc-share')];
    await media(a, 1);
    await media(b, 1);
    await media(a, 1);
    await media(b, 1);
    expect(upstreamReads(1)).toBe(1);
    expect(a.cache.stats()).toEqual({
      entries: 0,
      hits: 0,
      misses: 0,
      expirations: 0,
      evictions: 0,
      shared: true,
      fleetHits: 1,
      fleetMisses: 1,
    });
    const state = b.aniLink.getTransportState().anilist;
    expect(state.sharedState).toBe('redis');
    expect(state.responseCache).toMatchObject({ shared: true, fleetHits: 2, fleetMisses: 0, entries: 0 });
    const scope = `fc-share:{anilist:${upstream.host}:cache}`;
    expect(await cacheKeys('fc-share')).toEqual([`${scope}:index`, `${scope}:meta`, `${scope}:values`]);
    for (const key of await cacheKeys('fc-share')) {
      expect(Number(await redis.command('PTTL', key))).toBeGreaterThan(0);
    }
  });

  it('a cache without shared: true, or a slot without sharedState, stays local', async () => {
    answerQueriesAndMutations();
    const localCache = fleetClient('fc-local', { shared: false });
    const noSharedState = new AniLink({
      anilist: { baseUrl: upstream.url, retry: false, responseCache: new ResponseCache({ shared: true }) },
    });
    for (const aniLink of [localCache.aniLink, noSharedState]) {
      await aniLink.anilist.query.media({ id: 2 });
      await aniLink.anilist.query.media({ id: 2 });
    }
    expect(upstreamReads(2)).toBe(2);
    expect(localCache.aniLink.getTransportState().anilist.responseCache).toEqual({
      entries: 1,
      hits: 1,
      misses: 1,
      expirations: 0,
      evictions: 0,
    });
    expect(noSharedState.getTransportState().anilist.responseCache).toMatchObject({
      entries: 1,
      hits: 1,
      shared: true,
      fleetHits: 0,
    });
    expect(await cacheKeys('fc-local')).toEqual([]);
  });

  it('a mutation through one client invalidates the entry for the other', async () => {
    answerQueriesAndMutations();
    const [a, b] = [fleetClient('fc-mutation'), fleetClient('fc-mutation')];
    await media(a, 3);
    await media(b, 3);
    expect(upstreamReads(3)).toBe(1);
    await b.aniLink.anilist.mutation.saveMediaListEntry({ mediaId: 3, status: 'CURRENT' });
    await media(a, 3);
    expect(upstreamReads(3)).toBe(2);
    await media(b, 3);
    expect(upstreamReads(3), 'stored again by the read after the mutation').toBe(2);
  });

  it('entries expire after ttlMs, for every process at once (the Redis clock)', async () => {
    answerQueriesAndMutations();
    const [a, b] = [fleetClient('fc-ttl', { ttlMs: 300 }), fleetClient('fc-ttl', { ttlMs: 300 })];
    await media(a, 4);
    await media(b, 4);
    expect(upstreamReads(4)).toBe(1);
    await sleep(350);
    await media(b, 4);
    expect(upstreamReads(4)).toBe(2);
  });

  it('at most maxEntries per scope: the oldest is evicted fleet-wide', async () => {
    answerQueriesAndMutations();
    const [a, b] = [fleetClient('fc-cap', { maxEntries: 2 }), fleetClient('fc-cap', { maxEntries: 2 })];
    for (const id of [11, 12, 13]) await media(a, id);
    const [index] = (await cacheKeys('fc-cap')).filter((key) => key.endsWith(':index'));
    expect(await redis.command('ZCARD', index)).toBe(2);
    await media(b, 13);
    expect(upstreamReads(13)).toBe(1);
    await media(b, 11);
    expect(upstreamReads(11), 'evicted: sent again').toBe(2);
  });

  it('no secret in any Redis key or value', async () => {
    answerQueriesAndMutations();
    const client = fleetClient('fc-secret');
    await media(client, 21);
    await media(client, 21);
    const dump: string[] = [];
    for (const key of await keysUnder(redis, 'fc-secret')) {
      dump.push(key);
      const type = await redis.command('TYPE', key);
      if (type === 'hash') dump.push(...((await redis.command('HGETALL', key)) as string[]));
      else if (type === 'zset') dump.push(...((await redis.command('ZRANGE', key, '0', '-1')) as string[]));
    }
    expect(dump.some((text) => text.includes(':cache}:values'))).toBe(true);
    expect(dump.join('\n')).not.toContain(TOKEN);
    expect(dump.join('\n')).not.toContain('Bearer');
  });

  it('Redis killed mid-run: no call fails, each client falls back to its own cache with one diagnostic, then shares again', async () => {
    answerQueriesAndMutations();
    const [a, b] = [fleetClient('fc-outage'), fleetClient('fc-outage')];
    await media(a, 31);
    await media(b, 31);
    expect(upstreamReads(31)).toBe(1);
    await redis.kill();
    try {
      for (const client of [a, b]) {
        await media(client, 32);
        await media(client, 32);
      }
      expect(upstreamReads(32), 'each process alone, its own cache serving').toBe(2);
      for (const client of [a, b]) {
        expect(client.diagnostics.map((record) => record.code)).toEqual(['SHARED_STATE_UNAVAILABLE']);
        expect(client.aniLink.getTransportState().anilist.sharedState).toBe('local-fallback');
        expect(client.cache.stats()).toMatchObject({ entries: 1, hits: 1 });
      }
    } finally {
      await redis.restart();
    }
    await sleep(REJOIN_WAIT_MS);
    await media(a, 33);
    await media(b, 33);
    expect(upstreamReads(33), 'shared again').toBe(1);
    for (const client of [a, b]) {
      expect(client.diagnostics.map((record) => record.code)).toEqual([
        'SHARED_STATE_UNAVAILABLE',
        'SHARED_STATE_REJOINED',
      ]);
      expect(client.cache.stats().entries, 'the local copy is dropped on the rejoin').toBe(0);
    }
  }, 30_000);

  it('two worker processes: the second reads what the first stored, one upstream request per id', async () => {
    answerQueriesAndMutations();
    const fleet = await startFleet({
      size: 2,
      slot: {
        baseUrl: upstream.url,
        retry: false,
        sharedState: { redis: redis.url, keyPrefix: 'fc-processes', timeoutMs: REDIS_TIMEOUT_MS },
        responseCache: { ttlMs: 60_000, shared: true },
      },
    });
    try {
      const ids = [41, 42, 43, 44];
      await readThenReadAgainElsewhere(fleet, ids, 2);
      for (const id of ids) expect(upstreamReads(id)).toBe(1);
      const states = (await fleet.states()) as { responseCache: { fleetHits: number } }[];
      expect(states.map((state) => state.responseCache.fleetHits)).toEqual([0, ids.length]);
    } finally {
      await fleet.close();
    }
  }, 60_000);
});
