// The AniLink constructor (api.md §2, decisions D14): every call form, the provider slots and
// their auth headers, base URLs and their environment overrides, the TypeErrors for bad
// credentials, and getTransportState(). Each behaviour is checked on what the test server
// actually received.
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { AniLink, AniLinkAuthError, AniLinkApiError } from 'anilink-api-wrapper';
import { useTestServer } from './support/helpers';
import { graphqlData, rateLimitHeaders, type TestServer } from './support/test-server';

/** The 23 transport option keys, in the order api.md §3 lists them. */
const TRANSPORT_KEYS =
  'timeout, signal, exposeRawAxiosError, retry, paceWithRateLimit, rateLimitFloor, circuitBreaker, retryBudget, ' +
  'maxSockets, maxFreeSockets, onError, onRetry, onRequestStart, onResponse, onPace, onHookError, diagnostics, ' +
  'onCircuitOpen, onCircuitClose, ignorePaceDeadline, allowPartialData, responseCache, bypassResponseCache, maxResponseBytes, proxy, rateLimit, coalesce, maxRedirects, sharedState, degradedLimit';

const ENV_KEYS = ['ANILINK_ANILIST_URL', 'ANILINK_MAL_URL'] as const;

/** Bypass the typings, to hand the constructor what a JavaScript caller could. */
const Untyped = AniLink as unknown as new (...args: unknown[]) => AniLink;

let server: TestServer;
useTestServer((started) => {
  server = started;
});

const savedEnv: Partial<Record<(typeof ENV_KEYS)[number], string>> = {};

beforeAll(() => {
  for (const key of ENV_KEYS) savedEnv[key] = process.env[key];
});

beforeEach(() => {
  for (const key of ENV_KEYS) delete process.env[key];
});

afterEach(() => {
  vi.restoreAllMocks();
  for (const key of ENV_KEYS) {
    if (savedEnv[key] === undefined) delete process.env[key];
    else process.env[key] = savedEnv[key];
  }
});

/** Point both providers' default endpoints at the test server, as a deployment would. */
function routeDefaultsToServer(): void {
  process.env.ANILINK_ANILIST_URL = server.url;
  process.env.ANILINK_MAL_URL = server.url;
}

