// The public errors (api.md §5, decisions D11, D16): every class and code, the instanceof
// chain, the fields each failure carries, the documented messages, and the requestId shared
// with the hooks. Each failure is produced by a real response (or non-response) of the test
// server.
import { describe, expect, it } from 'vitest';
import {
  AniLink,
  AniLinkApiError,
  AniLinkAuthError,
  AniLinkError,
  AniLinkErrorCodes,
  AniLinkGraphQLError,
  AniLinkNetworkError,
  AniLinkRestError,
  AniLinkValidationError,
  destroyCachedAgents,
} from 'anilink-api-wrapper';
import { aniListClient, closedPort, malClient, rejectionOf, useTestServer, UUID_V4 } from './support/helpers';
import { rateLimitHeaders, type TestServer } from './support/test-server';

const AUTH_MESSAGE =
  'This operation requires an authentication token. Create an instance of AniLink and pass the token as an argument.';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

describe('codes and classes', () => {
  it('AniLinkErrorCodes maps every documented key to its code', () => {
    expect({ ...AniLinkErrorCodes }).toEqual({
      API: 'API_ERROR',
      GRAPHQL: 'GRAPHQL_ERROR',
      REST: 'REST_ERROR',
      NETWORK: 'NETWORK_ERROR',
      TIMEOUT: 'TIMEOUT_ERROR',
      ABORTED: 'ABORTED_ERROR',
      CIRCUIT: 'CIRCUIT_OPEN_ERROR',
      AUTH: 'AUTH_ERROR',
      VALIDATION: 'VALIDATION_ERROR',
      UNKNOWN: 'UNKNOWN_ERROR',
    });
  });

  it('GraphQL and REST errors extend the API error, and every class extends AniLinkError and Error', () => {
    expect(AniLinkError.prototype).toBeInstanceOf(Error);
    expect(AniLinkApiError.prototype).toBeInstanceOf(AniLinkError);
    expect(AniLinkGraphQLError.prototype).toBeInstanceOf(AniLinkApiError);
    expect(AniLinkRestError.prototype).toBeInstanceOf(AniLinkApiError);
    for (const Class of [AniLinkNetworkError, AniLinkAuthError, AniLinkValidationError]) {
      expect(Class.prototype).toBeInstanceOf(AniLinkError);
      expect(Class.prototype).not.toBeInstanceOf(AniLinkApiError);
    }
  });

  it('can be constructed directly with the documented arguments and messages', () => {
    const api = new AniLinkApiError(404, { message: 'gone' });
    expect(api).toMatchObject({ name: 'AniLinkApiError', code: 'API_ERROR', status: 404, data: { message: 'gone' } });
    expect(api.message).toBe('API request failed with status 404.');

    const graphql = new AniLinkGraphQLError([
      { message: 'a', status: '500' as never },
      { message: 'b', status: 429 },
    ]);
    expect(graphql).toMatchObject({ name: 'AniLinkGraphQLError', code: 'GRAPHQL_ERROR', status: 429 });
    expect(graphql.message).toBe('The request failed with GraphQL errors: a; b');
    expect(new AniLinkGraphQLError([{ message: 'x' }]).status).toBe(200);

    expect(new AniLinkRestError(500, 'oops')).toMatchObject({
      name: 'AniLinkRestError',
      code: 'REST_ERROR',
      status: 500,
    });
    expect(new AniLinkAuthError('anilist.query.viewer').message).toBe(
      `${AUTH_MESSAGE} (operation: anilist.query.viewer)`,
    );
    expect(new AniLinkAuthError().message).toBe(AUTH_MESSAGE);

    const validation = new AniLinkValidationError(['first', 'second']);
    expect(validation.message).toBe('Request variables are invalid:\nfirst\nsecond');
    expect(validation.details).toEqual(['first', 'second']);
    expect(new AniLinkNetworkError('TIMEOUT_ERROR', 'The request timed out.')).toMatchObject({
      name: 'AniLinkNetworkError',
      code: 'TIMEOUT_ERROR',
    });
  });
});

