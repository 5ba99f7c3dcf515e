// Transport option validation (decisions D10) and per-request merging (api.md §3, transport.md
// 1.1). A defined but invalid value is a TypeError naming the option and its rule: thrown at
// construction for constructor options, a rejection before any I/O or hook for per-request
// options. Per-request options replace slot options key by key.
import { describe, expect, it, vi } from 'vitest';
import { AniLink } from 'anilink-api-wrapper';
import { useTestServer } from './support/helpers';
import { graphqlData, type TestServer } from './support/test-server';

interface InvalidCase {
  option: string;
  value: unknown;
  /** Words the message must contain: the option's name and its rule. */
  mentions: string[];
}

const HOOK_KEYS = [
  'onError',
  'onRetry',
  'onRequestStart',
  'onResponse',
  'onPace',
  'onHookError',
  'onCircuitOpen',
  'onCircuitClose',
];
const BOOLEAN_KEYS = [
  'exposeRawAxiosError',
  'paceWithRateLimit',
  'ignorePaceDeadline',
  'allowPartialData',
  'bypassResponseCache',
  'coalesce',
];

/** One or more violations of every rule D10 lists. */
const INVALID: InvalidCase[] = [
  ...[-1, Number.NaN, Number.POSITIVE_INFINITY, '5', null].map((value) => ({
    option: 'timeout',
    value,
    mentions: ['timeout must be a finite number greater than or equal to 0'],
  })),
  ...[1.5, -1, Number.NaN, '1'].map((value) => ({
    option: 'rateLimitFloor',
    value,
    mentions: ['rateLimitFloor must be a finite, non-negative integer (0 disables floor-based pacing)'],
  })),
  ...['yes', 1, null].map((value) => ({ option: 'retry', value, mentions: ['retry'] })),
  ...[-1, 1.5, Number.POSITIVE_INFINITY, '2'].map((value) => ({
    option: 'retry',
    value: { maxRetries: value },
    mentions: ['maxRetries', 'integer'],
  })),
  ...[-1, Number.NaN, Number.POSITIVE_INFINITY].map((value) => ({
    option: 'retry',
    value: { baseDelayMs: value },
    mentions: ['baseDelayMs', 'finite'],
  })),
  ...[-5, Number.POSITIVE_INFINITY].map((value) => ({
    option: 'retry',
    value: { maxDelayMs: value },
    mentions: ['maxDelayMs', 'finite'],
  })),
  ...[[99], [600], [503.5], ['503'], 503].map((value) => ({
    option: 'retry',
    value: { retryOnStatus: value },
    mentions: ['retryOnStatus', '599'],
  })),
  { option: 'retry', value: { retryOnNetworkError: 'yes' }, mentions: ['retryOnNetworkError', 'boolean'] },
  { option: 'retry', value: { jitter: 1 }, mentions: ['jitter', 'boolean'] },
  ...[-1, 1.5].map((value) => ({
    option: 'retryBudget',
    value: { maxRetriesPerWindow: value, windowMs: 1000 },
    mentions: ['maxRetriesPerWindow', 'integer'],
  })),
  ...[0, -1, Number.POSITIVE_INFINITY].map((value) => ({
    option: 'retryBudget',
    value: { maxRetriesPerWindow: 1, windowMs: value },
    mentions: ['windowMs', 'finite'],
  })),
  ...[0, 1.5, -1].map((value) => ({
    option: 'circuitBreaker',
    value: { threshold: value, cooldownMs: 100 },
    mentions: ['threshold', 'integer'],
  })),
  ...[-1, Number.NaN].map((value) => ({
    option: 'circuitBreaker',
    value: { threshold: 1, cooldownMs: value },
    mentions: ['cooldownMs', 'finite'],
  })),
  ...[1.5, -1, Number.POSITIVE_INFINITY].map((value) => ({
    option: 'maxSockets',
    value,
    mentions: ['maxSockets', 'integer'],
  })),
  ...[-1, 0.5].map((value) => ({ option: 'maxFreeSockets', value, mentions: ['maxFreeSockets', 'integer'] })),
  ...[-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '5', null, true].map((value) => ({
    option: 'maxRedirects',
    value,
    mentions: ['maxRedirects must be an integer greater than or equal to 0 (0 returns a redirect as its status error)'],
  })),
  {
    option: 'diagnostics',
    value: 'loud',
    mentions: ['Invalid diagnostics "loud": it must be one of "warn", "hook", or "silent".'],
  },
  ...HOOK_KEYS.map((option) => ({ option, value: 'not a function', mentions: [option, 'function'] })),
  ...[{}, 'signal'].map((value) => ({ option: 'signal', value, mentions: ['signal', 'AbortSignal'] })),
  ...BOOLEAN_KEYS.map((option) => ({ option, value: 'true', mentions: [option, 'boolean'] })),
];