describe('call forms', () => {
  it('new AniLink(): public AniList queries without Authorization, and an empty MAL slot', async () => {
    routeDefaultsToServer();
    const aniLink = new AniLink();

    await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    await expect(aniLink.mal.user.me()).rejects.toBeInstanceOf(AniLinkAuthError); // no MAL token

    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request.method).toBe('POST');
    expect(request.headers.authorization).toBeUndefined();
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers.accept).toBe('application/json');
    expect(request.json).toMatchObject({ query: expect.stringContaining('Media'), variables: { id: 1 } });
  });

  it('new AniLink(token): the string is the AniList bearer token; MAL gets nothing', async () => {
    routeDefaultsToServer();
    const aniLink = new AniLink('anilist-token');

    await aniLink.anilist.query.media({ id: 1 });
    await expect(aniLink.mal.user.me()).rejects.toBeInstanceOf(AniLinkAuthError); // no MAL token

    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].headers.authorization).toBe('Bearer anilist-token');
  });

  it('an empty token string means no Authorization header', async () => {
    const aniLink = new AniLink('', { baseUrl: server.url });
    await aniLink.anilist.query.media({ id: 1 });
    expect(server.requests[0].headers.authorization).toBeUndefined();
  });

  it('new AniLink(token, options): the options configure AniList only', async () => {
    routeDefaultsToServer();
    const seenByHooks: string[] = [];
    const aniLink = new AniLink('anilist-token', {
      baseUrl: `${server.url}/graphql`,
      retry: false,
      onRequestStart: (ctx) => seenByHooks.push(ctx.url),
      onError: (_error, ctx) => seenByHooks.push(`error ${ctx.url}`),
    });
    server.enqueue({ status: 503, body: { errors: [{ message: 'down' }] } });

    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toBeInstanceOf(AniLinkApiError);
    // MAL has no credentials in this form: its auth failure would fire the hooks if they had leaked.
    await expect(aniLink.mal.user.me()).rejects.toBeInstanceOf(AniLinkAuthError); // no MAL token

    expect(server.requests).toHaveLength(1); // retry:false applied to AniList
    expect(server.requests[0].path).toBe('/graphql');
    expect(server.requests[0].headers.authorization).toBe('Bearer anilist-token');
    expect(seenByHooks).toEqual([`${server.url}/graphql`, `error ${server.url}/graphql`]);
  });

  it('new AniLink(undefined, options): no token, the options apply to AniList', async () => {
    const aniLink = new AniLink(undefined, { baseUrl: server.url, retry: false });
    server.enqueue({ status: 503, body: 'down' });

    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toMatchObject({ status: 503 });

    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].headers.authorization).toBeUndefined();
  });

  it('new AniLink(credentials): each slot has its own auth and its own transport options', async () => {
    const aniLink = new AniLink({
      anilist: { authToken: 'anilist-token', baseUrl: `${server.url}/graphql`, retry: false },
      mal: { clientId: 'cid', baseUrl: `${server.url}/v2`, retry: { maxRetries: 1, baseDelayMs: 5, jitter: false } },
    });
    server.setDefault({ status: 503, body: 'down' });

    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toMatchObject({ status: 503 });
    await expect(aniLink.mal.anime.get({ id: 1 })).rejects.toMatchObject({ status: 503 });

    const paths = server.requests.map((r) => `${r.method} ${r.path}`);
    expect(paths).toEqual(['POST /graphql', 'GET /v2/anime/1', 'GET /v2/anime/1']);
    expect(server.requests[0].headers.authorization).toBe('Bearer anilist-token');
    expect(server.requests[1].headers['x-mal-client-id']).toBe('cid');
  });

  it('copies client-level onHookError into slots that lack their own', async () => {
    const clientObserver = vi.fn();
    const malObserver = vi.fn();
    const failingHook = () => {
      throw new Error('metrics down');
    };
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, onResponse: failingHook },
      mal: { clientId: 'cid', baseUrl: server.url, onResponse: failingHook, onHookError: malObserver },
      onHookError: clientObserver,
    });
    server.setDefault({ body: { id: 1 } });

    await aniLink.anilist.query.media({ id: 1 });
    expect(clientObserver).toHaveBeenCalledTimes(1);
    expect(clientObserver.mock.calls[0][0]).toBe('onResponse');

    await aniLink.mal.anime.get({ id: 1 });
    expect(malObserver).toHaveBeenCalledTimes(1);
    expect(clientObserver).toHaveBeenCalledTimes(1);
  });

  it('copies client-level diagnostics into slots that lack their own', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const failingHook = () => {
      throw new Error('metrics down');
    };
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, onResponse: failingHook },
      mal: { clientId: 'cid', baseUrl: server.url, onResponse: failingHook, diagnostics: 'warn' },
      diagnostics: 'silent',
    });
    server.setDefault({ body: { id: 1 } });

    await aniLink.anilist.query.media({ id: 1 });
    expect(warn).not.toHaveBeenCalled();

    await aniLink.mal.anime.get({ id: 1 });
    expect(warn).toHaveBeenCalledTimes(1);
  });
});

describe('bad credentials', () => {
  it('rejects a credentials object combined with a second argument', () => {
    const attempt = () => new Untyped({ anilist: { baseUrl: server.url } }, { timeout: 1000 });
    expect(attempt).toThrow(TypeError);
    expect(attempt).toThrow(
      /^AniLink: when the first argument is a credentials object, transport settings belong inside each provider's credentials slot\./,
    );
    expect(() => new Untyped({}, {})).toThrow(TypeError);
  });

  it.each(['anilist', 'mal'] as const)('rejects an unknown key in the %s slot, listing every valid key', (provider) => {
    const attempt = () => new Untyped({ [provider]: { x: 1 } });
    expect(attempt).toThrow(TypeError);
    expect(attempt).toThrow(`Unknown credential key "x". Valid transport options are: ${TRANSPORT_KEYS}.`);
    const tokenField = provider === 'anilist' ? 'authToken' : 'accessToken';
    expect(attempt).toThrow(
      `Provider auth fields are: ${tokenField}, refreshToken, clientId, clientSecret, onTokenRefresh, onTokenRefreshError`,
    );
  });

  it('rejects an unknown key in the positional options', () => {
    expect(() => new Untyped('token', { x: 1 })).toThrow(/Unknown credential key "x"/);
  });

  it('rejects an unknown top-level credentials key, naming it', () => {
    const attempt = () => new Untyped({ anilist: {}, timeout: 1000 });
    expect(attempt).toThrow(TypeError);
    expect(attempt).toThrow(/"timeout"/);
  });
});