describe('API_ERROR (non-2xx from the GraphQL endpoint)', () => {
  it('carries status, the parsed JSON body, contentType and rateLimit', async () => {
    const body = { data: null, errors: [{ message: 'Internal Server Error', status: 500 }] };
    server.enqueue({ status: 500, headers: rateLimitHeaders(90, 42, 1_900_000_000), body });

    const error = await rejectionOf<AniLinkApiError>(aniListClient(server).anilist.query.media({ id: 1 }));

    expect(error).toBeInstanceOf(AniLinkApiError);
    expect(error).toBeInstanceOf(AniLinkError);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(AniLinkGraphQLError);
    expect(error).not.toBeInstanceOf(AniLinkRestError);
    expect(error.name).toBe('AniLinkApiError');
    expect(error.code).toBe('API_ERROR');
    expect(error.message).toBe('API request failed with status 500.');
    expect(error.status).toBe(500);
    expect(error.data).toEqual(body);
    expect(error.contentType).toBe('application/json');
    expect(error.rateLimit).toEqual({ limit: 90, remaining: 42, reset: 1_900_000_000 });
    expect(error.requestId).toMatch(UUID_V4);
  });

  it('reports the rate-limit headers as Number() reads them, however odd (the original does)', async () => {
    server.enqueue({ status: 500, headers: rateLimitHeaders(0, -1, 1_900_000_000), body: { data: null } });
    const error = await rejectionOf<AniLinkApiError>(aniListClient(server).anilist.query.media({ id: 1 }));
    expect(error.rateLimit).toEqual({ limit: 0, remaining: -1, reset: 1_900_000_000 });
  });

  it('drops a byte order mark before the JSON, as axios does: results, error data and MAL bodies', async () => {
    const withMark = (value: unknown) => `\uFEFF${JSON.stringify(value)}`;
    server.enqueue({ headers: { 'content-type': 'application/json' }, body: withMark({ data: { Media: { id: 1 } } }) });
    await expect(aniListClient(server).anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    server.enqueue({ status: 404, headers: { 'content-type': 'application/json' }, body: withMark({ data: null }) });
    const error = await rejectionOf<AniLinkApiError>(aniListClient(server).anilist.query.media({ id: 2 }));
    expect(error).toMatchObject({ code: 'API_ERROR', status: 404, data: { data: null } });
    server.enqueue({ headers: { 'content-type': 'application/json' }, body: withMark({ id: 21 }) });
    await expect(malClient(server).mal.anime.get({ id: 21 })).resolves.toEqual({ id: 21 });
  });

  it('keeps an HTML body as text, with its content type', async () => {
    const html = '<html><body>502 Bad Gateway</body></html>';
    server.enqueue({ status: 502, headers: { 'content-type': 'text/html; charset=utf-8' }, body: html });

    const error = await rejectionOf<AniLinkApiError>(aniListClient(server).anilist.query.media({ id: 1 }));

    expect(error).toBeInstanceOf(AniLinkApiError);
    expect(error.status).toBe(502);
    expect(error.data).toBe(html);
    expect(error.contentType).toBe('text/html; charset=utf-8');
  });

  it('has no rateLimit unless all three x-ratelimit headers are present', async () => {
    server.enqueue({ status: 500, headers: { 'x-ratelimit-limit': '90', 'x-ratelimit-remaining': '10' }, body: 'x' });

    const error = await rejectionOf<AniLinkApiError>(aniListClient(server).anilist.query.media({ id: 1 }));

    expect(error.status).toBe(500);
    expect('rateLimit' in error).toBe(false);
  });

  it('a 2xx GraphQL body that is not JSON is an API error with the text, not retried (D11)', async () => {
    server.setDefault({ status: 200, headers: { 'content-type': 'text/html' }, body: '<html>maintenance</html>' });
    const aniLink = aniListClient(server, {
      retry: { maxRetries: 3, baseDelayMs: 5, jitter: false, retryOnStatus: [200, 503] },
    });

    const error = await rejectionOf<AniLinkApiError>(aniLink.anilist.query.media({ id: 1 }));

    expect(error).toBeInstanceOf(AniLinkApiError);
    expect(error).not.toBeInstanceOf(AniLinkGraphQLError);
    expect(error.code).toBe('API_ERROR');
    expect(error.status).toBe(200);
    expect(error.data).toBe('<html>maintenance</html>');
    expect(error.contentType).toBe('text/html');
    expect(server.requests).toHaveLength(1);
  });
  it('a 2xx GraphQL body that is not JSON is neutral for the breaker (D11)', async () => {
    const aniLink = aniListClient(server, { circuitBreaker: { threshold: 2, cooldownMs: 60_000 } });
    const streak = () => aniLink.getTransportState().anilist.circuit[0].consecutiveFailures;
    server.enqueue(
      { status: 503, body: 'down' },
      { status: 200, headers: { 'content-type': 'text/plain' }, body: 'not json' },
      { status: 503, body: 'down' },
    );

    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toMatchObject({ status: 503 });
    expect(streak()).toBe(1);
    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toMatchObject({ code: 'API_ERROR', status: 200 });
    expect(streak()).toBe(1); // neither counted nor reset
    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toMatchObject({ status: 503 });
    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toMatchObject({ code: 'CIRCUIT_OPEN_ERROR' });
  });
});

describe('GRAPHQL_ERROR (errors inside a 2xx envelope)', () => {
  it('carries graphqlErrors, data, the first numeric entry status and the joined messages', async () => {
    const errors = [
      { message: 'Not Found.', status: '404', locations: [{ line: 1, column: 3 }] },
      { message: 'Also bad.', status: 404 },
    ];
    server.enqueue({ headers: rateLimitHeaders(90, 80, 1_900_000_000), body: { data: { Media: null }, errors } });

    const error = await rejectionOf<AniLinkGraphQLError>(aniListClient(server).anilist.query.media({ id: 1 }));

    expect(error).toBeInstanceOf(AniLinkGraphQLError);
    expect(error).toBeInstanceOf(AniLinkApiError);
    expect(error).toBeInstanceOf(AniLinkError);
    expect(error.name).toBe('AniLinkGraphQLError');
    expect(error.code).toBe('GRAPHQL_ERROR');
    expect(error.message).toBe('The request failed with GraphQL errors: Not Found.; Also bad.');
    expect(error.status).toBe(404); // the string status is skipped
    expect(error.graphqlErrors).toEqual(errors);
    expect(error.data).toEqual({ Media: null });
    expect(error.contentType).toBe('application/json');
    expect(error.rateLimit).toEqual({ limit: 90, remaining: 80, reset: 1_900_000_000 });
    expect(error.requestId).toMatch(UUID_V4);
  });

  it('has status 200 when no entry carries a numeric status', async () => {
    server.enqueue({ body: { data: null, errors: [{ message: 'Validation failed' }] } });

    const error = await rejectionOf<AniLinkGraphQLError>(aniListClient(server).anilist.query.media({ id: 1 }));

    expect(error).toBeInstanceOf(AniLinkGraphQLError);
    expect(error.status).toBe(200);
    expect(error.message).toBe('The request failed with GraphQL errors: Validation failed');
  });
});

describe('REST_ERROR (non-2xx from MyAnimeList)', () => {
  it('carries status, the parsed body and contentType', async () => {
    const body = { error: 'not_found', message: '' };
    server.enqueue({ status: 404, body });

    const error = await rejectionOf<AniLinkRestError>(malClient(server).mal.anime.get({ id: 999 }));

    expect(error).toBeInstanceOf(AniLinkRestError);
    expect(error).toBeInstanceOf(AniLinkApiError);
    expect(error).toBeInstanceOf(AniLinkError);
    expect(error).not.toBeInstanceOf(AniLinkGraphQLError);
    expect(error.name).toBe('AniLinkRestError');
    expect(error.code).toBe('REST_ERROR');
    expect(error.message).toBe('API request failed with status 404.');
    expect(error.status).toBe(404);
    expect(error.data).toEqual(body);
    expect(error.contentType).toBe('application/json');
    expect('rateLimit' in error).toBe(false);
    expect(error.requestId).toMatch(UUID_V4);
  });

  it('keeps an HTML body as text', async () => {
    server.enqueue({ status: 403, headers: { 'content-type': 'text/html' }, body: '<h1>Forbidden</h1>' });

    const error = await rejectionOf<AniLinkRestError>(malClient(server).mal.anime.get({ id: 1 }));

    expect(error.code).toBe('REST_ERROR');
    expect(error.data).toBe('<h1>Forbidden</h1>');
    expect(error.contentType).toBe('text/html');
  });

  it('a 2xx body that is not JSON resolves as its text, verbatim (transport.md 1.9)', async () => {
    server.enqueue({ status: 200, headers: { 'content-type': 'text/plain' }, body: 'plain text answer' });

    await expect(malClient(server).mal.anime.get({ id: 1 })).resolves.toBe('plain text answer');
  });

  it('a 2xx with an empty body resolves undefined (D11)', async () => {
    const aniLink = new AniLink({ mal: { accessToken: 'mal-token', baseUrl: server.url } });
    server.enqueue({ status: 200, body: '' });

    await expect(aniLink.mal.anime.deleteFromList({ id: 1 })).resolves.toBeUndefined();

    expect(server.requests).toHaveLength(1);
    expect(server.requests[0].method).toBe('DELETE');
    expect(server.requests[0].path).toBe('/anime/1/my_list_status');
    expect(server.requests[0].headers.authorization).toBe('Bearer mal-token');
  });
});

describe('network errors', () => {
  it('connection refused is NETWORK_ERROR', async () => {
    const port = await closedPort();
    const aniLink = new AniLink(undefined, { baseUrl: `http://127.0.0.1:${port}`, retry: false });

    const error = await rejectionOf(aniLink.anilist.query.media({ id: 1 }));

    expect(error).toBeInstanceOf(AniLinkNetworkError);
    expect(error).toBeInstanceOf(AniLinkError);
    expect(error.name).toBe('AniLinkNetworkError');
    expect(error.code).toBe('NETWORK_ERROR');
    expect(error.message).toBe('The request failed due to a network error.');
    expect(error.requestId).toMatch(UUID_V4);
    expect('status' in error).toBe(false);
    expect('timeoutMs' in error).toBe(false);
  });

  it('a socket reset before the response is NETWORK_ERROR', async () => {
    // On a fresh connection; a reset of a reused keep-alive connection has its own test below.
    destroyCachedAgents();
    server.enqueue({ drop: 'before-response' });

    const error = await rejectionOf(aniListClient(server).anilist.query.media({ id: 1 }));

    expect(error).toBeInstanceOf(AniLinkNetworkError);
    expect(error.code).toBe('NETWORK_ERROR');
    expect(server.requests).toHaveLength(1);
  });

  it('with retry:false, a read reset on a reused keep-alive connection is resent once on a fresh connection', async () => {
    // A reused connection that dies before any response byte is the stale keep-alive race
    // (docs/pools.md, "Stale connections"): a read is resent once, uncounted, on a new connection.
    const aniLink = aniListClient(server);
    await aniLink.anilist.query.media({ id: 1 }); // leaves an idle keep-alive connection in the pool
    server.reset();
    server.enqueue({ drop: 'before-response' });
    const starts: unknown[] = [];

    const media = await aniLink.anilist.query.media({ id: 1 }, { onRequestStart: (ctx) => starts.push(ctx) });

    expect(media).toEqual({ id: 1 });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0].connectionId).not.toBe(server.requests[1].connectionId);
    expect(starts).toHaveLength(1);
  });

  it('with retry:false, a write reset on a reused keep-alive connection is one attempt and NETWORK_ERROR', async () => {
    const aniLink = aniListClient(server);
    await aniLink.anilist.query.media({ id: 1 });
    server.reset();
    server.enqueue({ drop: 'before-response' });

    const error = await rejectionOf(aniLink.anilist.custom('mutation { ToggleFollow(userId: 1) { id } }'));

    expect(error).toBeInstanceOf(AniLinkNetworkError);
    expect(error.code).toBe('NETWORK_ERROR');
    expect(server.requests).toHaveLength(1);
  });

  it('a body cut off mid-way is NETWORK_ERROR', async () => {
    server.enqueue({ drop: 'mid-body' });

    const error = await rejectionOf(malClient(server).mal.anime.get({ id: 1 }));

    expect(error).toBeInstanceOf(AniLinkNetworkError);
    expect(error.code).toBe('NETWORK_ERROR');
  });

  it('an open breaker fails fast with CIRCUIT_OPEN_ERROR and its message', async () => {
    const aniLink = aniListClient(server, { circuitBreaker: { threshold: 1, cooldownMs: 60_000 } });
    server.enqueue({ status: 503, body: 'down' });

    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toMatchObject({ status: 503 });
    const error = await rejectionOf(aniLink.anilist.query.media({ id: 1 }));

    expect(error).toBeInstanceOf(AniLinkNetworkError);
    expect(error.code).toBe('CIRCUIT_OPEN_ERROR');
    expect(error.message).toBe(
      'The request failed fast: the circuit breaker is open after 1 consecutive failures. Retrying is possible after the cooldown elapses.',
    );
    expect(error.requestId).toMatch(UUID_V4);
    expect(server.requests).toHaveLength(1);
  });
});

