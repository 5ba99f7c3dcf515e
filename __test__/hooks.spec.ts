// Hooks and diagnostics (transport.md 1.10, api.md §6): payloads with optional keys absent,
// the firing order for success and failure, one requestId per call, delivery before the
// call's promise settles, isolation of throwing hooks and the routing of their diagnostics,
// onHookError precedence, per-key overriding, and per-provider scope.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AniLink, AniLinkApiError, AniLinkNetworkError, destroyCachedAgents } from 'anilink-api-wrapper';
import { recordingHooks, useTestServer, UUID_V4, type HookCall } from './support/helpers';
import { graphqlData, rateLimitHeaders, type TestServer } from './support/test-server';

const FAST_RETRY = { maxRetries: 2, baseDelayMs: 5, jitter: false } as const;

function summary(calls: HookCall[]): string[] {
  return calls.map((call) => `${call.hook}#${call.ctx.attempt}`);
}

function keysOf(ctx: Record<string, unknown>): string[] {
  return Object.keys(ctx).sort();
}

function throwing(message: string) {
  return () => {
    throw new Error(message);
  };
}

let server: TestServer;
useTestServer((started) => {
  server = started;
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('payloads', () => {
  it('success: onRequestStart and onResponse carry only the keys that apply', async () => {
    const { calls, hooks } = recordingHooks();
    const aniLink = new AniLink({ anilist: { baseUrl: server.url, ...hooks } });

    await aniLink.anilist.query.media({ id: 1 });

    expect(summary(calls)).toEqual(['onRequestStart#1', 'onResponse#1']);
    const [start, response] = calls;
    expect(start.ctx).toEqual({
      requestId: expect.stringMatching(UUID_V4),
      url: server.url,
      method: 'POST',
      attempt: 1,
    });
    expect(keysOf(response.ctx)).toEqual(['attempt', 'durationMs', 'method', 'requestId', 'url']);
    expect(response.ctx.durationMs).toBeGreaterThanOrEqual(0);
    expect(response.ctx.durationMs).toBeLessThan(5000);
  });

  it('onResponse carries rateLimit when all three headers are present', async () => {
    const { calls, hooks } = recordingHooks(['onResponse']);
    const aniLink = new AniLink({ anilist: { baseUrl: server.url, ...hooks } });
    server.enqueue({ headers: rateLimitHeaders(90, 89, 1_900_000_000), body: graphqlData('Media', { id: 1 }) });

    await aniLink.anilist.query.media({ id: 1 });

    expect(calls[0].ctx.rateLimit).toEqual({ limit: 90, remaining: 89, reset: 1_900_000_000 });
  });

  it('MAL contexts report GET and the full request URL', async () => {
    const { calls, hooks } = recordingHooks(['onRequestStart']);
    const aniLink = new AniLink({ mal: { clientId: 'cid', baseUrl: server.url, ...hooks } });

    await aniLink.mal.anime.get({ id: 5 }, { fields: 'id' });

    expect(calls[0].ctx).toMatchObject({ method: 'GET', url: `${server.url}/anime/5?fields=id`, attempt: 1 });
  });

  it('failure with a retry: onError contexts carry code, status and nextDelayMs, and retryWaitMs once a wait happened', async () => {
    const { calls, hooks } = recordingHooks(['onRequestStart', 'onResponse', 'onError']);
    const aniLink = new AniLink({ anilist: { baseUrl: server.url, retry: FAST_RETRY, ...hooks } });
    server.enqueue({ status: 503, body: 'down' }, { status: 503, body: 'down' });

    await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });

    expect(summary(calls)).toEqual([
      'onRequestStart#1',
      'onResponse#1',
      'onError#1',
      'onRequestStart#2',
      'onResponse#2',
      'onError#2',
      'onRequestStart#3',
      'onResponse#3',
    ]);
    const [firstError, secondError] = calls.filter((c) => c.hook === 'onError');
    expect(firstError.ctx).toEqual({
      requestId: expect.stringMatching(UUID_V4),
      url: server.url,
      method: 'POST',
      attempt: 1,
      code: 'API_ERROR',
      status: 503,
      nextDelayMs: 5,
    });
    expect(secondError.ctx).toMatchObject({ attempt: 2, nextDelayMs: 10, retryWaitMs: 5 });
    expect(keysOf(calls[1].ctx)).toEqual(['attempt', 'durationMs', 'method', 'requestId', 'url']);
    expect(firstError.error).toBeInstanceOf(AniLinkApiError);
  });

  it('terminal failure: onRetry replaces the per-attempt onError, the terminal onError has no nextDelayMs', async () => {
    const { calls, hooks } = recordingHooks();
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, retry: { ...FAST_RETRY, maxRetries: 1 }, ...hooks },
    });
    server.setDefault({ status: 503, headers: rateLimitHeaders(90, 10, 1_900_000_000), body: 'down' });

    const error = await aniLink.anilist.query.media({ id: 1 }).catch((e: unknown) => e);

    expect(summary(calls)).toEqual([
      'onRequestStart#1',
      'onResponse#1',
      'onRetry#1',
      'onRequestStart#2',
      'onResponse#2',
      'onError#2',
    ]);
    expect(calls[2].ctx).toMatchObject({ code: 'API_ERROR', status: 503, nextDelayMs: 5 });
    const terminal = calls[5];
    expect(terminal.ctx).toEqual({
      requestId: expect.stringMatching(UUID_V4),
      url: server.url,
      method: 'POST',
      attempt: 2,
      code: 'API_ERROR',
      status: 503,
      rateLimit: { limit: 90, remaining: 10, reset: 1_900_000_000 },
      retryWaitMs: 5,
    });
    expect(terminal.error).toBeInstanceOf(AniLinkApiError);
    expect((terminal.error as AniLinkApiError).requestId).toBe((error as AniLinkApiError).requestId);
  });

  it('an HTTP failure reports onResponse without rateLimit, even when the headers carry it (transport.md 1.3 step 8.1)', async () => {
    const { calls, hooks } = recordingHooks(['onResponse', 'onError']);
    const aniLink = new AniLink({ anilist: { baseUrl: server.url, retry: false, ...hooks } });
    server.enqueue({ status: 500, headers: rateLimitHeaders(90, 10, 1_900_000_000), body: 'x' });

    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toBeInstanceOf(AniLinkApiError);

    expect(calls.map((c) => c.hook)).toEqual(['onResponse', 'onError']);
    expect(keysOf(calls[0].ctx)).toEqual(['attempt', 'durationMs', 'method', 'requestId', 'url']);
    // The error report is where a failure's rate limit belongs.
    expect(calls[1].ctx.rateLimit).toEqual({ limit: 90, remaining: 10, reset: 1_900_000_000 });
  });

  it('a network failure still reports onResponse, and onError without status or rateLimit', async () => {
    const { calls, hooks } = recordingHooks();
    const aniLink = new AniLink({ anilist: { baseUrl: server.url, retry: false, ...hooks } });
    destroyCachedAgents(); // a fresh connection, whatever the pool kept from earlier tests
    server.enqueue({ drop: 'before-response' });

    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toBeInstanceOf(AniLinkNetworkError);

    expect(summary(calls)).toEqual(['onRequestStart#1', 'onResponse#1', 'onError#1']);
    expect(keysOf(calls[2].ctx)).toEqual(['attempt', 'code', 'method', 'requestId', 'url']);
    expect(calls[2].ctx.code).toBe('NETWORK_ERROR');
  });

  it('a GraphQL envelope error reports onResponse with rateLimit, then onError with status and rateLimit', async () => {
    const { calls, hooks } = recordingHooks();
    const aniLink = new AniLink({ anilist: { baseUrl: server.url, retry: false, ...hooks } });
    server.enqueue({
      headers: rateLimitHeaders(90, 70, 1_900_000_000),
      body: { data: null, errors: [{ message: 'Not Found.', status: 404 }] },
    });

    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toMatchObject({ code: 'GRAPHQL_ERROR' });

    expect(summary(calls)).toEqual(['onRequestStart#1', 'onResponse#1', 'onError#1']);
    const rateLimit = { limit: 90, remaining: 70, reset: 1_900_000_000 };
    expect(calls[1].ctx.rateLimit).toEqual(rateLimit);
    expect(calls[2].ctx).toMatchObject({ code: 'GRAPHQL_ERROR', status: 404, rateLimit });
  });

  it('accepted partial data: onResponse, then onError with the GraphQL error and no nextDelayMs', async () => {
    const { calls, hooks } = recordingHooks();
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, allowPartialData: true, retry: FAST_RETRY, ...hooks },
    });
    server.enqueue({ body: { data: { Media: { id: 1 } }, errors: [{ message: 'a nested field failed' }] } });

    await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });

    expect(summary(calls)).toEqual(['onRequestStart#1', 'onResponse#1', 'onError#1']);
    expect(calls[2].ctx).toEqual({
      requestId: calls[0].ctx.requestId,
      url: server.url,
      method: 'POST',
      attempt: 1,
      code: 'GRAPHQL_ERROR',
      status: 200,
    });
    expect(calls[2].error).toMatchObject({ code: 'GRAPHQL_ERROR', requestId: calls[0].ctx.requestId });
    expect(server.requests).toHaveLength(1);
  });

  it('an auth failure fires onRequestStart then onError, and nothing reaches the server', async () => {
    const { calls, hooks } = recordingHooks();
    const aniLink = new AniLink({ anilist: { baseUrl: server.url, ...hooks } });

    await expect(aniLink.anilist.query.viewer()).rejects.toMatchObject({ code: 'AUTH_ERROR' });

    expect(summary(calls)).toEqual(['onRequestStart#1', 'onError#1']);
    expect(calls[1].ctx.code).toBe('AUTH_ERROR');
    expect(server.requests).toHaveLength(0);
  });

  it('every hook of a call, and its error, share one requestId; another call gets another', async () => {
    const { calls, hooks } = recordingHooks();
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, retry: { ...FAST_RETRY, maxRetries: 1 }, ...hooks },
    });
    server.enqueue({ status: 500, body: 'x' }, { status: 500, body: 'x' });

    const error = (await aniLink.anilist.query.media({ id: 1 }).catch((e: unknown) => e)) as AniLinkApiError;
    const ids = new Set(calls.map((c) => c.ctx.requestId));
    expect(ids).toEqual(new Set([error.requestId]));
    for (const call of calls.filter((c) => c.error))
      expect((call.error as AniLinkApiError).requestId).toBe(error.requestId);

    calls.length = 0;
    await aniLink.anilist.query.media({ id: 1 });
    expect(calls[0].ctx.requestId).not.toBe(error.requestId);
  });
});