/** Values at the edge of each rule that must be accepted, not coerced or rejected. */
const VALID: Record<string, unknown>[] = [
  { timeout: 0 },
  { timeout: 1500.5 },
  { rateLimitFloor: 0 },
  { degradedLimit: 1 },
  { degradedLimit: 0 },
  { degradedLimit: false },
  { retry: true },
  { retry: false },
  {
    retry: {
      maxRetries: 0,
      baseDelayMs: 0,
      maxDelayMs: 0,
      retryOnStatus: [],
      retryOnNetworkError: false,
      jitter: false,
    },
  },
  { retry: { maxRetries: 2, retryOnStatus: [100, 599], baseDelayMs: undefined } },
  { retryBudget: { maxRetriesPerWindow: 0, windowMs: 0.5 } },
  { circuitBreaker: { threshold: 1, cooldownMs: 0 } },
  { maxSockets: 1 },
  { maxFreeSockets: 0 },
  { maxRedirects: 0 },
  { maxRedirects: 20 },
  { diagnostics: 'warn' },
  { diagnostics: 'hook' },
  { diagnostics: 'silent' },
  { signal: new AbortController().signal },
  Object.fromEntries(HOOK_KEYS.map((key) => [key, () => {}])),
  Object.fromEntries(BOOLEAN_KEYS.map((key) => [key, false])),
  { timeout: undefined, retry: undefined, diagnostics: undefined, onError: undefined },
];

function describeCase({ option, value }: InvalidCase): string {
  const shown = typeof value === 'number' || value === null ? String(value) : JSON.stringify(value);
  return `${option}: ${shown}`;
}

function expectNamesRule(error: unknown, mentions: string[]): void {
  expect(error).toBeInstanceOf(TypeError);
  for (const word of mentions) expect((error as Error).message).toContain(word);
}

/** Bypass the typings, to hand the API what a JavaScript caller could. */
const Untyped = AniLink as unknown as new (...args: unknown[]) => AniLink;
type LooseOptions = Record<string, unknown>;

let server: TestServer;
useTestServer((started) => {
  server = started;
});

describe('constructor options', () => {
  it.each(INVALID.map((c) => [describeCase(c), c] as const))(
    'throws a TypeError at construction for %s',
    (_name, c) => {
      for (const build of [
        () => new Untyped({ anilist: { baseUrl: server.url, [c.option]: c.value } }),
        () => new Untyped({ mal: { clientId: 'cid', baseUrl: server.url, [c.option]: c.value } }),
        () => new Untyped(undefined, { baseUrl: server.url, [c.option]: c.value }),
      ]) {
        let thrown: unknown;
        try {
          build();
        } catch (error) {
          thrown = error;
        }
        expectNamesRule(thrown, c.mentions);
      }
      expect(server.requests).toHaveLength(0);
    },
  );

  it.each(VALID.map((options) => [Object.keys(options).join(', '), options] as const))(
    'accepts valid values (%s)',
    async (_name, options) => {
      const aniLink = new Untyped({
        anilist: { baseUrl: server.url, ...options },
        mal: { clientId: 'cid', ...options },
      });
      await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    },
  );
});

describe('per-request options', () => {
  function clientWithHooks() {
    const hookCalls = vi.fn();
    const hooks = Object.fromEntries(HOOK_KEYS.map((key) => [key, (...args: unknown[]) => hookCalls(key, ...args)]));
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, ...hooks },
      mal: { clientId: 'cid', baseUrl: server.url, ...hooks },
    });
    return { aniLink, hookCalls };
  }

  it.each(INVALID.map((c) => [describeCase(c), c] as const))(
    'rejects before any I/O or hook for %s',
    async (_name, c) => {
      const { aniLink, hookCalls } = clientWithHooks();
      const requestOptions = { [c.option]: c.value } as LooseOptions;

      const anilistCall = aniLink.anilist.query.media({ id: 1 }, requestOptions as never);
      const malCall = aniLink.mal.anime.get({ id: 1 }, requestOptions as never);
      const customCall = aniLink.anilist.custom('{ Media(id: 1) { id } }', undefined, requestOptions as never);
      for (const call of [anilistCall, malCall, customCall]) {
        expectNamesRule(
          await call.then(
            () => 'resolved',
            (error: unknown) => error,
          ),
          c.mentions,
        );
      }

      // A valid call afterwards (with the hooks it would fire switched off) is the only request the
      // server got, and no hook ever ran.
      await aniLink.anilist.query.media({ id: 1 }, { onRequestStart: undefined, onResponse: undefined });
      expect(server.requests).toHaveLength(1);
      expect(hookCalls).not.toHaveBeenCalled();
    },
  );

  it('an invalid option is a rejection, never a synchronous throw', async () => {
    const aniLink = new AniLink(undefined, { baseUrl: server.url });
    let pending: Promise<unknown> | undefined;
    expect(() => {
      pending = aniLink.anilist.query.media({ id: 1 }, { timeout: -1 });
    }).not.toThrow();
    await expect(pending).rejects.toThrow(TypeError);
  });
});

