// The response cache (transport.md 1.2 steps 6 and 8, 1.10, 1.12, 1.14; api.md §6, §7): the
// `ResponseCache` class on its own, then through the transport against the test server: hits
// that never reach the network, hook payloads, TTL, LRU, bypass, auth scoping, invalidation
// by mutations and REST writes, what is never cached, and the stats in transport snapshots.
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { AniLink, AniLinkAuthError, ResponseCache } from 'anilink-api-wrapper';
import { failureOf, recordingHooks, useTestServer, UUID_V4 } from './support/helpers';
import { graphqlData, type RecordedRequest, type TestServer } from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

const MEDIA_QUERY = '{ Media(id: 1) { id } }';
const CHARACTER_QUERY = '{ Character(id: 1) { id } }';

/** The GraphQL document a recorded AniList request carried. */
function documentOf(request: RecordedRequest): string {
  return (request.json as { query: string }).query;
}

/** Answer each GraphQL request with its own root field, so tests can tell requests apart. */
function answerByRootField(): void {
  server.handle((request) => {
    const document = documentOf(request);
    for (const root of ['SaveMediaListEntry', 'DeleteActivity', 'Character', 'Viewer']) {
      if (document.includes(`${root}`)) return { body: graphqlData(root, { id: 7 }) };
    }
    return undefined;
  });
}

function aniListWithCache(cache: ResponseCache, options: Record<string, unknown> = {}): AniLink {
  return new AniLink({ anilist: { baseUrl: server.url, retry: false, responseCache: cache, ...options } });
}

function malWithCache(cache: ResponseCache, options: Record<string, unknown> = {}): AniLink {
  return new AniLink({ mal: { baseUrl: server.url, retry: false, responseCache: cache, ...options } });
}

