// Automatic token refresh (api.md §11): a call failing for want of a valid token triggers one
// shared refresh grant, later calls use the new token, the failed call is replayed once.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AniLink, AniLinkApiError, AniLinkAuthError, AniLinkRestError } from 'anilink-api-wrapper';
import type { RecordedRequest, ScriptedResponse, TestServer } from './support/test-server';
import { rejectionOf, useTestServer } from './support/helpers';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

const ENV_KEYS = ['ANILINK_ANILIST_TOKEN_URL', 'ANILINK_MAL_TOKEN_URL'] as const;
beforeEach(() => {
  for (const key of ENV_KEYS) process.env[key] = `${server.url}/token`;
});
afterEach(() => {
  for (const key of ENV_KEYS) delete process.env[key];
});

const NEW_TOKEN = {
  access_token: 'fresh-access',
  token_type: 'Bearer',
  expires_in: 3600,
  refresh_token: 'second-refresh',
};
const isTokenRequest = (request: RecordedRequest) => request.path === '/token';
const tokenRequests = () => server.requests.filter(isTokenRequest);
const apiRequests = () => server.requests.filter((request) => !isTokenRequest(request));

/** The API accepts only the fresh token; the token endpoint answers `grant`. */
function upstream(grant: ScriptedResponse = { body: NEW_TOKEN }): void {
  server.handle((request) => {
    if (isTokenRequest(request)) return grant;
    if (request.headers.authorization === 'Bearer fresh-access') return { body: { data: { Media: { id: 1 } } } };
    return { status: 401, body: { errors: [{ message: 'Invalid token', status: 401 }] } };
  });
}

function aniList(extra: Record<string, unknown> = {}): AniLink {
  return new AniLink({
    anilist: {
      baseUrl: server.url,
      authToken: 'stale-access',
      refreshToken: 'first-refresh',
      clientId: '1234',
      clientSecret: 'app-secret',
      ...extra,
    },
  });
}

