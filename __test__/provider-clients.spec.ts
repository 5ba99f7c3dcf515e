// The lower-level entry points of api.md §1, §6 and §11, end to end against the test server:
// `buildProviderClients` (the clients an AniLink is made of, with their state owners and
// response caches), `buildMyAnimeListApi` (a MAL client alone) and `snapshotTransportState`
// (the state behind an owner).
import { describe, expect, it } from 'vitest';
import {
  AniLinkNetworkError,
  ResponseCache,
  buildMyAnimeListApi,
  buildProviderClients,
  snapshotTransportState,
} from 'anilink-api-wrapper';
import * as malEntry from 'anilink-api-wrapper/mal';
import { onlyRequest, rejectionOf, useTestServer } from './support/helpers';
import { graphqlData, type TestServer } from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

const BREAKER = { threshold: 1, cooldownMs: 60_000 };

/** Every object in the value is frozen. */
function expectDeepFrozen(value: unknown): void {
  if (value === null || typeof value !== 'object') return;
  expect(Object.isFrozen(value)).toBe(true);
  for (const inner of Object.values(value)) expectDeepFrozen(inner);
}

describe('buildProviderClients', () => {
  it('builds working AniList and MAL clients from a credentials object', async () => {
    const clients = buildProviderClients({
      anilist: { baseUrl: server.url, authToken: 'anilist-token', retry: false },
      mal: { baseUrl: server.url, clientId: 'cid', retry: false },
    });
    expect(Object.keys(clients).sort()).toEqual(['anilist', 'mal', 'stateOwners']);

    server.enqueue({ body: graphqlData('Media', { id: 1, title: { romaji: 'Cowboy Bebop' } }) });
    await expect(clients.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1, title: { romaji: 'Cowboy Bebop' } });
    expect(onlyRequest(server).headers.authorization).toBe('Bearer anilist-token');

    server.reset();
    server.enqueue({ body: { id: 21, title: 'One Piece' } });
    await expect(clients.mal.anime.get({ id: 21 })).resolves.toEqual({ id: 21, title: 'One Piece' });
    const request = onlyRequest(server);
    expect(request.path).toBe('/anime/21');
    expect(request.headers['x-mal-client-id']).toBe('cid');
  });

  it('applies legacyOptions to AniList only, and only when the slot has no transport option', async () => {
    const elsewhere = 'http://127.0.0.1:9'; // nothing listens there: a request to it would fail
    const legacy = buildProviderClients({ anilist: { authToken: 't' } }, { baseUrl: server.url, retry: false });
    server.enqueue({ body: graphqlData('Media', { id: 1 }) });
    await expect(legacy.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    expect(onlyRequest(server).headers.authorization).toBe('Bearer t');

    server.reset();
    const own = buildProviderClients({ anilist: { baseUrl: server.url, retry: false } }, { baseUrl: elsewhere });
    server.enqueue({ body: graphqlData('Media', { id: 2 }) });
    await expect(own.anilist.query.media({ id: 2 })).resolves.toEqual({ id: 2 });
    expect(server.requests).toHaveLength(1);
  });

  it("hands out one state owner per client: snapshotTransportState reads that client's state", async () => {
    const clients = buildProviderClients({
      anilist: { baseUrl: server.url, retry: false, circuitBreaker: BREAKER },
      mal: { baseUrl: server.url, clientId: 'cid', retry: false },
    });
    expect(snapshotTransportState(clients.stateOwners.anilist).circuit).toEqual([]);

    server.enqueue({ status: 503, body: { errors: [{ message: 'down', status: 503 }] } });
    await rejectionOf(clients.anilist.query.media({ id: 1 }));

    const anilist = snapshotTransportState(clients.stateOwners.anilist);
    expect(anilist.circuit).toEqual([
      {
        host: server.host,
        consecutiveFailures: 1,
        openedAt: expect.any(Number),
        probeInFlight: false,
        failedProbes: 0,
      },
    ]);
    expectDeepFrozen(anilist);
    expect(snapshotTransportState(clients.stateOwners.mal).circuit).toEqual([]);
    // The breaker the snapshot shows is the one the client obeys.
    const fastFail = await rejectionOf<AniLinkNetworkError>(clients.anilist.query.media({ id: 1 }));
    expect(fastFail.code).toBe('CIRCUIT_OPEN_ERROR');
    expect(server.requests).toHaveLength(1);
  });

  it('lists the response caches the slots were given, and snapshotTransportState reports their counters', async () => {
    expect(buildProviderClients({}).responseCaches).toBeUndefined();
    const cache = new ResponseCache();
    const clients = buildProviderClients({ anilist: { baseUrl: server.url, retry: false, responseCache: cache } });
    expect(clients.responseCaches).toEqual({ anilist: cache });

    server.enqueue({ body: graphqlData('Media', { id: 1 }) });
    await clients.anilist.query.media({ id: 1 });
    await clients.anilist.query.media({ id: 1 });
    expect(server.requests).toHaveLength(1);

    const stats = { entries: 1, hits: 1, misses: 1, expirations: 0, evictions: 0 };
    expect(snapshotTransportState(clients.stateOwners.anilist).responseCache).toEqual(stats);
    // A cache passed explicitly reports its own counters, whatever the owner.
    expect(snapshotTransportState(clients.stateOwners.mal, cache).responseCache).toEqual(stats);
  });

  it('refuses what the constructor refuses, with a TypeError', () => {
    expect(() => buildProviderClients('token' as never)).toThrow(TypeError);
    expect(() => buildProviderClients({ anilist: { authToken: 't', timout: 5 } as never })).toThrow(/timout/);
    expect(() => buildProviderClients({ anilist: { timeout: -1 } })).toThrow(TypeError);
    expect(() => buildProviderClients({}, 'options' as never)).toThrow(/legacyOptions must be an object/);
  });
});

