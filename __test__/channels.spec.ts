// The diagnostics_channel events (issue 39; docs/hooks-and-diagnostics.md, "Observability"): a call is one trace on
// `anilink:call` with one `anilink:attempt:start`/`:end` pair per attempt, and no payload
// carries a secret.
import diagnosticsChannel from 'node:diagnostics_channel';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { aniListClient, clientFor, closedPort, useTestServer } from './support/helpers';
import { graphqlData, rateLimitHeaders, type TestServer } from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

const TOKEN = 'secret-token-39';

const require = createRequire(import.meta.url);
const { CHANNEL_NAMES } = require('../lib/channels.cjs') as { CHANNEL_NAMES: Record<string, string> };
type PayloadKeys = { required: string[]; optional: string[] };
/** The keys of each payload, as the binding declares them (src/wire/channels.rs), by the facade's name of its channel. */
const PAYLOAD_KEYS = require('../lib/native.cjs').addon().channelPayloads() as Record<string, PayloadKeys>;

type Published = { channel: string; message: Record<string, unknown> };

/** Subscribe to every anilink channel; the returned list fills as messages are published. */
function subscribeAll(): Published[] {
  const published: Published[] = [];
  const names = [
    'anilink:attempt:start',
    'anilink:attempt:end',
    'anilink:breaker',
    'anilink:admission',
    'anilink:shared-state',
  ] as const;
  for (const name of names) {
    const listener = (message: unknown) => published.push({ channel: name, message: { ...(message as object) } });
    diagnosticsChannel.subscribe(name, listener);
    unsubscribers.push(() => diagnosticsChannel.unsubscribe(name, listener));
  }
  const tracing = diagnosticsChannel.tracingChannel('anilink:call');
  const handlers = Object.fromEntries(
    (['start', 'end', 'asyncStart', 'asyncEnd', 'error'] as const).map((event) => [
      event,
      (message: unknown) => published.push({ channel: `call:${event}`, message: { ...(message as object) } }),
    ]),
  );
  tracing.subscribe(handlers);
  unsubscribers.push(() => tracing.unsubscribe(handlers));
  return published;
}

const unsubscribers: (() => void)[] = [];
afterEach(() => {
  for (const unsubscribe of unsubscribers.splice(0)) unsubscribe();
});