describe('pacing and breaker hooks', () => {
  /** Rate-limit headers that exhaust the quota until `msAhead` from now (reset in fractional epoch seconds). */
  function exhaustedFor(msAhead: number): Record<string, string> {
    return rateLimitHeaders(90, 0, (Date.now() + msAhead) / 1000);
  }

  it('a paced call: onPace first, with delayMs and no aborted key; onResponse reports pacedMs', async () => {
    const { calls, hooks } = recordingHooks(['onPace', 'onRequestStart', 'onResponse']);
    const aniLink = new AniLink({ anilist: { baseUrl: server.url, ...hooks } });
    server.enqueue({ headers: exhaustedFor(400), body: graphqlData('Media', { id: 1 }) });

    await aniLink.anilist.query.media({ id: 1 });
    calls.length = 0;
    await aniLink.anilist.query.media({ id: 1 });

    expect(calls.map((c) => c.hook)).toEqual(['onPace', 'onRequestStart', 'onResponse']);
    const [pace, start, response] = calls;
    expect(keysOf(pace.ctx)).toEqual(['attempt', 'delayMs', 'method', 'requestId', 'url']);
    expect(pace.ctx.delayMs).toBeGreaterThan(0);
    expect(pace.ctx.delayMs).toBeLessThanOrEqual(400);
    expect(pace.ctx.requestId).toBe(start.ctx.requestId);
    expect(response.ctx.pacedMs).toBe(pace.ctx.delayMs);
    // durationMs is the network attempt only (decisions D6).
    expect(response.ctx.durationMs as number).toBeLessThan(pace.ctx.delayMs as number);
  });

  it('the breaker trips: onCircuitOpen between onResponse and onError; a successful probe: onCircuitClose last', async () => {
    const { calls, hooks } = recordingHooks([
      'onRequestStart',
      'onResponse',
      'onError',
      'onCircuitOpen',
      'onCircuitClose',
    ]);
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, retry: false, circuitBreaker: { threshold: 1, cooldownMs: 50 }, ...hooks },
    });
    server.enqueue({ status: 503, body: 'down' });

    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toMatchObject({ status: 503 });
    expect(calls.map((c) => c.hook)).toEqual(['onRequestStart', 'onResponse', 'onCircuitOpen', 'onError']);
    expect(calls[2].ctx).toEqual({
      requestId: calls[0].ctx.requestId,
      url: server.url,
      method: 'POST',
      attempt: 1,
      host: server.host,
      failures: 1,
    });

    await new Promise((resolve) => setTimeout(resolve, 80)); // let the cooldown elapse
    calls.length = 0;
    await aniLink.anilist.query.media({ id: 1 });
    expect(calls.map((c) => c.hook)).toEqual(['onRequestStart', 'onResponse', 'onCircuitClose']);
    expect(calls[2].ctx).toEqual({
      requestId: calls[0].ctx.requestId,
      url: server.url,
      method: 'POST',
      attempt: 1,
      host: server.host,
    });
  });

  it('a fast-fail: onRequestStart then onError with host and retryAfterMs', async () => {
    const { calls, hooks } = recordingHooks(['onRequestStart', 'onResponse', 'onError']);
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, retry: false, circuitBreaker: { threshold: 1, cooldownMs: 60_000 }, ...hooks },
    });
    server.enqueue({ status: 503, body: 'down' });
    await aniLink.anilist.query.media({ id: 1 }).catch(() => undefined);
    calls.length = 0;

    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toMatchObject({ code: 'CIRCUIT_OPEN_ERROR' });

    expect(calls.map((c) => c.hook)).toEqual(['onRequestStart', 'onError']);
    expect(keysOf(calls[1].ctx)).toEqual(['attempt', 'code', 'host', 'method', 'requestId', 'retryAfterMs', 'url']);
    expect(calls[1].ctx.retryAfterMs).toBeGreaterThan(50_000);
    expect(calls[1].ctx.retryAfterMs).toBeLessThanOrEqual(60_000);
  });
});