describe('the ResponseCache class', () => {
  it('is exported by the ESM and CommonJS entries as one class', () => {
    const required = createRequire(import.meta.url)('anilink-api-wrapper') as { ResponseCache: unknown };
    expect(required.ResponseCache).toBe(ResponseCache);
    expect(new ResponseCache()).toBeInstanceOf(ResponseCache);
  });

  it.each([
    [{ ttlMs: -1 }, 'ttlMs must be a finite, non-negative number'],
    [{ ttlMs: Number.NaN }, 'ttlMs must be a finite, non-negative number'],
    [{ ttlMs: Number.POSITIVE_INFINITY }, 'ttlMs must be a finite, non-negative number'],
    [{ ttlMs: '5' }, 'ttlMs must be a finite, non-negative number'],
    [{ maxEntries: 0 }, 'maxEntries must be a finite, positive integer'],
    [{ maxEntries: 1.5 }, 'maxEntries must be a finite, positive integer'],
    [{ maxEntries: Number.POSITIVE_INFINITY }, 'maxEntries must be a finite, positive integer'],
    [{ cloneOnRead: 'yes' }, 'cloneOnRead must be a boolean'],
    [{ ttl: 5 }, 'Unknown key "ttl"'],
  ])('rejects %o with a TypeError', (options, message) => {
    expect(() => new ResponseCache(options as never)).toThrow(TypeError);
    expect(() => new ResponseCache(options as never)).toThrow(message);
  });

  it('accepts the documented options and their defaults', () => {
    expect(() => new ResponseCache({ ttlMs: 0, maxEntries: 1, cloneOnRead: false })).not.toThrow();
    expect(() => new ResponseCache({})).not.toThrow();
    expect(() => new ResponseCache(undefined)).not.toThrow();
  });

  it('keys ignore query-parameter order and body key order, and every read is a fresh copy', () => {
    const cache = new ResponseCache();
    const value = { media: { id: 1, tags: ['a'] } };
    cache.set(
      'POST',
      'https://h/p?b=2&a=1',
      { query: '{ Media { id } }', variables: { x: 1, y: 2 } },
      undefined,
      value,
    );

    const first = cache.get<typeof value>('POST', 'https://h/p?a=1&b=2', {
      variables: { y: 2, x: 1 },
      query: '{ Media { id } }',
    });
    expect(first).toEqual(value);
    expect(first).not.toBe(value);
    first!.media.tags.push('mutated');
    expect(cache.get('POST', 'https://h/p?a=1&b=2', { variables: { y: 2, x: 1 }, query: '{ Media { id } }' })).toEqual(
      value,
    );
    expect(
      cache.get('POST', 'https://h/p?a=1&b=2', { query: '{ Media { id } }', variables: { x: 2, y: 2 } }),
    ).toBeUndefined();
    expect(
      cache.get(
        'POST',
        'https://h/p?a=1&b=2',
        { query: '{ Media { id } }', variables: { x: 1, y: 2 } },
        'bearer:other',
      ),
    ).toBeUndefined();
  });

  it('stores nothing with ttlMs 0, and skips values JSON cannot encode', () => {
    const never = new ResponseCache({ ttlMs: 0 });
    never.set('GET', 'https://h/a', undefined, undefined, { a: 1 });
    expect(never.get('GET', 'https://h/a')).toBeUndefined();
    expect(never.stats().entries).toBe(0);

    const cache = new ResponseCache();
    cache.set('GET', 'https://h/big', undefined, undefined, { n: 1n });
    expect(cache.stats().entries).toBe(0);
  });

  it('an uncloneable payload is skipped and the entry already there is kept', () => {
    const cache = new ResponseCache();
    cache.set('GET', 'https://h/a', undefined, undefined, { title: 'kept' });
    for (const uncloneable of [{ title: 'lost', format: () => 'x' }, { tag: Symbol('s') }, () => 1, { n: 1n }]) {
      cache.set('GET', 'https://h/a', undefined, undefined, uncloneable);
      expect(cache.setIfFresh('GET', 'https://h/a', undefined, undefined, cache.getGeneration(), uncloneable)).toBe(
        false,
      );
      expect(cache.get('GET', 'https://h/a')).toEqual({ title: 'kept' });
    }
    expect(cache.stats().entries).toBe(1);
  });

  it('stores only what the transport could store: GETs and GraphQL POSTs whose document is a query', () => {
    const cache = new ResponseCache();
    const url = 'https://graphql.anilist.co';
    const stored: Array<[string, object | string | undefined]> = [
      ['GET', undefined],
      ['get', undefined],
      ['POST', { query: '{ Media(id: 1) { id } }' }],
      ['POST', { query: 'query ($id: Int) { Media(id: $id) { id } }', variables: { id: 1 } }],
      ['POST', JSON.stringify({ query: '# a comment\nquery { Viewer { id } }' })],
    ];
    const refused: Array<[string, object | string | undefined]> = [
      ['POST', { query: 'mutation { SaveMediaListEntry(mediaId: 1) { id } }' }],
      ['POST', { query: 'mutation Save { DeleteActivity(id: 1) { deleted } }' }],
      ['POST', { variables: { id: 1 } }],
      ['POST', 'not a GraphQL body'],
      ['POST', undefined],
      ['PATCH', undefined],
      ['DELETE', undefined],
    ];
    for (const [method, data] of [...stored, ...refused]) {
      cache.set(method, url, data, undefined, { method });
      const storedNow = cache.get(method, url, data) !== undefined;
      expect(storedNow, `${method} ${JSON.stringify(data)}`).toBe(stored.some(([m, d]) => m === method && d === data));
      expect(cache.setIfFresh(method, url, data, undefined, cache.getGeneration(), { method })).toBe(storedNow);
    }
  });

  it('expires entries after ttlMs and counts the expired read as an expiration', async () => {
    const cache = new ResponseCache({ ttlMs: 60 });
    cache.set('GET', 'https://h/a', undefined, undefined, 1);
    expect(cache.get('GET', 'https://h/a')).toBe(1);
    await sleep(90);
    expect(cache.get('GET', 'https://h/a')).toBeUndefined();
    expect(cache.stats()).toEqual({ entries: 0, hits: 1, misses: 0, expirations: 1, evictions: 0 });
  });

  it('evicts the least recently used entry; reads refresh recency', () => {
    const cache = new ResponseCache({ maxEntries: 2 });
    cache.set('GET', 'https://h/a', undefined, undefined, 'a');
    cache.set('GET', 'https://h/b', undefined, undefined, 'b');
    expect(cache.get('GET', 'https://h/a')).toBe('a');
    cache.set('GET', 'https://h/c', undefined, undefined, 'c');
    expect(cache.get('GET', 'https://h/b')).toBeUndefined();
    expect(cache.get('GET', 'https://h/a')).toBe('a');
    expect(cache.get('GET', 'https://h/c')).toBe('c');
    expect(cache.stats()).toMatchObject({ entries: 2, evictions: 1, misses: 1, hits: 3 });
  });

  it('deletes report what they removed; deleteMatching respects path boundaries', () => {
    const cache = new ResponseCache();
    for (const url of [
      'https://h/anime/21',
      'https://h/anime/21/pictures',
      'https://h/anime/212',
      'https://h/anime/21?fields=id',
    ]) {
      cache.set('GET', url, undefined, undefined, url);
    }
    expect(cache.delete('GET', 'https://h/anime/21/pictures')).toBe(true);
    expect(cache.delete('GET', 'https://h/anime/21/pictures')).toBe(false);
    expect(cache.deleteMatching('https://h/anime/21')).toBe(2);
    expect(cache.get('GET', 'https://h/anime/212')).toBe('https://h/anime/212');
    cache.set('GET', 'https://h/anime/212?fields=a', undefined, undefined, 1);
    expect(cache.deleteAllForUrl('https://h/anime/212')).toBe(2);
    cache.set('GET', 'https://h/x', undefined, undefined, 1);
    cache.clear();
    expect(cache.stats().entries).toBe(0);
  });

  it('stats are frozen lifetime counters', () => {
    const cache = new ResponseCache();
    cache.get('GET', 'https://h/a');
    cache.set('GET', 'https://h/a', undefined, undefined, 1);
    cache.get('GET', 'https://h/a');
    cache.clear();
    const stats = cache.stats();
    expect(Object.isFrozen(stats)).toBe(true);
    expect(stats).toEqual({ entries: 0, hits: 1, misses: 1, expirations: 0, evictions: 0 });
  });

  it('setIfFresh drops a write-back that an overlapping invalidation affects', () => {
    const cache = new ResponseCache();
    const before = cache.getGeneration();
    expect(cache.deleteMatching('https://h/anime/1')).toBe(0);
    expect(cache.getGeneration()).toBeGreaterThan(before);
    expect(cache.setIfFresh('GET', 'https://h/anime/1?fields=id', undefined, undefined, before, 'stale')).toBe(false);
    expect(cache.setIfFresh('GET', 'https://h/anime/2', undefined, undefined, before, 'unaffected')).toBe(true);
    expect(cache.setIfFresh('GET', 'https://h/anime/1', undefined, undefined, cache.getGeneration(), 'fresh')).toBe(
      true,
    );
    expect(cache.get('GET', 'https://h/anime/1')).toBe('fresh');
  });
});