describe('AniList', () => {
  it('refreshes once on a 401, replays the call with the new token, and keeps using it', async () => {
    upstream();
    const refreshed: unknown[] = [];
    const client = aniList({ onTokenRefresh: (response: unknown) => refreshed.push(response) });

    await expect(client.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    await expect(client.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });

    expect(apiRequests().map((r) => r.headers.authorization)).toEqual([
      'Bearer stale-access',
      'Bearer fresh-access',
      'Bearer fresh-access',
    ]);
    expect(tokenRequests()).toHaveLength(1);
    // On the wire as the original sends it (D27): a form, not JSON.
    const [grant] = tokenRequests();
    expect(grant.method).toBe('POST');
    expect(grant.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(grant.headers.authorization).toBeUndefined();
    expect(grant.body).toBe(
      'grant_type=refresh_token&client_id=1234&client_secret=app-secret&refresh_token=first-refresh',
    );
    expect(refreshed).toEqual([NEW_TOKEN]);
  });

  it('shares one grant between concurrent calls that fail meanwhile', async () => {
    upstream();
    const client = aniList();

    const results = await Promise.all(Array.from({ length: 5 }, () => client.anilist.query.media({ id: 1 })));

    expect(results).toEqual(Array.from({ length: 5 }, () => ({ id: 1 })));
    expect(tokenRequests()).toHaveLength(1);
  });

  it('refreshes when an operation needs a token the slot does not have', async () => {
    upstream();
    const client = aniList({ authToken: undefined });

    await expect(client.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    await expect(client.anilist.query.viewer()).resolves.toEqual({ id: 1 });

    expect(tokenRequests()).toHaveLength(1);
  });

  it('keeps the old refresh token when the grant returns none', async () => {
    const { refresh_token: _dropped, ...withoutRefresh } = NEW_TOKEN;
    upstream({ body: withoutRefresh });
    const refreshed: unknown[] = [];
    const client = aniList({ onTokenRefresh: (response: unknown) => refreshed.push(response) });

    await client.anilist.query.media({ id: 1 });

    expect(refreshed).toEqual([{ ...withoutRefresh, refresh_token: 'first-refresh' }]);
  });

  it('a refused grant rejects the call with the token error and reports it', async () => {
    upstream({ status: 400, body: { error: 'invalid_grant' } });
    const refreshErrors: unknown[] = [];
    const observed: string[] = [];
    const client = aniList({
      onTokenRefreshError: (error: unknown) => refreshErrors.push(error),
      onHookError: (hookName: string) => observed.push(hookName),
    });

    const error = await rejectionOf<AniLinkApiError>(client.anilist.query.media({ id: 1 }));

    // The original's class and wording (D27): an AniLinkApiError naming the token request.
    expect(error).toBeInstanceOf(AniLinkApiError);
    expect(error).not.toBeInstanceOf(AniLinkRestError);
    expect(error.code).toBe('API_ERROR');
    expect(error.message).toBe('AniList token request failed with status 400.');
    expect(error.status).toBe(400);
    expect(error.data).toEqual({ error: 'invalid_grant' });
    expect(refreshErrors).toEqual([error]);
    expect(observed).toEqual(['aniListTokenRefresh']);
    expect(JSON.stringify(error)).not.toContain('app-secret');
    expect(JSON.stringify(error)).not.toContain('first-refresh');
  });

  it('a granted token Node could not send (a character above U+00FF) fails the refresh, never shown (D40)', async () => {
    upstream({ body: { ...NEW_TOKEN, access_token: 'fresh-acce\u20acss' } });
    const refreshErrors: unknown[] = [];
    const client = aniList({ onTokenRefreshError: (error: unknown) => refreshErrors.push(error) });

    const error = await rejectionOf<AniLinkAuthError>(client.anilist.query.media({ id: 1 }));

    expect(error).toBeInstanceOf(AniLinkAuthError);
    expect(error.code).toBe('AUTH_ERROR');
    expect(error.message).toMatch(
      /^AniList token request returned an invalid token response: its access_token cannot be sent: authToken contains a character above U\+00FF, which an HTTP header cannot carry/,
    );
    expect(error.message).not.toContain('fresh-acce');
    expect(refreshErrors).toEqual([error]);
    expect(apiRequests()).toHaveLength(1);

    // Neither token of that answer was kept: the next grant sends the first refresh token.
    upstream();
    await expect(client.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    expect(tokenRequests().map((r) => new URLSearchParams(r.body).get('refresh_token'))).toEqual([
      'first-refresh',
      'first-refresh',
    ]);
  });

  it('a grant answered without a usable token rejects with an AniLinkAuthError and keeps both tokens', async () => {
    const invalid: Array<[raw: string, problem: string]> = [
      ['{"token_type":"Bearer"}', 'access_token is missing.'],
      ['{"access_token":5}', 'access_token must be a non-empty string (received a number).'],
      ['null', 'the body is not a JSON object (received null).'],
      ['', 'the body is empty.'],
      [
        '{"access_token":"fresh-access","refresh_token":7}',
        'refresh_token must be a non-empty string when present (received a number).',
      ],
    ];
    const refreshErrors: unknown[] = [];
    const observed: string[] = [];
    const client = aniList({
      onTokenRefreshError: (error: unknown) => refreshErrors.push(error),
      onHookError: (hookName: string) => observed.push(hookName),
    });
    for (const [raw, problem] of invalid) {
      upstream({ body: raw });
      const error = await rejectionOf<AniLinkAuthError>(client.anilist.query.media({ id: 1 }));
      expect(error).toBeInstanceOf(AniLinkAuthError);
      expect(error.message).toBe(`AniList token request returned an invalid token response: ${problem}`);
      expect(error.message).not.toContain('fresh-access');
      expect(refreshErrors.at(-1)).toBe(error);
    }
    expect(observed).toEqual(invalid.map(() => 'aniListTokenRefresh'));

    // Nothing of the invalid answers was kept: the next grant sends the first refresh token,
    // and until it succeeds every call went out with the first access token.
    upstream();
    await expect(client.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    const grants = tokenRequests().map((r) => new URLSearchParams(r.body).get('refresh_token'));
    expect(grants).toEqual(Array.from({ length: invalid.length + 1 }, () => 'first-refresh'));
    expect(apiRequests().map((r) => r.headers.authorization)).toEqual([
      ...invalid.map(() => 'Bearer stale-access'),
      'Bearer stale-access',
      'Bearer fresh-access',
    ]);
  });

  it('a second 401 after the refresh rejects instead of looping', async () => {
    server.handle((request) =>
      isTokenRequest(request) ? { body: NEW_TOKEN } : { status: 401, body: { message: 'nope' } },
    );
    const client = aniList();

    const error = await rejectionOf<AniLinkApiError>(client.anilist.query.media({ id: 1 }));

    expect(error.status).toBe(401);
    expect(apiRequests()).toHaveLength(2);
    expect(tokenRequests()).toHaveLength(1);
  });

  it('does nothing without the full opt-in (AniList needs clientSecret)', async () => {
    upstream();
    const client = aniList({ clientSecret: undefined });

    const error = await rejectionOf<AniLinkApiError>(client.anilist.query.media({ id: 1 }));

    expect(error.status).toBe(401);
    expect(tokenRequests()).toHaveLength(0);
  });
});

describe('MyAnimeList', () => {
  const mal = (extra: Record<string, unknown> = {}) =>
    new AniLink({
      mal: {
        baseUrl: server.url,
        accessToken: 'stale-access',
        refreshToken: 'first-refresh',
        clientId: 'cid',
        diagnostics: 'silent',
        ...extra,
      },
    });

  it('refreshes with a form grant (client secret optional) and replays', async () => {
    upstream();
    const client = new AniLink({
      mal: { baseUrl: server.url, accessToken: 'stale-access', refreshToken: 'first-refresh', clientId: 'cid' },
    });

    await expect(client.mal.anime.get({ id: 1 })).resolves.toEqual({ data: { Media: { id: 1 } } });

    expect(tokenRequests()).toHaveLength(1);
    expect(Object.fromEntries(new URLSearchParams(tokenRequests()[0].body))).toEqual({
      client_id: 'cid',
      grant_type: 'refresh_token',
      refresh_token: 'first-refresh',
    });
  });

  it('a grant answered without a usable token rejects with an AniLinkAuthError naming the MAL token request', async () => {
    upstream({ body: '<html>', headers: { 'content-type': 'text/html' } });
    const refreshErrors: unknown[] = [];
    const client = mal({ onTokenRefreshError: (error: unknown) => refreshErrors.push(error) });

    const error = await rejectionOf<AniLinkAuthError>(client.mal.anime.get(1));

    expect(error).toBeInstanceOf(AniLinkAuthError);
    expect(error.message).toBe(
      'MAL token request returned an invalid token response: the body is not a JSON object (received a string).',
    );
    expect(refreshErrors).toEqual([error]);
  });

  it('a refused grant rejects with an AniLinkApiError naming the MAL token request', async () => {
    upstream({ status: 401, body: { error: 'invalid_client', message: 'Client authentication failed' } });
    const client = mal();

    const error = await rejectionOf<AniLinkApiError>(client.mal.anime.get(1));

    expect(error).toBeInstanceOf(AniLinkApiError);
    expect(error).not.toBeInstanceOf(AniLinkRestError);
    expect(error.message).toBe('MAL token request failed with status 401.');
    expect(error.status).toBe(401);
    expect(error.data).toEqual({ error: 'invalid_client', message: 'Client authentication failed' });
    expect(error.cause).toBeInstanceOf(AniLinkRestError);
    expect(JSON.stringify(error)).not.toContain('first-refresh');
  });
});