describe('timing', () => {
  it('every hook has run when the awaited promise settles (success and failure)', async () => {
    const { calls, hooks } = recordingHooks();
    const aniLink = new AniLink({ anilist: { baseUrl: server.url, retry: false, ...hooks } });

    await aniLink.anilist.query.media({ id: 1 });
    expect(summary(calls)).toEqual(['onRequestStart#1', 'onResponse#1']);

    calls.length = 0;
    server.enqueue({ status: 500, body: 'x' });
    await aniLink.anilist.query.media({ id: 1 }).catch(() => undefined);
    expect(summary(calls)).toEqual(['onRequestStart#1', 'onResponse#1', 'onError#1']);
  });

  it('onRequestStart runs before the server sees the request', async () => {
    let requestsSeenAtStart = -1;
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, onRequestStart: () => (requestsSeenAtStart = server.requests.length) },
    });

    await aniLink.anilist.query.media({ id: 1 });

    expect(requestsSeenAtStart).toBe(0);
  });
});

describe('a throwing hook', () => {
  it('never changes a success, and is reported to onHookError with the documented message', async () => {
    const observer = vi.fn();
    const thrown = new Error('metrics down');
    const aniLink = new AniLink({
      anilist: {
        baseUrl: server.url,
        onRequestStart: throwing('start failed'),
        onResponse: () => {
          throw thrown;
        },
        onHookError: observer,
      },
    });

    await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });

    expect(observer.mock.calls.map((call) => call[0])).toEqual(['onRequestStart', 'onResponse']);
    const [hookName, reported] = observer.mock.calls[1];
    expect(hookName).toBe('onResponse');
    expect(reported).toBeInstanceOf(Error);
    expect(reported.message).toBe('The onResponse hook threw and was ignored: metrics down');
    expect(reported.cause).toBe(thrown);
    expect(server.requests).toHaveLength(1);
  });

  it('a thrown non-Error value is reported through String(value)', async () => {
    const observer = vi.fn();
    const aniLink = new AniLink({
      anilist: {
        baseUrl: server.url,
        onResponse: () => {
          throw 'plain string'; // eslint-disable-line no-throw-literal
        },
        onHookError: observer,
      },
    });

    await aniLink.anilist.query.media({ id: 1 });

    expect(observer.mock.calls[0][1].message).toBe('The onResponse hook threw and was ignored: plain string');
  });

  it('never changes the retry schedule or the error of a failure', async () => {
    const observer = vi.fn();
    const aniLink = new AniLink({
      anilist: {
        baseUrl: server.url,
        retry: { ...FAST_RETRY, maxRetries: 1 },
        onRequestStart: throwing('a'),
        onResponse: throwing('b'),
        onError: throwing('c'),
        onHookError: observer,
      },
    });
    server.setDefault({ status: 503, body: 'down' });

    const error = await aniLink.anilist.query.media({ id: 1 }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(AniLinkApiError);
    expect((error as AniLinkApiError).status).toBe(503);
    expect(server.requests).toHaveLength(2);
    expect(observer.mock.calls.map((call) => call[0])).toEqual([
      'onRequestStart',
      'onResponse',
      'onError',
      'onRequestStart',
      'onResponse',
      'onError',
    ]);
  });

  it('an observer that throws too is swallowed', async () => {
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, onResponse: throwing('metrics down'), onHookError: throwing('observer down') },
    });

    await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
  });
});