describe('through the transport', () => {
  it('a hit skips the network and resolves a fresh copy', async () => {
    const cache = new ResponseCache();
    const aniLink = aniListWithCache(cache);

    const first = (await aniLink.anilist.query.media({ id: 1 })) as { id: number; extra?: number };
    first.extra = 99;
    const second = await aniLink.anilist.query.media({ id: 1 });

    expect(server.requests).toHaveLength(1);
    expect(second).toEqual({ id: 1 });
    expect(cache.stats()).toEqual({ entries: 1, hits: 1, misses: 1, expirations: 0, evictions: 0 });
  });

  it('a miss reports cacheHit false and cacheWrite true; a hit reports onRequestStart then onResponse with durationMs 0', async () => {
    const { calls, hooks } = recordingHooks(['onRequestStart', 'onResponse', 'onPace', 'onError']);
    const aniLink = aniListWithCache(new ResponseCache(), hooks);

    await aniLink.anilist.query.media({ id: 1 });
    await aniLink.anilist.query.media({ id: 1 });

    expect(calls.map((c) => c.hook)).toEqual(['onRequestStart', 'onResponse', 'onRequestStart', 'onResponse']);
    const [missStart, miss, hitStart, hit] = calls;
    expect(miss.ctx).toMatchObject({ cacheHit: false, cacheWrite: true, attempt: 1 });
    expect(hitStart.ctx).toEqual({
      requestId: expect.stringMatching(UUID_V4),
      url: server.url,
      method: 'POST',
      attempt: 1,
    });
    expect(hit.ctx).toEqual({ ...hitStart.ctx, durationMs: 0, cacheHit: true });
    expect(hit.ctx.requestId).not.toBe(missStart.ctx.requestId);
  });

  it('a hit with only onResponse configured reports only onResponse', async () => {
    const { calls, hooks } = recordingHooks(['onResponse']);
    const aniLink = aniListWithCache(new ResponseCache(), hooks);
    await aniLink.anilist.query.media({ id: 1 });
    await aniLink.anilist.query.media({ id: 1 });
    expect(calls.map((c) => `${c.hook}:${String(c.ctx.cacheHit)}`)).toEqual(['onResponse:false', 'onResponse:true']);
  });

  it('requests without a cache report neither cacheHit nor cacheWrite', async () => {
    const { calls, hooks } = recordingHooks(['onResponse']);
    const aniLink = new AniLink({ anilist: { baseUrl: server.url, ...hooks } });
    await aniLink.anilist.query.media({ id: 1 });
    expect(calls[0].ctx).not.toHaveProperty('cacheHit');
    expect(calls[0].ctx).not.toHaveProperty('cacheWrite');
  });

  it('an entry expires after ttlMs and the next call goes to the network', async () => {
    const cache = new ResponseCache({ ttlMs: 80 });
    const aniLink = aniListWithCache(cache);
    await aniLink.anilist.query.media({ id: 1 });
    await aniLink.anilist.query.media({ id: 1 });
    expect(server.requests).toHaveLength(1);
    await sleep(120);
    await aniLink.anilist.query.media({ id: 1 });
    expect(server.requests).toHaveLength(2);
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1, expirations: 1 });
  });

  it('maxEntries evicts the least recently used response', async () => {
    const cache = new ResponseCache({ maxEntries: 1 });
    const aniLink = aniListWithCache(cache);
    await aniLink.anilist.query.media({ id: 1 });
    await aniLink.anilist.query.media({ id: 2 });
    await aniLink.anilist.query.media({ id: 1 });
    expect(server.requests).toHaveLength(3);
    expect(cache.stats()).toMatchObject({ entries: 1, evictions: 2 });
  });

  it('bypassResponseCache skips both the lookup and the write-back', async () => {
    const cache = new ResponseCache();
    const { calls, hooks } = recordingHooks(['onResponse']);
    const aniLink = aniListWithCache(cache, hooks);

    await aniLink.anilist.query.media({ id: 1 }, { bypassResponseCache: true });
    expect(cache.stats()).toEqual({ entries: 0, hits: 0, misses: 0, expirations: 0, evictions: 0 });
    expect(calls[0].ctx).not.toHaveProperty('cacheHit');

    await aniLink.anilist.query.media({ id: 1 });
    await aniLink.anilist.query.media({ id: 1 }, { bypassResponseCache: true });
    expect(server.requests).toHaveLength(3);
    await aniLink.anilist.query.media({ id: 1 });
    expect(server.requests).toHaveLength(3);
  });

  it('a per-request cache works without a slot cache, and null turns a slot cache off', async () => {
    const cache = new ResponseCache();
    const plain = new AniLink({ anilist: { baseUrl: server.url } });
    await plain.anilist.query.media({ id: 1 }, { responseCache: cache });
    await plain.anilist.query.media({ id: 1 }, { responseCache: cache });
    expect(server.requests).toHaveLength(1);

    const cached = aniListWithCache(cache);
    await cached.anilist.query.media({ id: 1 }, { responseCache: null });
    expect(server.requests).toHaveLength(2);
  });

  it('rejects a responseCache that is not a ResponseCache', async () => {
    const aniLink = new AniLink({ anilist: { baseUrl: server.url } });
    await expect(aniLink.anilist.query.media({ id: 1 }, { responseCache: {} as never })).rejects.toThrow(TypeError);
    const posing = Object.create(ResponseCache.prototype) as ResponseCache;
    await expect(aniLink.anilist.query.media({ id: 1 }, { responseCache: posing })).rejects.toThrow(
      'responseCache must be a ResponseCache instance',
    );
    expect(() => new AniLink({ anilist: { baseUrl: server.url, responseCache: { get() {} } as never } })).toThrow(
      TypeError,
    );
    expect(server.requests).toHaveLength(0);
  });

  it('two tokens never share an entry; the stored key matches what ResponseCache computes', async () => {
    const cache = new ResponseCache();
    const alice = aniListWithCache(cache, { authToken: 'token-alice' });
    const bob = aniListWithCache(cache, { authToken: 'token-bob' });
    const anonymous = aniListWithCache(cache);

    for (const client of [alice, bob, anonymous, alice, bob, anonymous]) {
      await client.anilist.custom(MEDIA_QUERY);
    }

    expect(server.requests).toHaveLength(3);
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer token-alice',
      'Bearer token-bob',
      undefined,
    ]);
    expect(cache.stats()).toMatchObject({ entries: 3, hits: 3 });
    expect(cache.get('POST', server.url, { query: MEDIA_QUERY, variables: {} })).toEqual({ id: 1 });
    expect(cache.get('POST', server.url, { query: MEDIA_QUERY, variables: {} }, 'bearer:token-alice')).toBeUndefined();
  });

  it('MAL requests authenticated by X-MAL-CLIENT-ID are not cached (fail closed)', async () => {
    const cache = new ResponseCache();
    const { calls, hooks } = recordingHooks(['onResponse']);
    const aniLink = malWithCache(cache, { clientId: 'cid', ...hooks });
    server.setDefault({ body: { id: 1, title: 'x' } });

    await aniLink.mal.anime.get({ id: 1 });
    await aniLink.mal.anime.get({ id: 1 });

    expect(server.requests).toHaveLength(2);
    expect(cache.stats()).toEqual({ entries: 0, hits: 0, misses: 0, expirations: 0, evictions: 0 });
    expect(calls[1].ctx).not.toHaveProperty('cacheHit');
  });

  it('a request whose auth guard fails does not touch the cache', async () => {
    const cache = new ResponseCache();
    const aniLink = malWithCache(cache, { clientId: 'cid' });
    const error = await failureOf(aniLink.mal.user.me());
    expect(error).toBeInstanceOf(AniLinkAuthError);
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 0 });
    expect(server.requests).toHaveLength(0);
  });

  it('a MAL PATCH drops the cached GETs of its anime, and only those', async () => {
    const cache = new ResponseCache();
    const aniLink = malWithCache(cache, { accessToken: 'mal-token' });
    server.setDefault((request) => ({ body: { id: Number(request.path.split('/')[2]), status: 'watching' } }));

    await aniLink.mal.anime.get({ id: 21 });
    await aniLink.mal.anime.get({ id: 212 });
    await aniLink.mal.anime.updateMyListStatus({ id: 21, status: 'watching' });
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /anime/21',
      'GET /anime/212',
      'PATCH /anime/21/my_list_status',
    ]);

    await aniLink.mal.anime.get({ id: 21 });
    await aniLink.mal.anime.get({ id: 212 });
    expect(server.requests.map((r) => `${r.method} ${r.path}`).slice(3)).toEqual(['GET /anime/21']);
  });

  it('a failed REST write invalidates nothing', async () => {
    const cache = new ResponseCache();
    const aniLink = malWithCache(cache, { accessToken: 'mal-token' });
    server.setDefault({ body: { id: 21 } });
    await aniLink.mal.anime.get({ id: 21 });
    server.enqueue({ status: 400, body: { error: 'bad_request' } });
    await failureOf(aniLink.mal.anime.updateMyListStatus({ id: 21, status: 'watching' }));
    await aniLink.mal.anime.get({ id: 21 });
    expect(server.requests).toHaveLength(2);
  });

  it('a mapped mutation drops the queries its root field can affect and keeps the others', async () => {
    const cache = new ResponseCache();
    const aniLink = aniListWithCache(cache, { authToken: 'token' });
    answerByRootField();

    await aniLink.anilist.custom(MEDIA_QUERY);
    await aniLink.anilist.custom(CHARACTER_QUERY);
    await aniLink.anilist.mutation.saveMediaListEntry({ mediaId: 1, status: 'CURRENT' });
    await aniLink.anilist.custom(MEDIA_QUERY);
    await aniLink.anilist.custom(CHARACTER_QUERY);

    const roots = server.requests.map((r) => documentOf(r).match(/(Media|Character|SaveMediaListEntry)\b/)?.[1]);
    expect(roots).toEqual(['Media', 'Character', 'SaveMediaListEntry', 'Media']);
  });

  it('an unmapped mutation drops every cached query at the endpoint', async () => {
    const cache = new ResponseCache();
    const aniLink = aniListWithCache(cache, { authToken: 'token' });
    answerByRootField();

    await aniLink.anilist.custom(MEDIA_QUERY);
    await aniLink.anilist.custom(CHARACTER_QUERY);
    await aniLink.anilist.custom('mutation { DeleteActivity(id: 1) { deleted } }');
    await aniLink.anilist.custom(MEDIA_QUERY);
    await aniLink.anilist.custom(CHARACTER_QUERY);

    expect(server.requests).toHaveLength(5);
  });

  it('a failed mutation invalidates nothing', async () => {
    const cache = new ResponseCache();
    const aniLink = aniListWithCache(cache, { authToken: 'token' });
    await aniLink.anilist.custom(MEDIA_QUERY);
    server.enqueue({ status: 500, body: 'down' });
    await failureOf(aniLink.anilist.custom('mutation { DeleteActivity(id: 1) { deleted } }'));
    await aniLink.anilist.custom(MEDIA_QUERY);
    expect(server.requests).toHaveLength(2);
  });

  it('a read that overlaps an invalidation is not written back', async () => {
    const cache = new ResponseCache();
    const { calls, hooks } = recordingHooks(['onResponse']);
    // Quota admission off: a cold scope would hold the mutation behind the slow read (D39 a).
    const aniLink = aniListWithCache(cache, { authToken: 'token', rateLimitFloor: 0, ...hooks });
    server.handle((request) =>
      documentOf(request).includes('Media')
        ? { delayMs: 300, body: graphqlData('Media', { id: 1 }) }
        : { body: graphqlData('DeleteActivity', { deleted: true }) },
    );

    const slowRead = aniLink.anilist.custom(MEDIA_QUERY);
    await server.waitForRequests(1);
    await aniLink.anilist.custom('mutation { DeleteActivity(id: 1) { deleted } }');
    await slowRead;

    const readResponse = calls.find((c) => c.ctx.cacheHit === false);
    expect(readResponse?.ctx).not.toHaveProperty('cacheWrite');
    expect(cache.stats().entries).toBe(0);
    await aniLink.anilist.custom(MEDIA_QUERY);
    expect(server.requests).toHaveLength(3);
  });

  it('partial data is never cached', async () => {
    const cache = new ResponseCache();
    const { calls, hooks } = recordingHooks(['onResponse']);
    const aniLink = aniListWithCache(cache, { allowPartialData: true, ...hooks });
    server.setDefault({
      body: { data: { Media: { id: 1 }, Character: null }, errors: [{ message: 'Character not found' }] },
    });

    const query = '{ Media(id: 1) { id } Character(id: 9) { id } }';
    await aniLink.anilist.custom(query);
    await aniLink.anilist.custom(query);

    expect(server.requests).toHaveLength(2);
    expect(cache.stats().entries).toBe(0);
    expect(calls[0].ctx.cacheHit).toBe(false);
    expect(calls[0].ctx).not.toHaveProperty('cacheWrite');
  });

  it('failures are never cached; an envelope error still reports cacheHit false', async () => {
    const cache = new ResponseCache();
    const { calls, hooks } = recordingHooks(['onResponse']);
    const aniLink = aniListWithCache(cache, hooks);
    server.enqueue({ status: 503, body: 'unavailable' }, { body: { data: null, errors: [{ message: 'bad query' }] } });

    await failureOf(aniLink.anilist.query.media({ id: 1 }));
    await failureOf(aniLink.anilist.query.media({ id: 1 }));
    await aniLink.anilist.query.media({ id: 1 });
    await aniLink.anilist.query.media({ id: 1 });

    expect(server.requests).toHaveLength(3);
    expect(calls[0].ctx).not.toHaveProperty('cacheHit');
    expect(calls[1].ctx.cacheHit).toBe(false);
    expect(calls[1].ctx).not.toHaveProperty('cacheWrite');
    expect(calls.slice(2).map((c) => c.ctx.cacheHit)).toEqual([false, true]);
  });

  it('a hit bypasses an open circuit breaker', async () => {
    const cache = new ResponseCache();
    const aniLink = aniListWithCache(cache, { circuitBreaker: { threshold: 1, cooldownMs: 60_000 } });
    await aniLink.anilist.query.media({ id: 1 });
    server.enqueue({ status: 503, body: 'down' });
    await failureOf(aniLink.anilist.query.media({ id: 2 }));
    expect(aniLink.getTransportState().anilist.circuit[0].openedAt).not.toBeNull();

    await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    expect(server.requests).toHaveLength(2);
  });

  it('getTransportState reports the stats of a slot cache, and only for slots that have one', async () => {
    const cache = new ResponseCache();
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, responseCache: cache },
      mal: { baseUrl: server.url, clientId: 'cid' },
    });
    await aniLink.anilist.query.media({ id: 1 });
    await aniLink.anilist.query.media({ id: 1 });

    const state = aniLink.getTransportState();
    expect(state.anilist.responseCache).toEqual({ entries: 1, hits: 1, misses: 1, expirations: 0, evictions: 0 });
    expect(Object.isFrozen(state.anilist.responseCache)).toBe(true);
    expect(state.mal).not.toHaveProperty('responseCache');
    expect(cache.stats()).toEqual(state.anilist.responseCache);
  });
});