describe('diagnostics channels', () => {
  it('show a 503-then-200 call as one call with two attempts, one requestId and no token', async () => {
    server.enqueue({ status: 503, body: 'down' }, { body: graphqlData('Media', { id: 1 }) });
    const aniLink = clientFor(server, { authToken: TOKEN, retry: { baseDelayMs: 1, jitter: false } });
    const published = subscribeAll();

    await aniLink.anilist.query.media({ id: 1 });

    expect(published.map(({ channel }) => channel)).toEqual([
      'call:start',
      'call:end',
      'anilink:attempt:start',
      'anilink:attempt:end',
      'anilink:attempt:start',
      'anilink:attempt:end',
      'call:asyncStart',
      'call:asyncEnd',
    ]);
    const ends = published.filter(({ channel }) => channel === 'anilink:attempt:end').map(({ message }) => message);
    expect(ends.map(({ attempt, status, outcome }) => [attempt, status, outcome])).toEqual([
      [1, 503, 'retry'],
      [2, 200, 'success'],
    ]);
    expect(ends[0]).toMatchObject({ method: 'POST', code: 'API_ERROR', willRetry: true, retryDelayMs: 1 });
    expect(typeof ends[1].durationMs).toBe('number');
    const requestIds = new Set(
      published.filter(({ channel }) => channel.startsWith('anilink:')).map(({ message }) => message.requestId),
    );
    expect(requestIds.size).toBe(1);
    const settled = published.find(({ channel }) => channel === 'call:asyncEnd')?.message;
    expect(settled).toMatchObject({
      provider: 'anilist',
      operation: 'query.media',
      method: 'POST',
      url: server.url,
      status: 200,
      attempts: 2,
      retries: 1,
      cached: false,
      coalesced: false,
      requestId: [...requestIds][0],
    });
    expect(JSON.stringify(published.map(({ message }) => ({ ...message, call: undefined })))).not.toContain(TOKEN);
  });

  it('publish the failure on the error channel and give the context its code', async () => {
    server.enqueue({ status: 404, body: 'missing' });
    const aniLink = clientFor(server, { retry: false });
    const published = subscribeAll();

    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toThrow();

    const error = published.find(({ channel }) => channel === 'call:error')?.message;
    expect(error).toMatchObject({ code: 'API_ERROR', status: 404, attempts: 1, retries: 0 });
    expect(error?.error).toMatchObject({ code: 'API_ERROR' });
  });

  it('redact the userinfo of the URL', async () => {
    server.enqueue({ body: graphqlData('Media', { id: 1 }) });
    const withUserinfo = server.url.replace('http://', 'http://user:proxy-password@');
    const aniLink = clientFor({ url: withUserinfo } as TestServer);
    const published = subscribeAll();

    await aniLink.anilist.query.media({ id: 1 });

    const start = published.find(({ channel }) => channel === 'anilink:attempt:start')?.message;
    expect(start?.url).toBe(server.url.replace('http://', 'http://***@'));
    expect(JSON.stringify(published.map(({ message }) => ({ ...message, call: undefined })))).not.toContain(
      'proxy-password',
    );
  });

  it('call only the hooks the call has, while every event is published', async () => {
    server.enqueue({ status: 503, body: 'down' }, { body: graphqlData('Media', { id: 1 }) });
    const aniLink = clientFor(server, { retry: { baseDelayMs: 1, jitter: false } });
    const published = subscribeAll();
    const responses: unknown[] = [];
    const hookFailures: string[] = [];

    await aniLink.anilist.query.media(
      { id: 1 },
      { onResponse: (context) => responses.push(context), onHookError: (hookName) => hookFailures.push(hookName) },
    );

    expect(responses).toHaveLength(2);
    expect(hookFailures).toEqual([]);
    expect(published.filter(({ channel }) => channel === 'anilink:attempt:end')).toHaveLength(2);
  });

  it('publish a circuit opening, and the fast-fail that follows as an attempt without an answer', async () => {
    server.enqueue({ status: 503, body: 'down' });
    const aniLink = clientFor(server, { retry: false, circuitBreaker: { threshold: 1, cooldownMs: 60_000 } });
    const published = subscribeAll();

    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toThrow();
    await expect(aniLink.anilist.query.media({ id: 2 })).rejects.toThrow();

    const breaker = published.filter(({ channel }) => channel === 'anilink:breaker').map(({ message }) => message);
    expect(breaker).toEqual([expect.objectContaining({ host: new URL(server.url).host, state: 'open', failures: 1 })]);
    const ends = published.filter(({ channel }) => channel === 'anilink:attempt:end').map(({ message }) => message);
    expect(ends.map(({ status, outcome, code }) => [status, outcome, code])).toEqual([
      [503, 'failure', 'API_ERROR'],
      [undefined, 'failure', 'CIRCUIT_OPEN_ERROR'],
    ]);
  });

  it('publish a circuit closing when its probe succeeds', async () => {
    const cooldownMs = 20;
    server.enqueue({ status: 503, body: 'down' }, { body: graphqlData('Media', { id: 2 }) });
    const aniLink = clientFor(server, { retry: false, circuitBreaker: { threshold: 1, cooldownMs } });
    const published = subscribeAll();

    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, cooldownMs + 5));
    await aniLink.anilist.query.media({ id: 2 });

    const breaker = published.filter(({ channel }) => channel === 'anilink:breaker').map(({ message }) => message);
    const host = new URL(server.url).host;
    expect(breaker).toEqual([
      expect.objectContaining({ host, state: 'open', failures: 1 }),
      expect.objectContaining({ host, state: 'closed' }),
    ]);
    expect(breaker[1]).not.toHaveProperty('failures');
  });

  it('publish a pacing wait on anilink:admission and add it to the call', async () => {
    const resetInMs = 300;
    server.enqueue(
      { headers: rateLimitHeaders(90, 0, (Date.now() + resetInMs) / 1000), body: graphqlData('Media', { id: 1 }) },
      { body: graphqlData('Media', { id: 1 }) },
    );
    const aniLink = clientFor(server);
    await aniLink.anilist.query.media({ id: 1 });
    const published = subscribeAll();

    await aniLink.anilist.query.media({ id: 2 });

    const waits = published.filter(({ channel }) => channel === 'anilink:admission').map(({ message }) => message);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({ attempt: 1, aborted: false });
    expect(waits[0].waitMs).toBeGreaterThan(0);
    const settled = published.find(({ channel }) => channel === 'call:asyncEnd')?.message;
    expect(settled?.pacedMs).toBe(waits[0].waitMs);
  });

  it('publish a shared-state fallback with the Redis address and without its password', async () => {
    const port = await closedPort();
    server.enqueue({ body: graphqlData('Media', { id: 1 }) });
    const aniLink = aniListClient(server, {
      sharedState: { redis: `redis://user:hunter2@127.0.0.1:${port}`, timeoutMs: 1_000 },
      diagnostics: 'silent',
    });
    const published = subscribeAll();

    await aniLink.anilist.query.media({ id: 1 });

    const switches = published
      .filter(({ channel }) => channel === 'anilink:shared-state')
      .map(({ message }) => message);
    expect(switches).toEqual([
      expect.objectContaining({
        host: new URL(server.url).host,
        redis: `127.0.0.1:${port}`,
        state: 'fallback',
        code: 'SHARED_STATE_UNAVAILABLE',
      }),
    ]);
    expect(JSON.stringify(published.map(({ message }) => ({ ...message, call: undefined })))).not.toContain('hunter2');
  });
});

