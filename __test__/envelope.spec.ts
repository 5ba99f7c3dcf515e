/**
 * GraphQL envelopes end to end (issue 5; transport.md 1.9, decisions D11): how a 2xx body
 * becomes a result or an error, `allowPartialData`, and what reaches the hooks and the server.
 */
import { describe, expect, it } from 'vitest';
import { AniLink, AniLinkApiError, AniLinkGraphQLError, type RequestOptions } from 'anilink-api-wrapper';
import { recordingHooks, rejectionOf, useTestServer } from './support/helpers';
import { rateLimitHeaders, type ScriptedResponse, type TestServer } from './support/test-server';

const TWO_ROOTS = 'query { a: Media(id: 1) { id } b: Media(id: 2) { id } }';
const FAST_RETRIES = { maxRetries: 2, baseDelayMs: 5, jitter: false };

let server: TestServer;
useTestServer((started) => {
  server = started;
});

/** An AniList client on the test server that records its hooks in call order. */
function envelopeClient(options: RequestOptions = {}) {
  const { calls: reports, hooks } = recordingHooks(['onRequestStart', 'onResponse', 'onRetry', 'onError']);
  const aniLink = new AniLink({ anilist: { baseUrl: server.url, retry: FAST_RETRIES, ...hooks, ...options } });
  return {
    aniLink,
    reports,
    media: (requestOptions?: RequestOptions) => aniLink.anilist.query.media({ id: 1 }, requestOptions),
    custom: (document: string, requestOptions?: RequestOptions) => aniLink.anilist.custom(document, {}, requestOptions),
  };
}

describe('GraphQL envelopes without errors', () => {
  it('unwraps a single root field to its value', async () => {
    const client = envelopeClient();
    server.enqueue({ body: { data: { Media: { id: 1, title: { romaji: 'Cowboy Bebop' } } } } });
    await expect(client.media()).resolves.toEqual({ id: 1, title: { romaji: 'Cowboy Bebop' } });
    server.enqueue({ body: { data: { Media: { id: 2 } }, errors: [] } });
    await expect(client.custom('query { Media(id: 2) { id } }')).resolves.toEqual({ id: 2 });
  });

  it('resolves a single null root as null', async () => {
    const client = envelopeClient();
    server.enqueue({ body: { data: { Media: null } } });
    await expect(client.media()).resolves.toBeNull();
  });

  it('resolves several root fields as the whole { data } body', async () => {
    const client = envelopeClient();
    const body = { data: { a: { id: 1 }, b: { id: 2 } } };
    server.enqueue({ body });
    await expect(client.custom(TWO_ROOTS)).resolves.toEqual(body);
  });
});

describe('GraphQL error envelopes in strict mode', () => {
  it('rejects with AniLinkGraphQLError carrying the entries, the data and the first numeric status', async () => {
    const client = envelopeClient({ retry: false });
    const errors = [
      { message: 'Not Found.', status: 404, locations: [{ line: 1, column: 9 }] },
      { message: 'second problem' },
    ];
    server.enqueue({ body: { data: { Media: null }, errors } });
    const error = await rejectionOf(client.media());
    expect(error).toBeInstanceOf(AniLinkGraphQLError);
    expect(error).toBeInstanceOf(AniLinkApiError);
    expect(error).toMatchObject({
      code: 'GRAPHQL_ERROR',
      status: 404,
      message: 'The request failed with GraphQL errors: Not Found.; second problem',
      graphqlErrors: errors,
      data: { Media: null },
    });
  });

  it('retries an entry status that is in retryOnStatus, and never a status-less entry', async () => {
    const client = envelopeClient();
    server.setDefault({ body: { data: { Media: null }, errors: [{ message: 'Service Unavailable', status: 503 }] } });
    expect(await rejectionOf(client.media())).toMatchObject({ code: 'GRAPHQL_ERROR', status: 503 });
    expect(server.requests).toHaveLength(3);

    server.reset();
    server.setDefault({ body: { data: { Media: null }, errors: [{ message: 'Cannot query field "nope".' }] } });
    expect(await rejectionOf(client.media())).toMatchObject({ code: 'GRAPHQL_ERROR', status: 200 });
    expect(server.requests).toHaveLength(1);
  });
});