describe('option objects that throw while read', () => {
  const boom = new Error('getter boom');
  const throwing = () => {
    throw boom;
  };
  const revoked = () => {
    const revocable = Proxy.revocable({}, {});
    revocable.revoke();
    return revocable.proxy;
  };

  it.each([
    [
      'a slot Proxy whose ownKeys trap throws',
      () => [{ anilist: new Proxy({}, { ownKeys: throwing }) }],
      'AniLink: credentials.anilist',
      boom,
    ],
    ['a revoked slot Proxy', () => [{ mal: revoked() }], 'AniLink: credentials.mal', undefined],
    [
      'a slot getter',
      () => [
        {
          anilist: {
            get authToken() {
              return throwing();
            },
          },
        },
      ],
      'authToken',
      boom,
    ],
    [
      'a slot Proxy whose get trap throws',
      () => [{ mal: new Proxy({ clientId: 'c' }, { get: throwing }) }],
      'clientId',
      boom,
    ],
    [
      'a credentials getter',
      () => [
        {
          get anilist() {
            return throwing();
          },
        },
      ],
      'AniLink: credentials.anilist',
      boom,
    ],
    [
      'a client-level getter',
      () => [
        {
          get onHookError() {
            return throwing();
          },
        },
      ],
      'AniLink: credentials.onHookError',
      boom,
    ],
    [
      'a credentials Proxy whose ownKeys trap throws',
      () => [new Proxy({}, { ownKeys: throwing })],
      'AniLink: credentials',
      boom,
    ],
    ['a revoked credentials Proxy', () => [revoked()], 'AniLink: credentials', undefined],
    ['a positional options Proxy', () => ['token', new Proxy({}, { ownKeys: throwing })], 'AniLink: options', boom],
    [
      'a positional options getter',
      () => [
        'token',
        {
          get timeout() {
            return throwing();
          },
        },
      ],
      'timeout',
      boom,
    ],
    [
      'a nested getter',
      () => [
        {
          anilist: {
            retry: {
              get maxRetries() {
                return throwing();
              },
            },
          },
        },
      ],
      'retry.maxRetries',
      boom,
    ],
  ])('%s is a TypeError naming the path, the thrown value as cause', (_label, args, path, cause) => {
    let thrown: unknown;
    try {
      new Untyped(...args());
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as TypeError).message).toBe(
      `${path} could not be read: a getter or Proxy threw (the thrown value is the cause)`,
    );
    if (cause === undefined) expect((thrown as TypeError).cause).toBeInstanceOf(TypeError);
    else expect((thrown as TypeError).cause).toBe(cause);
  });
});