describe('merging per-request options over slot options', () => {
  it('a per-request retry policy replaces the slot policy', async () => {
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, retry: { maxRetries: 5, baseDelayMs: 5, jitter: false } },
    });
    server.setDefault({ status: 503, body: 'down' });

    await expect(
      aniLink.anilist.query.media({ id: 1 }, { retry: { maxRetries: 1, baseDelayMs: 5, jitter: false } }),
    ).rejects.toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(2);

    server.reset();
    server.setDefault({ status: 503, body: 'down' });
    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(6);
  });

  it('fields the per-request policy leaves out come from the built-in defaults, not the slot', async () => {
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, retry: { maxRetries: 3, baseDelayMs: 5, jitter: false, retryOnStatus: [418] } },
    });
    server.setDefault({ status: 418, body: 'teapot' });

    // The slot policy retries 418 ...
    await expect(aniLink.anilist.query.media({ id: 1 })).rejects.toMatchObject({ status: 418 });
    expect(server.requests).toHaveLength(4);

    // ... a per-request policy without retryOnStatus falls back to the default list, which does not.
    server.reset();
    server.setDefault({ status: 418, body: 'teapot' });
    await expect(
      aniLink.anilist.query.media({ id: 1 }, { retry: { maxRetries: 3, baseDelayMs: 5, jitter: false } }),
    ).rejects.toMatchObject({ status: 418 });
    expect(server.requests).toHaveLength(1);
  });

  it('keys the request does not give keep their slot values', async () => {
    const aniLink = new AniLink({ anilist: { baseUrl: server.url, timeout: 50, retry: false } });
    server.enqueue({ delayMs: 400, body: graphqlData('Media', { id: 1 }) });

    await expect(aniLink.anilist.query.media({ id: 1 }, { maxSockets: 3 })).rejects.toMatchObject({
      code: 'TIMEOUT_ERROR',
      timeoutMs: 50,
    });
  });

  it('an explicit undefined in the request overrides the slot value', async () => {
    const slotHook = vi.fn();
    const aniLink = new AniLink({ anilist: { baseUrl: server.url, onRequestStart: slotHook, timeout: 50 } });
    server.enqueue({ delayMs: 200, body: graphqlData('Media', { id: 1 }) });

    await expect(
      aniLink.anilist.query.media({ id: 1 }, { onRequestStart: undefined, timeout: undefined }),
    ).resolves.toEqual({ id: 1 });
    expect(slotHook).not.toHaveBeenCalled();
  });
});

describe('degradedLimit (a slot option, decisions D42)', () => {
  it('is a TypeError naming the option and the fix in a slot, and refused per request', async () => {
    for (const value of [-1, 2.5, Number.NaN, '30', true, null]) {
      for (const build of [
        () => new Untyped({ anilist: { baseUrl: server.url, degradedLimit: value } }),
        () => new Untyped(undefined, { baseUrl: server.url, degradedLimit: value }),
      ]) {
        expect(build, String(value)).toThrow(TypeError);
        expect(build, String(value)).toThrow(
          'degradedLimit must be an integer greater than or equal to 1 (the quota the upstream enforces while degraded), or false or 0 to turn it off',
        );
      }
    }
    const aniLink = new AniLink(undefined, { baseUrl: server.url });
    const refused = aniLink.anilist.query.media({ id: 1 }, { degradedLimit: 30 } as never);
    await expect(refused).rejects.toThrow(TypeError);
    await expect(refused).rejects.toThrow(/degradedLimit is a slot option and cannot be given per request/);
    expect(server.requests).toHaveLength(0);
  });
});