describe('buildMyAnimeListApi', () => {
  it('is the same function from the root and /mal, and builds a working MAL client', async () => {
    expect(malEntry.buildMyAnimeListApi).toBe(buildMyAnimeListApi);
    const mal = buildMyAnimeListApi({ baseUrl: server.url, accessToken: 'mal-token', retry: false });
    expect(Object.keys(mal)).toEqual(
      expect.arrayContaining(['anime', 'manga', 'user', 'forum', 'paginate', 'paginatePages']),
    );

    server.enqueue({ body: { id: 1, name: 'me' } });
    await expect(mal.user.me()).resolves.toEqual({ id: 1, name: 'me' });
    expect(onlyRequest(server).headers.authorization).toBe('Bearer mal-token');
  });

  it('binds a given state owner to the client', async () => {
    const owner = {};
    const mal = buildMyAnimeListApi(
      { baseUrl: server.url, clientId: 'cid', retry: false, circuitBreaker: BREAKER },
      owner,
    );
    server.enqueue({ status: 503, body: 'down' });
    await rejectionOf(mal.anime.get({ id: 1 }));

    expect(snapshotTransportState(owner).circuit).toEqual([
      expect.objectContaining({ host: server.host, consecutiveFailures: 1, openedAt: expect.any(Number) }),
    ]);
  });

  it('refuses an owner that already names a client, and anything but an object', () => {
    const { stateOwners } = buildProviderClients({});
    expect(() => buildMyAnimeListApi({}, stateOwners.mal)).toThrow(
      /already names the state of another provider client/,
    );
    expect(() => buildMyAnimeListApi({}, 'owner' as never)).toThrow(/stateOwner must be an object/);
    expect(() => buildMyAnimeListApi({ accesstoken: 'm' } as never)).toThrow(/accesstoken/);
  });
});

describe('snapshotTransportState', () => {
  it('gives an owner that names no client an empty, frozen state', () => {
    const before = Date.now();
    const snapshot = snapshotTransportState({});
    expect(snapshot).toEqual({
      capturedAt: expect.any(Number),
      sharedState: 'off',
      admission: [],
      circuit: [],
      paceDeadlines: [],
      retryBudgets: [],
    });
    expect(snapshot.capturedAt).toBeGreaterThanOrEqual(before);
    expectDeepFrozen(snapshot);
  });

  it('refuses an owner that is not an object, and a cache that is not a ResponseCache', () => {
    expect(() => snapshotTransportState('anilist' as never)).toThrow(TypeError);
    expect(() => snapshotTransportState(null as never)).toThrow(/owner must be an object/);
    expect(() => snapshotTransportState({}, { stats: () => ({}) } as never)).toThrow(
      /responseCache must be a ResponseCache/,
    );
  });
});
