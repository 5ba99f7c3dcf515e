// OAuth token exchanges through the native transport (api.md §11): what is sent, what comes
// back, and that a grant is never retried and never leaks its secrets into errors.
import { describe, expect, it } from 'vitest';
import {
  AniLinkApiError,
  AniLinkAuthError,
  AniLinkNetworkError,
  AniLinkRestError,
  getAccessToken,
  getMalAccessToken,
  refreshAccessToken,
  refreshMalAccessToken,
} from 'anilink-api-wrapper';
import type { TestServer } from './support/test-server';
import { onlyRequest, rejectionOf, useTestServer } from './support/helpers';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

const TOKEN = { access_token: 'new-access', token_type: 'Bearer', expires_in: 3600, refresh_token: 'new-refresh' };
const tokenUrl = () => `${server.url}/token`;

describe('AniList', () => {
  it('getAccessToken posts the authorization-code grant as a form and resolves the token', async () => {
    server.enqueue({ body: TOKEN });

    const token = await getAccessToken(1234, 'secret', 'the-code', 'https://example.com/cb', { tokenUrl: tokenUrl() });

    expect(token).toEqual(TOKEN);
    const request = onlyRequest(server);
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/token');
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(request.headers.accept).toBe('application/json');
    expect(request.headers.authorization).toBeUndefined();
    expect(request.body).toBe(
      'grant_type=authorization_code&client_id=1234&client_secret=secret&redirect_uri=https%3A%2F%2Fexample.com%2Fcb&code=the-code',
    );
  });

  it('getAccessToken without a redirectUri sends it empty; a bare AbortSignal is the last argument, as in the original', async () => {
    server.enqueue({ body: TOKEN });
    process.env.ANILINK_ANILIST_TOKEN_URL = tokenUrl();
    try {
      await getAccessToken('1234', 'secret', 'the-code', undefined, new AbortController().signal);
      const aborted = AbortSignal.abort();
      const error = await rejectionOf<AniLinkNetworkError>(refreshAccessToken('1234', 'secret', 'r', aborted));
      expect(error.code).toBe('ABORTED_ERROR');
      expect(error.message).toBe('AniList token request was cancelled.');
    } finally {
      delete process.env.ANILINK_ANILIST_TOKEN_URL;
    }
    expect(Object.fromEntries(new URLSearchParams(onlyRequest(server).body))).toEqual({
      grant_type: 'authorization_code',
      client_id: '1234',
      client_secret: 'secret',
      redirect_uri: '',
      code: 'the-code',
    });
  });

  it('refreshAccessToken posts the refresh grant', async () => {
    server.enqueue({ body: TOKEN });

    await refreshAccessToken('1234', 'secret', 'old-refresh', { tokenUrl: tokenUrl() });

    const request = onlyRequest(server);
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(request.body).toBe('grant_type=refresh_token&client_id=1234&client_secret=secret&refresh_token=old-refresh');
  });

  it('a refused grant is an AniLinkApiError naming the token request, with the answer, sent once and without the secrets', async () => {
    server.setDefault({ status: 503, body: { error: 'temporarily_unavailable' } });

    const error = await rejectionOf<AniLinkApiError>(
      getAccessToken('1234', 'top-secret', 'single-use-code', 'https://example.com/cb', { tokenUrl: tokenUrl() }),
    );

    expect(error).toBeInstanceOf(AniLinkApiError);
    expect(error).not.toBeInstanceOf(AniLinkRestError);
    expect(error.code).toBe('API_ERROR');
    expect(error.message).toBe('AniList token request failed with status 503.');
    expect(error.requestId).toEqual(expect.any(String));
    expect(error.status).toBe(503);
    expect(error.data).toEqual({ error: 'temporarily_unavailable' });
    expect(server.requests).toHaveLength(1);
    const visible = `${String(error)} ${JSON.stringify(error)} ${error.message}`;
    expect(visible).not.toContain('top-secret');
    expect(visible).not.toContain('single-use-code');
  });

  it('honours a per-call timeout', async () => {
    server.enqueue({ delayMs: 2_000, body: TOKEN });

    const error = await rejectionOf<AniLinkNetworkError>(
      refreshAccessToken('1234', 'secret', 'old-refresh', { tokenUrl: tokenUrl(), timeout: 100 }),
    );

    expect(error.code).toBe('TIMEOUT_ERROR');
    expect(error.message).toBe('AniList token request timed out.');
    expect(error.timeoutMs).toBe(100);
  });

  it('rejects bad arguments before sending anything', async () => {
    await expect(getAccessToken('', 'secret', 'code', 'https://example.com/cb')).rejects.toThrow(
      'getAccessToken: clientId must be a non-empty string',
    );
    await expect(refreshAccessToken('1234', 'secret', 'r', 'fast' as never)).rejects.toThrow(
      'refreshAccessToken: options must be an object or an AbortSignal (received a string).',
    );
    expect(server.requests).toHaveLength(0);
  });
});