describe('credentials in headers (D40)', () => {
  it('a character above U+00FF is a TypeError at construction, as Node refuses it, never echoing the value', () => {
    for (const credentials of [
      ['s€cret'],
      [{ anilist: { authToken: 'secret😀' } }],
      [{ mal: { clientId: 'se€ret' } }],
    ]) {
      let thrown: unknown;
      try {
        new Untyped(...credentials);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(TypeError);
      const message = (thrown as TypeError).message;
      expect(message).toMatch(
        /^(authToken|clientId) contains a character above U\+00FF, which an HTTP header cannot carry \(Node refuses it too: ERR_INVALID_CHAR\)\. /,
      );
      expect(message).not.toMatch(/cret|€|😀/);
    }
  });

  it('Latin-1 characters go out one byte each, as Node sends them', async () => {
    server.enqueue({ body: graphqlData({ Media: { id: 1 } }) });
    await new AniLink('tök', { baseUrl: server.url }).anilist.query.media({ id: 1 });
    expect(server.requests[0].headers.authorization).toBe('Bearer tök');
  });

  it('whitespace at either end is trimmed, and a blank credential counts as not given', async () => {
    for (const token of ['tok\n', ' tok\r\n', '   ']) {
      server.enqueue({ body: graphqlData({ Media: { id: 1 } }) });
      await new AniLink(token, { baseUrl: server.url }).anilist.query.media({ id: 1 });
    }
    expect(server.requests.map((request) => request.headers.authorization)).toEqual([
      'Bearer tok',
      'Bearer tok',
      undefined,
    ]);
    expect(() => new Untyped('to\nk')).toThrow(TypeError);
  });
});

describe('bad client-level and endpoint values', () => {
  it.each([
    ['a client-level onHookError that is not a function', { onHookError: 'log' }, /onHookError/],
    ['a client-level diagnostics mode that does not exist', { diagnostics: 'loud' }, /Invalid diagnostics "loud"/],
    ['a baseUrl that is not an absolute http(s) URL', { anilist: { baseUrl: 'graphql.anilist.co' } }, /baseUrl/],
    ['a token that is not a string', { mal: { accessToken: 42 } }, /accessToken/],
    ['a slot that is not an object', { anilist: 'token' }, /anilist/],
  ])('rejects %s with a TypeError naming it', (_label, credentials, names) => {
    const attempt = () => new Untyped(credentials);
    expect(attempt).toThrow(TypeError);
    expect(attempt).toThrow(names);
  });
});

describe('endpoints', () => {
  it('sends each provider to its slot baseUrl', async () => {
    const aniLink = new AniLink({
      anilist: { baseUrl: `${server.url}/graphql` },
      mal: { clientId: 'cid', baseUrl: `${server.url}/v2` },
    });

    await aniLink.anilist.query.media({ id: 1 });
    await aniLink.mal.anime.get({ id: 21 });

    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /graphql', 'GET /v2/anime/21']);
  });

  it('ANILINK_ANILIST_URL and ANILINK_MAL_URL replace the default endpoints', async () => {
    process.env.ANILINK_ANILIST_URL = `${server.url}/from-env/graphql`;
    process.env.ANILINK_MAL_URL = `${server.url}/from-env/v2`;
    const aniLink = new AniLink({ mal: { clientId: 'cid' } });

    await aniLink.anilist.query.media({ id: 1 });
    await aniLink.mal.anime.get({ id: 1 });

    expect(server.requests.map((r) => r.path)).toEqual(['/from-env/graphql', '/from-env/v2/anime/1']);
  });

  it('a slot baseUrl wins over the environment', async () => {
    process.env.ANILINK_ANILIST_URL = `${server.url}/from-env`;
    process.env.ANILINK_MAL_URL = `${server.url}/from-env`;
    const aniLink = new AniLink({
      anilist: { baseUrl: `${server.url}/from-slot` },
      mal: { clientId: 'cid', baseUrl: `${server.url}/from-slot` },
    });

    await aniLink.anilist.query.media({ id: 1 });
    await aniLink.mal.anime.get({ id: 1 });

    expect(server.requests.map((r) => r.path)).toEqual(['/from-slot', '/from-slot/anime/1']);
  });

  it('the positional form takes baseUrl for AniList', async () => {
    const aniLink = new AniLink('anilist-token', { baseUrl: `${server.url}/positional` });
    await aniLink.anilist.query.media({ id: 1 });
    expect(server.requests[0].path).toBe('/positional');
  });
});

describe('request shape and auth headers', () => {
  it('AniList: POST {query, variables} JSON, the single root unwrapped', async () => {
    const aniLink = new AniLink({ anilist: { authToken: 'anilist-token', baseUrl: server.url } });
    server.enqueue({ body: graphqlData('Media', { id: 7, title: { romaji: 'Cowboy Bebop' } }) });

    const media = await aniLink.anilist.query.media({ id: 7 });

    expect(media).toEqual({ id: 7, title: { romaji: 'Cowboy Bebop' } });
    const [request] = server.requests;
    expect(request.method).toBe('POST');
    expect(request.headers.authorization).toBe('Bearer anilist-token');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.json).toEqual({ query: expect.stringMatching(/\bMedia\b/), variables: { id: 7 } });
  });

  it('AniList custom(): the caller’s document and variables are sent verbatim', async () => {
    const aniLink = new AniLink(undefined, { baseUrl: server.url });
    const document = 'query ($id: Int) { Media(id: $id) { id } }';
    server.enqueue({ body: graphqlData('Media', { id: 3 }) });

    await expect(aniLink.anilist.custom(document, { id: 3 })).resolves.toEqual({ id: 3 });
    expect(server.requests[0].json).toEqual({ query: document, variables: { id: 3 } });
  });

  it('MAL with an access token: Authorization Bearer and no client id header', async () => {
    const aniLink = new AniLink({ mal: { accessToken: 'mal-token', clientId: 'cid', baseUrl: server.url } });
    server.enqueue({ body: { id: 1, title: 'Cowboy Bebop' } });

    await expect(aniLink.mal.anime.get({ id: 1 })).resolves.toEqual({ id: 1, title: 'Cowboy Bebop' });

    const [request] = server.requests;
    expect(request.method).toBe('GET');
    expect(request.path).toBe('/anime/1');
    expect(request.query.get('fields')).toBeTruthy();
    expect(request.headers.authorization).toBe('Bearer mal-token');
    expect(request.headers['x-mal-client-id']).toBeUndefined();
  });

  it('MAL with only a client id: X-MAL-CLIENT-ID and no Authorization', async () => {
    const aniLink = new AniLink({ mal: { clientId: 'cid', baseUrl: server.url } });
    await aniLink.mal.anime.get({ id: 1 }, { fields: ['id', 'title'] });

    const [request] = server.requests;
    expect(request.query.get('fields')).toBe('id,title');
    expect(request.headers['x-mal-client-id']).toBe('cid');
    expect(request.headers.authorization).toBeUndefined();
  });
});