describe('what a subscriber does to a published object', () => {
  /** Subscribe `tamper` to `anilink:attempt:start` (given the call context) or to the call's `start`. */
  function tamperWith(on: 'attempt' | 'call', tamper: (context: Record<string, unknown>) => void): void {
    if (on === 'attempt') {
      const listener = (message: unknown) => tamper((message as { call: Record<string, unknown> }).call);
      diagnosticsChannel.subscribe('anilink:attempt:start', listener);
      unsubscribers.push(() => diagnosticsChannel.unsubscribe('anilink:attempt:start', listener));
      return;
    }
    const tracing = diagnosticsChannel.tracingChannel('anilink:call');
    const handlers = { start: (context: unknown) => tamper(context as Record<string, unknown>) };
    tracing.subscribe(handlers);
    unsubscribers.push(() => tracing.unsubscribe(handlers));
  }

  const throwingSetters = (context: Record<string, unknown>) => {
    for (const key of [...Object.keys(context), 'result', 'error']) {
      Object.defineProperty(context, key, {
        configurable: true,
        get: () => {
          throw new Error(`subscriber getter ${key}`);
        },
        set: () => {
          throw new Error(`subscriber setter ${key}`);
        },
      });
    }
  };
  const deleteAll = (context: Record<string, unknown>) => {
    for (const key of Object.keys(context)) delete context[key];
  };

  it.each([
    ['freezes the context on anilink:attempt:start', 'attempt', Object.freeze],
    ['freezes the context on anilink:call start', 'call', Object.freeze],
    ['defines throwing accessors on the context', 'attempt', throwingSetters],
    ['defines throwing accessors on the context at call start', 'call', throwingSetters],
    ['deletes the context properties', 'attempt', deleteAll],
  ] as const)('a subscriber that %s changes no outcome', async (_label, on, tamper) => {
    tamperWith(on, tamper);
    const ends: unknown[] = [];
    const listener = (message: unknown) => ends.push((message as { outcome: string }).outcome);
    diagnosticsChannel.subscribe('anilink:attempt:end', listener);
    unsubscribers.push(() => diagnosticsChannel.unsubscribe('anilink:attempt:end', listener));
    const aniLink = clientFor(server, { retry: { baseDelayMs: 1, jitter: false } });

    server.enqueue({ status: 503, body: 'down' }, { body: graphqlData('Media', { id: 1 }) });
    await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    server.enqueue({ status: 404, body: 'missing' });
    await expect(aniLink.anilist.query.media({ id: 2 }, { retry: false })).rejects.toMatchObject({
      code: 'API_ERROR',
      status: 404,
    });

    expect(ends).toEqual(['retry', 'success', 'failure']);
  });

  it('a subscriber that deletes from the context does not corrupt what the facade writes to it later', async () => {
    let deleted = false;
    tamperWith('attempt', (context) => {
      if (!deleted) deleteAll(context);
      deleted = true;
    });
    const settled: Record<string, unknown>[] = [];
    const tracing = diagnosticsChannel.tracingChannel('anilink:call');
    const handlers = { asyncEnd: (context: unknown) => settled.push({ ...(context as object) }) };
    tracing.subscribe(handlers);
    unsubscribers.push(() => tracing.unsubscribe(handlers));
    server.enqueue({ status: 503, body: 'down' }, { body: graphqlData('Media', { id: 1 }) });

    await clientFor(server, { retry: { baseDelayMs: 1, jitter: false } }).anilist.query.media({ id: 1 });

    expect(settled).toEqual([expect.objectContaining({ attempts: 2, retries: 1, status: 200, result: { id: 1 } })]);
  });
});