describe('diagnostics routing without an observer', () => {
  function clientWithFailingHook(diagnostics?: 'warn' | 'hook' | 'silent') {
    return new AniLink({
      anilist: { baseUrl: server.url, onResponse: throwing('metrics down'), ...(diagnostics ? { diagnostics } : {}) },
    });
  }

  it.each([undefined, 'warn'] as const)('diagnostics %s: console.warn of the JSON record', async (mode) => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const ids: string[] = [];
    const aniLink = clientWithFailingHook(mode);

    await aniLink.anilist.query.media({ id: 1 }, { onRequestStart: (ctx) => ids.push(ctx.requestId) });

    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]).toHaveLength(1);
    expect(JSON.parse(warn.mock.calls[0][0] as string)).toEqual({
      source: 'anilink',
      kind: 'hook-failure',
      hookName: 'onResponse',
      requestId: ids[0],
      message: 'The onResponse hook threw and was ignored: metrics down',
    });
  });

  it.each(['silent', 'hook'] as const)('diagnostics %s: nothing is printed', async (mode) => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});

    await expect(clientWithFailingHook(mode).anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });

    expect(warn).not.toHaveBeenCalled();
  });

  it.each(['warn', 'hook', 'silent'] as const)(
    'diagnostics %s with an observer: the observer gets it, not the console',
    async (mode) => {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      const observer = vi.fn();
      const aniLink = new AniLink({
        anilist: {
          baseUrl: server.url,
          onResponse: throwing('metrics down'),
          diagnostics: mode,
          onHookError: observer,
        },
      });

      await aniLink.anilist.query.media({ id: 1 });

      expect(observer).toHaveBeenCalledTimes(1);
      expect(warn).not.toHaveBeenCalled();
    },
  );
});