/** 2xx answers that carry no usable token, and what the error says of each (never a value). */
const INVALID_TOKEN_RESPONSES: ReadonlyArray<{ raw: string; problem: string }> = [
  { raw: '{"token_type":"Bearer"}', problem: 'access_token is missing.' },
  { raw: '{"access_token":5}', problem: 'access_token must be a non-empty string (received a number).' },
  { raw: '{"access_token":"  "}', problem: 'access_token must be a non-empty string (received a blank string).' },
  { raw: '<html>', problem: 'the body is not a JSON object (received a string).' },
  { raw: '[]', problem: 'the body is not a JSON object (received an array).' },
  { raw: 'null', problem: 'the body is not a JSON object (received null).' },
  { raw: '', problem: 'the body is empty.' },
  {
    raw: '{"access_token":"issued-access","refresh_token":7}',
    problem: 'refresh_token must be a non-empty string when present (received a number).',
  },
];

describe('a 2xx answer without a usable token', () => {
  it('rejects every exchange with an AniLinkAuthError naming the token request and what is wrong', async () => {
    const exchanges: Array<[label: string, exchange: () => Promise<unknown>]> = [
      ['AniList', () => getAccessToken('1234', 'secret', 'the-code', undefined, { tokenUrl: tokenUrl() })],
      ['AniList', () => refreshAccessToken('1234', 'secret', 'old-refresh', { tokenUrl: tokenUrl() })],
      [
        'MAL',
        () => getMalAccessToken({ clientId: 'cid', code: 'c', codeVerifier: 'v', options: { tokenUrl: tokenUrl() } }),
      ],
      ['MAL', () => refreshMalAccessToken({ clientId: 'cid', refreshToken: 'old', options: { tokenUrl: tokenUrl() } })],
    ];
    for (const { raw, problem } of INVALID_TOKEN_RESPONSES) {
      server.setDefault({
        body: raw,
        headers: { 'content-type': raw.startsWith('<') ? 'text/html' : 'application/json' },
      });
      for (const [label, exchange] of exchanges) {
        const error = await rejectionOf<AniLinkAuthError>(exchange());
        expect(error).toBeInstanceOf(AniLinkAuthError);
        expect(error.code).toBe('AUTH_ERROR');
        expect(error.message).toBe(`${label} token request returned an invalid token response: ${problem}`);
        expect(`${error.message} ${JSON.stringify(error)}`).not.toContain('issued-access');
      }
    }
    // A null refresh_token is an absent one.
    server.setDefault({ body: { ...TOKEN, refresh_token: null } });
    await expect(refreshAccessToken('1234', 'secret', 'old', { tokenUrl: tokenUrl() })).resolves.toEqual({
      ...TOKEN,
      refresh_token: null,
    });
  });
});

describe('MyAnimeList', () => {
  it('getMalAccessToken posts the PKCE grant as a form', async () => {
    server.enqueue({ body: TOKEN });

    const token = await getMalAccessToken({
      clientId: 'cid',
      code: 'the-code',
      codeVerifier: 'v'.repeat(43),
      redirectUri: 'https://example.com/cb',
      options: { tokenUrl: tokenUrl() },
    });

    expect(token).toEqual(TOKEN);
    const request = onlyRequest(server);
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
      client_id: 'cid',
      grant_type: 'authorization_code',
      code: 'the-code',
      code_verifier: 'v'.repeat(43),
      redirect_uri: 'https://example.com/cb',
    });
  });

  it('refreshMalAccessToken sends the client secret only when given', async () => {
    server.enqueue({ body: TOKEN }, { body: TOKEN });

    await refreshMalAccessToken({ clientId: 'cid', refreshToken: 'old', options: { tokenUrl: tokenUrl() } });
    await refreshMalAccessToken({
      clientId: 'cid',
      clientSecret: 's',
      refreshToken: 'old',
      options: { tokenUrl: tokenUrl() },
    });

    const [without, withSecret] = server.requests.map((r) => Object.fromEntries(new URLSearchParams(r.body)));
    expect(without).toEqual({ client_id: 'cid', grant_type: 'refresh_token', refresh_token: 'old' });
    expect(withSecret).toEqual({
      client_id: 'cid',
      client_secret: 's',
      grant_type: 'refresh_token',
      refresh_token: 'old',
    });
  });

  it('a refused grant names the MAL token request; transport options are taken', async () => {
    server.enqueue({ status: 400, body: { error: 'invalid_grant' } }, { status: 503 }, { body: TOKEN });

    const refused = await rejectionOf<AniLinkApiError>(
      getMalAccessToken({ clientId: 'cid', code: 'c', codeVerifier: 'v', options: { tokenUrl: tokenUrl() } }),
    );
    expect(refused).toBeInstanceOf(AniLinkApiError);
    expect(refused.message).toBe('MAL token request failed with status 400.');
    expect(refused.data).toEqual({ error: 'invalid_grant' });

    // Any transport option of the original's RequestOptions: here an opt-in retry.
    const token = await refreshMalAccessToken({
      clientId: 'cid',
      refreshToken: 'old',
      options: { tokenUrl: tokenUrl(), retry: { maxRetries: 1, baseDelayMs: 1, jitter: false } },
    });
    expect(token).toEqual(TOKEN);
    expect(server.requests).toHaveLength(3);
  });

  it('rejects a request without a code verifier before sending anything', async () => {
    await expect(getMalAccessToken({ clientId: 'cid', code: 'c' } as never)).rejects.toThrow(
      'getMalAccessToken: codeVerifier must be a non-empty string',
    );
    expect(server.requests).toHaveLength(0);
  });
});