describe('channel payloads', () => {
  /** The facade's name of a published channel (`call` for the `anilink:call` context), as the contract keys them. */
  const payloadOf = (channel: string) =>
    channel.startsWith('call:') ? 'call' : Object.keys(CHANNEL_NAMES).find((key) => CHANNEL_NAMES[key] === channel);

  it('carry exactly the keys their Rust declarations list, every one of them published at least once', async () => {
    const published = subscribeAll();
    const retry = { baseDelayMs: 1, jitter: false };

    // A 503-then-200 call.
    server.enqueue({ status: 503, body: 'down' }, { body: graphqlData('Media', { id: 1 }) });
    await clientFor(server, { retry }).anilist.query.media({ id: 1 });
    // A breaker opening, then its fast-fail.
    server.enqueue({ status: 503, body: 'down' });
    const broken = clientFor(server, { retry: false, circuitBreaker: { threshold: 1, cooldownMs: 60_000 } });
    await expect(broken.anilist.query.media({ id: 1 })).rejects.toThrow();
    await expect(broken.anilist.query.media({ id: 2 })).rejects.toThrow();
    // An admission wait.
    server.enqueue(
      { headers: rateLimitHeaders(90, 0, (Date.now() + 300) / 1000), body: graphqlData('Media', { id: 1 }) },
      { body: graphqlData('Media', { id: 1 }) },
    );
    const paced = clientFor(server);
    await paced.anilist.query.media({ id: 1 });
    await paced.anilist.query.media({ id: 2 });
    // A shared-state fallback.
    server.enqueue({ body: graphqlData('Media', { id: 1 }) });
    const redis = `redis://127.0.0.1:${await closedPort()}`;
    await aniListClient(server, {
      sharedState: { redis, timeoutMs: 1_000 },
      diagnostics: 'silent',
    }).anilist.query.media({ id: 1 });
    // A coalesced read, and a retry the retry budget stops.
    server.enqueue({ delayMs: 50, body: graphqlData('Media', { id: 1 }) });
    const coalescing = aniListClient(server, { coalesce: true, rateLimitFloor: 0 });
    await Promise.all([coalescing.anilist.query.media({ id: 1 }), coalescing.anilist.query.media({ id: 1 })]);
    server.enqueue({ status: 503, body: 'down' }, { status: 503, body: 'down' });
    const budgeted = clientFor(server, {
      retry: { ...retry, maxRetries: 2 },
      retryBudget: { maxRetriesPerWindow: 1, windowMs: 60_000 },
    });
    await expect(budgeted.anilist.query.media({ id: 1 })).rejects.toThrow();

    const seen = new Map<string, Set<string>>();
    const conform = (payload: string | undefined, message: Record<string, unknown>) => {
      const declared = PAYLOAD_KEYS[payload ?? ''];
      expect(declared, `a contract entry for ${payload}`).toBeDefined();
      const keys = Object.keys(message);
      expect(keys, payload).toEqual(expect.arrayContaining(declared.required));
      expect([...declared.required, ...declared.optional], payload).toEqual(expect.arrayContaining(keys));
      for (const key of keys) seen.set(payload ?? '', (seen.get(payload ?? '') ?? new Set()).add(key));
    };
    for (const { channel, message } of published) {
      const payload = payloadOf(channel);
      conform(payload, message);
      if (payload !== 'call') conform('call', message.call as Record<string, unknown>);
    }
    expect(Object.keys(PAYLOAD_KEYS).sort()).toEqual(['call', ...Object.keys(CHANNEL_NAMES)].sort());
    for (const [payload, { required, optional }] of Object.entries(PAYLOAD_KEYS)) {
      expect([...(seen.get(payload) ?? [])].sort(), payload).toEqual([...required, ...optional].sort());
    }
  });
});