describe('scope and precedence', () => {
  it('onHookError: per request > slot > client level', async () => {
    const clientObserver = vi.fn();
    const slotObserver = vi.fn();
    const requestObserver = vi.fn();
    const failing = { onResponse: throwing('metrics down') };

    const withSlotObserver = new AniLink({
      anilist: { baseUrl: server.url, ...failing, onHookError: slotObserver },
      onHookError: clientObserver,
    });
    await withSlotObserver.anilist.query.media({ id: 1 }, { onHookError: requestObserver });
    expect(requestObserver).toHaveBeenCalledTimes(1);
    expect(slotObserver).not.toHaveBeenCalled();
    expect(clientObserver).not.toHaveBeenCalled();

    await withSlotObserver.anilist.query.media({ id: 1 });
    expect(slotObserver).toHaveBeenCalledTimes(1);
    expect(clientObserver).not.toHaveBeenCalled();

    const clientOnly = new AniLink({ anilist: { baseUrl: server.url, ...failing }, onHookError: clientObserver });
    await clientOnly.anilist.query.media({ id: 1 });
    expect(clientObserver).toHaveBeenCalledTimes(1);
  });

  it('diagnostics: a per-request mode overrides the slot mode', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const aniLink = new AniLink({ anilist: { baseUrl: server.url, onResponse: throwing('x'), diagnostics: 'silent' } });

    await aniLink.anilist.query.media({ id: 1 }, { diagnostics: 'warn' });
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('per-request hooks replace slot hooks key by key', async () => {
    const slotStart = vi.fn();
    const slotResponse = vi.fn();
    const requestStart = vi.fn();
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, onRequestStart: slotStart, onResponse: slotResponse },
    });

    await aniLink.anilist.query.media({ id: 1 }, { onRequestStart: requestStart });

    expect(requestStart).toHaveBeenCalledTimes(1);
    expect(slotStart).not.toHaveBeenCalled();
    expect(slotResponse).toHaveBeenCalledTimes(1);
  });

  it('hooks never fire for the other provider', async () => {
    const anilistHooks = recordingHooks();
    const malHooks = recordingHooks();
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, ...anilistHooks.hooks },
      mal: { clientId: 'cid', baseUrl: server.url, ...malHooks.hooks },
    });

    await aniLink.mal.anime.get({ id: 1 });
    expect(anilistHooks.calls).toEqual([]);
    expect(summary(malHooks.calls)).toEqual(['onRequestStart#1', 'onResponse#1']);

    malHooks.calls.length = 0;
    await aniLink.anilist.query.media({ id: 1 });
    expect(malHooks.calls).toEqual([]);
    expect(summary(anilistHooks.calls)).toEqual(['onRequestStart#1', 'onResponse#1']);
  });
});