describe('onResponse for error envelopes and HTTP errors', () => {
  const quota = rateLimitHeaders(90, 10, Math.floor(Date.now() / 1000) + 3600);

  it('describes a strict error envelope with its rate-limit info (transport.md 1.3 step 7)', async () => {
    const client = envelopeClient({ retry: false });
    server.enqueue({ headers: quota, body: { data: null, errors: [{ message: 'Cannot query field "nope".' }] } });
    await rejectionOf(client.media());
    const [response] = client.reports.filter((report) => report.hook === 'onResponse');
    expect(response.ctx.rateLimit).toEqual({ limit: 90, remaining: 10, reset: Number(quota['x-ratelimit-reset']) });
  });

  it('describes an HTTP error response without rate-limit info (transport.md 1.3 step 8.1)', async () => {
    const client = envelopeClient({ retry: false });
    server.enqueue({ status: 503, headers: quota, body: 'unavailable' });
    const error = await rejectionOf(client.media());
    // The error itself still carries the quota for the caller.
    expect(error).toMatchObject({ status: 503, rateLimit: { limit: 90, remaining: 10 } });
    const [response] = client.reports.filter((report) => report.hook === 'onResponse');
    expect(response.ctx).toEqual({
      requestId: error.requestId,
      url: expect.any(String),
      method: 'POST',
      attempt: 1,
      durationMs: expect.any(Number),
    });
  });
});

describe('allowPartialData', () => {
  const resetEpochSeconds = Math.floor(Date.now() / 1000) + 3600;
  const partial: ScriptedResponse = {
    headers: rateLimitHeaders(90, 80, resetEpochSeconds),
    body: { data: { Media: { id: 7 } }, errors: [{ message: 'Service Unavailable', status: 503 }] },
  };

  it('resolves the data of an envelope with errors and a non-null root, and reports the error through onError', async () => {
    const client = envelopeClient({ allowPartialData: true });
    server.enqueue(partial);
    await expect(client.media()).resolves.toEqual({ id: 7 });

    expect(client.reports.map((report) => report.hook)).toEqual(['onRequestStart', 'onResponse', 'onError']);
    const report = client.reports[2];
    expect(report.error).toBeInstanceOf(AniLinkGraphQLError);
    expect(report.error).toMatchObject({
      status: 503,
      message: 'The request failed with GraphQL errors: Service Unavailable',
      partialData: { Media: { id: 7 } },
    });
    expect(report.error?.requestId).toBe(report.ctx.requestId);
    expect(report.ctx).toEqual({
      requestId: client.reports[0].ctx.requestId,
      url: expect.any(String),
      method: 'POST',
      attempt: 1,
      code: 'GRAPHQL_ERROR',
      status: 503,
      rateLimit: { limit: 90, remaining: 80, reset: resetEpochSeconds },
    });
    expect(report.ctx).not.toHaveProperty('nextDelayMs');
  });

  it('never retries partial data, even when the entry status is retryable', async () => {
    const client = envelopeClient({ allowPartialData: true, retry: { ...FAST_RETRIES, retryOnStatus: [503] } });
    server.setDefault(partial);
    await expect(client.media()).resolves.toEqual({ id: 7 });
    expect(server.requests).toHaveLength(1);
    expect(client.reports.filter((report) => report.hook === 'onRetry')).toEqual([]);
  });

  it('reports a status-less partial error with status 200', async () => {
    const client = envelopeClient({ allowPartialData: true });
    server.enqueue({ body: { data: { Media: { id: 7 } }, errors: [{ message: 'Field "x" is deprecated' }] } });
    await expect(client.media()).resolves.toEqual({ id: 7 });
    const [report] = client.reports.filter((entry) => entry.hook === 'onError');
    expect(report.ctx).toMatchObject({ code: 'GRAPHQL_ERROR', status: 200 });
  });

  it('resolves the whole body, errors included, when there are several roots and one is non-null', async () => {
    const client = envelopeClient({ allowPartialData: true });
    const body = { data: { a: null, b: { id: 2 } }, errors: [{ message: 'Not Found.', status: 404 }] };
    server.enqueue({ body });
    await expect(client.custom(TWO_ROOTS)).resolves.toEqual(body);
    expect(client.reports.filter((report) => report.hook === 'onError')).toHaveLength(1);
  });

  const withoutData: Array<{ name: string; data: unknown }> = [
    { name: 'a single null root', data: { Media: null } },
    { name: 'only null roots', data: { a: null, b: null } },
    { name: 'empty data', data: {} },
    { name: 'null data', data: null },
  ];
  it.each(withoutData)('still throws when the envelope has $name', async ({ data }) => {
    const client = envelopeClient({ allowPartialData: true, retry: false });
    server.enqueue({ body: { data, errors: [{ message: 'Not Found.', status: 404 }] } });
    const error = await rejectionOf(client.custom(TWO_ROOTS));
    expect(error).toBeInstanceOf(AniLinkGraphQLError);
    expect(error).toMatchObject({ code: 'GRAPHQL_ERROR', status: 404 });
    const terminal = client.reports.filter((report) => report.hook === 'onError');
    expect(terminal).toHaveLength(1);
    expect(terminal[0].error).toBe(error);
  });
});