describe('getTransportState()', () => {
  /** Every object reachable from `value` is frozen. */
  function expectDeepFrozen(value: unknown, path = 'snapshot'): void {
    if (value === null || typeof value !== 'object') return;
    expect(Object.isFrozen(value), `${path} is frozen`).toBe(true);
    for (const [key, inner] of Object.entries(value)) expectDeepFrozen(inner, `${path}.${key}`);
  }

  it('returns a deep-frozen { anilist, mal } with circuit, paceDeadlines and capturedAt', () => {
    const before = Date.now();
    const state = new AniLink().getTransportState();

    expect(Object.keys(state).sort()).toEqual(['anilist', 'mal']);
    for (const snapshot of [state.anilist, state.mal]) {
      expect(snapshot.circuit).toEqual([]);
      expect(snapshot.paceDeadlines).toEqual([]);
      expect(snapshot.capturedAt).toBeGreaterThanOrEqual(before - 1000);
      expect(snapshot.capturedAt).toBeLessThanOrEqual(Date.now() + 1000);
    }
    expectDeepFrozen(state);
    expect(() => {
      (state.anilist.circuit as unknown as unknown[]).push({});
    }).toThrow(TypeError);
  });

  it('reports breaker and pacing state per host, as a copy that later calls do not change', async () => {
    const resetEpochSeconds = Math.ceil(Date.now() / 1000) + 60;
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, retry: false, circuitBreaker: { threshold: 5, cooldownMs: 1000 } },
    });
    server.enqueue(
      { status: 503, body: 'down' },
      { headers: rateLimitHeaders(90, 0, resetEpochSeconds), body: graphqlData('Media', { id: 1 }) },
    );

    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toMatchObject({ status: 503 });
    const afterFailure = aniLink.getTransportState();
    expect(afterFailure.anilist.circuit).toEqual([
      { host: server.host, consecutiveFailures: 1, openedAt: null, probeInFlight: false, failedProbes: 0 },
    ]);
    expect(afterFailure.mal.circuit).toEqual([]);

    await aniLink.anilist.query.media({ id: 1 });
    const afterSuccess = aniLink.getTransportState();
    expect(afterSuccess.anilist.circuit[0].consecutiveFailures).toBe(0);
    expect(afterSuccess.anilist.paceDeadlines).toEqual([{ host: server.host, deadlineMs: resetEpochSeconds * 1000 }]);

    // The earlier snapshot is a copy: it still shows the state it captured.
    expect(afterFailure.anilist.circuit[0].consecutiveFailures).toBe(1);
    expect(afterFailure.anilist.paceDeadlines).toEqual([]);
    expect(afterSuccess).not.toBe(afterFailure);
    expectDeepFrozen(afterSuccess);
  });
});