describe('errors raised before dispatch', () => {
  it('an auth-required operation without a token is AUTH_ERROR, with nothing sent', async () => {
    const error = await rejectionOf(aniListClient(server).anilist.query.viewer());

    expect(error).toBeInstanceOf(AniLinkAuthError);
    expect(error).toBeInstanceOf(AniLinkError);
    expect(error.name).toBe('AniLinkAuthError');
    expect(error.code).toBe('AUTH_ERROR');
    expect(error.message.startsWith(AUTH_MESSAGE)).toBe(true);
    expect(error.requestId).toMatch(UUID_V4);

    // MAL: a token-only operation with only a client id, or with no credentials at all (any
    // other call of a slot without credentials is sent, D25).
    await expect(malClient(server).mal.user.me()).rejects.toBeInstanceOf(AniLinkAuthError);
    await expect(new AniLink({ mal: { baseUrl: server.url } }).mal.anime.suggestions()).rejects.toBeInstanceOf(
      AniLinkAuthError,
    );
    expect(server.requests).toHaveLength(0);
  });

  it('invalid variables are VALIDATION_ERROR with details, with nothing sent', async () => {
    const error = await rejectionOf<AniLinkValidationError>(
      aniListClient(server).anilist.query.media({ id: 1, nope: 2 } as never),
    );

    expect(error).toBeInstanceOf(AniLinkValidationError);
    expect(error).toBeInstanceOf(AniLinkError);
    expect(error.name).toBe('AniLinkValidationError');
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details).toContain('Unknown variable: nope');
    expect(error.message).toBe(`Request variables are invalid:\n${error.details.join('\n')}`);
    expect(server.requests).toHaveLength(0);
  });
});