describe('a 2xx GraphQL response whose body is not JSON (D11)', () => {
  const notJson: Array<{ name: string; response: ScriptedResponse; data: string; contentType?: string }> = [
    {
      name: 'an HTML page',
      response: {
        headers: { 'content-type': 'text/html; charset=utf-8' },
        body: '<html><body>maintenance</body></html>',
      },
      data: '<html><body>maintenance</body></html>',
      contentType: 'text/html; charset=utf-8',
    },
    {
      name: 'truncated JSON',
      response: { headers: { 'content-type': 'application/json' }, body: '{"data":{"Media":' },
      data: '{"data":{"Media":',
      contentType: 'application/json',
    },
    { name: 'an empty body', response: { body: '' }, data: '' },
  ];

  it.each(notJson)(
    'rejects $name with AniLinkApiError (API_ERROR, the body text) and does not retry it',
    async ({ response, data, contentType }) => {
      const client = envelopeClient();
      server.setDefault(response);
      const error = await rejectionOf(client.media());
      expect(error).toBeInstanceOf(AniLinkApiError);
      expect(error).not.toBeInstanceOf(AniLinkGraphQLError);
      expect(error).toMatchObject({ code: 'API_ERROR', status: 200, data });
      if (contentType !== undefined) expect((error as AniLinkApiError).contentType).toBe(contentType);
      expect(server.requests).toHaveLength(1);
    },
  );

  it('is neutral for the circuit breaker: it neither trips nor resets the streak', async () => {
    const opened: unknown[] = [];
    const client = envelopeClient({
      retry: false,
      circuitBreaker: { threshold: 2, cooldownMs: 5_000 },
      onCircuitOpen: (ctx) => opened.push(ctx),
    });
    const html: ScriptedResponse = { headers: { 'content-type': 'text/html' }, body: '<html></html>' };
    server.enqueue({ status: 503, body: 'unavailable' }, html, html, html);
    for (let i = 0; i < 4; i++) await rejectionOf(client.media());
    expect(opened).toEqual([]);
    expect(client.aniLink.getTransportState().anilist.circuit[0]).toMatchObject({
      consecutiveFailures: 1,
      openedAt: null,
    });

    server.enqueue({ status: 503, body: 'unavailable' });
    await rejectionOf(client.media());
    expect(opened).toEqual([expect.objectContaining({ host: server.host, failures: 2 })]);
  });
});

describe('REST responses (MAL)', () => {
  const mal = () => new AniLink({ mal: { baseUrl: server.url, clientId: 'cid', retry: false } }).mal;

  it('resolves a 2xx with an empty body as undefined (D11)', async () => {
    server.enqueue({ status: 200, body: '' });
    await expect(mal().anime.get({ id: 1 })).resolves.toBeUndefined();
    expect(server.requests[0]).toMatchObject({ method: 'GET', path: '/anime/1' });
  });

  it('resolves a JSON 2xx body as is, without any envelope unwrapping', async () => {
    const body = { data: { Media: { id: 1 } }, errors: [{ message: 'not an envelope here' }] };
    server.enqueue({ status: 200, body });
    await expect(mal().anime.get({ id: 1 })).resolves.toEqual(body);
  });

  it('resolves a 2xx body that is not JSON verbatim, as its text (transport.md 1.9)', async () => {
    server.enqueue({ status: 200, headers: { 'content-type': 'text/plain' }, body: 'OK' });
    await expect(mal().anime.get({ id: 1 })).resolves.toBe('OK');
  });
});