describe('requestId', () => {
  it('is the UUID v4 every hook of the call saw, read-only and enumerable', async () => {
    const seen: string[] = [];
    const aniLink = aniListClient(server, {
      onRequestStart: (ctx: { requestId: string }) => seen.push(ctx.requestId),
      onResponse: (ctx: { requestId: string }) => seen.push(ctx.requestId),
      onError: (hookError: { requestId?: string }, ctx: { requestId: string }) =>
        seen.push(ctx.requestId, hookError.requestId!),
    });
    server.enqueue({ status: 500, body: 'x' });

    const error = await rejectionOf(aniLink.anilist.query.media({ id: 1 }));

    expect(error.requestId).toMatch(UUID_V4);
    expect(seen).toHaveLength(4);
    expect(new Set(seen)).toEqual(new Set([error.requestId]));
    const descriptor = Object.getOwnPropertyDescriptor(error, 'requestId');
    expect(descriptor).toMatchObject({ enumerable: true, writable: false });
    expect(Object.keys(error)).toContain('requestId');
    expect(() => {
      (error as { requestId: string }).requestId = 'something else';
    }).toThrow(TypeError);
    expect(error.requestId).toMatch(UUID_V4);
  });

  it('is fresh for every call', async () => {
    server.setDefault({ status: 500, body: 'x' });
    const aniLink = aniListClient(server);

    const first = await rejectionOf(aniLink.anilist.query.media({ id: 1 }));
    const second = await rejectionOf(aniLink.anilist.query.media({ id: 1 }));

    expect(first.requestId).not.toBe(second.requestId);
  });
});
