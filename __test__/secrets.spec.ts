// Secrets never leak (decisions D18): tokens, client secrets and refresh tokens appear in no
// error (message, fields, String(), stack, cause, raw error), no hook payload, no diagnostic,
// no console output and no transport snapshot, even with `exposeRawAxiosError: true`. The
// tokens are really in use: the test server receives them.
import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AniLink, AniLinkError } from 'anilink-api-wrapper';
import { closedPort, useTestServer } from './support/helpers';
import { rateLimitHeaders, type TestServer } from './support/test-server';

const ANILIST_TOKEN = 'al-token-S3CRET-a1b2c3d4';
const ANILIST_REFRESH_TOKEN = 'al-refresh-S3CRET-e5f6a7b8';
const ANILIST_CLIENT_SECRET = 'al-client-S3CRET-c9d0e1f2';
const MAL_TOKEN = 'mal-token-S3CRET-13579bdf';
const MAL_REFRESH_TOKEN = 'mal-refresh-S3CRET-2468ace0';
const MAL_CLIENT_SECRET = 'mal-client-S3CRET-fedcba98';
const SECRETS = [
  ANILIST_TOKEN,
  ANILIST_REFRESH_TOKEN,
  ANILIST_CLIENT_SECRET,
  MAL_TOKEN,
  MAL_REFRESH_TOKEN,
  MAL_CLIENT_SECRET,
];
/** Every secret shares this marker, so a partial leak (a truncated token) is caught too. */
const SECRET_MARKER = 'S3CRET';

const CONSOLE_METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;

/** Every way a caller might print or serialise a value. */
function renderings(value: unknown): string[] {
  const out = [inspect(value, { depth: Infinity, showHidden: true, getters: true })];
  try {
    out.push(JSON.stringify(value) ?? '');
  } catch {
    // not serialisable (a cycle): inspect above still covers it
  }
  if (value instanceof Error) {
    out.push(String(value), value.stack ?? '', JSON.stringify({ ...value }));
    for (const key of Object.getOwnPropertyNames(value))
      out.push(inspect((value as any)[key], { depth: Infinity, showHidden: true }));
  }
  return out;
}

function expectNoSecret(label: string, value: unknown): void {
  for (const text of renderings(value)) {
    expect(text.includes(SECRET_MARKER), `${label} leaks a secret:\n${text}`).toBe(false);
  }
}

let server: TestServer;
useTestServer((started) => {
  server = started;
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe.each([false, true])('with exposeRawAxiosError: %s', (exposeRawAxiosError) => {
  /** Everything observable: hook arguments, console output, errors, snapshots. */
  interface Observed {
    hookArguments: unknown[][];
    errors: unknown[];
  }

  function clientWithSecrets(observed: Observed, extra: Record<string, unknown> = {}): AniLink {
    const hooks = Object.fromEntries(
      [
        'onRequestStart',
        'onResponse',
        'onError',
        'onRetry',
        'onPace',
        'onCircuitOpen',
        'onCircuitClose',
        'onHookError',
      ].map((name) => [name, (...args: unknown[]) => observed.hookArguments.push([name, ...args])]),
    );
    const transport = {
      exposeRawAxiosError,
      retry: { maxRetries: 1, baseDelayMs: 5, jitter: false },
      circuitBreaker: { threshold: 50, cooldownMs: 1000 },
      retryBudget: { maxRetriesPerWindow: 10, windowMs: 60_000 },
      ...hooks,
      ...extra,
    };
    return new AniLink({
      anilist: {
        authToken: ANILIST_TOKEN,
        refreshToken: ANILIST_REFRESH_TOKEN,
        clientSecret: ANILIST_CLIENT_SECRET,
        baseUrl: server.url,
        ...transport,
      },
      mal: {
        accessToken: MAL_TOKEN,
        refreshToken: MAL_REFRESH_TOKEN,
        clientSecret: MAL_CLIENT_SECRET,
        baseUrl: server.url,
        ...transport,
      },
    });
  }

  async function collectError(observed: Observed, call: Promise<unknown>): Promise<void> {
    const error = await call.then(
      () => {
        throw new Error('expected the call to fail');
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AniLinkError);
    observed.errors.push(error);
  }

  it('no error, hook payload, console line or snapshot carries a secret', async () => {
    const printed = CONSOLE_METHODS.map((method) => vi.spyOn(console, method).mockImplementation(() => {}));
    const observed: Observed = { hookArguments: [], errors: [] };
    const aniLink = clientWithSecrets(observed);
    const resetSoon = Math.ceil(Date.now() / 1000) + 60;

    // Successes, one leaving a pacing deadline behind, and a throwing hook routed to console.warn.
    server.enqueue({ headers: rateLimitHeaders(90, 0, resetSoon), body: { data: { Media: { id: 1 } } } });
    await aniLink.anilist.query.media({ id: 1 }, { ignorePaceDeadline: true });
    server.enqueue({ body: { id: 1 } });
    await aniLink.mal.anime.get(
      { id: 1 },
      {
        onHookError: undefined,
        onResponse: () => {
          throw new Error('metrics down');
        },
      },
    );

    // Every failure path, through both providers.
    server.enqueue({ status: 500, body: { errors: [{ message: 'boom' }] } }, { status: 500, body: 'still down' });
    await collectError(observed, aniLink.anilist.query.media({ id: 1 }, { ignorePaceDeadline: true }));
    server.enqueue({ body: { data: null, errors: [{ message: 'Not Found.', status: 404 }] } });
    await collectError(observed, aniLink.anilist.query.media({ id: 1 }, { ignorePaceDeadline: true }));
    server.enqueue({ headers: { 'content-type': 'text/html' }, body: '<html>maintenance</html>' });
    await collectError(observed, aniLink.anilist.query.media({ id: 1 }, { ignorePaceDeadline: true }));
    server.enqueue({ status: 404, body: { error: 'not_found' } });
    await collectError(observed, aniLink.mal.anime.get({ id: 2 }));
    server.enqueue({ drop: 'mid-body' }, { drop: 'mid-body' });
    await collectError(observed, aniLink.mal.anime.get({ id: 3 }));
    server.enqueue({ hang: true });
    await collectError(observed, aniLink.mal.anime.get({ id: 4 }, { timeout: 100, retry: false }));
    const controller = new AbortController();
    server.enqueue({ hang: true });
    const aborted = aniLink.mal.anime.get({ id: 5 }, { signal: controller.signal });
    await server.waitForRequests(server.requests.length + 1);
    controller.abort();
    await collectError(observed, aborted);
    await collectError(observed, aniLink.anilist.query.media({ id: 1, nope: true } as never));
    await collectError(observed, aniLink.mal.anime.updateMyListStatus({ id: 1 } as never));
    const unreachable = new AniLink(undefined, {
      baseUrl: `http://127.0.0.1:${await closedPort()}`,
      retry: false,
      exposeRawAxiosError,
    });
    await collectError(observed, unreachable.anilist.query.media({ id: 1 }));

    // The tokens were really sent, so their absence everywhere else means something.
    const authorizations = server.requests.map((r) => r.headers.authorization);
    expect(authorizations).toContain(`Bearer ${ANILIST_TOKEN}`);
    expect(authorizations).toContain(`Bearer ${MAL_TOKEN}`);

    expect(observed.errors).toHaveLength(10);
    // The raw failure (api.md §3) is attached to errors of sent requests only when asked for.
    for (const error of observed.errors as (AniLinkError & { rawAxiosError?: unknown })[]) {
      if (error.code === 'VALIDATION_ERROR') continue;
      if (exposeRawAxiosError) {
        expect(error.rawAxiosError, error.code).toBeDefined();
        expect(error.cause, error.code).toBe(error.rawAxiosError);
      } else {
        expect('rawAxiosError' in error, error.code).toBe(false);
        expect(error.cause, error.code).toBeUndefined();
      }
    }
    observed.errors.forEach((error, i) => expectNoSecret(`error #${i} (${(error as AniLinkError).code})`, error));
    expect(observed.hookArguments.length).toBeGreaterThan(20);
    observed.hookArguments.forEach((args) => expectNoSecret(`${args[0]} payload`, args));

    const state = aniLink.getTransportState();
    expect(state.anilist.paceDeadlines).toHaveLength(1);
    expectNoSecret('getTransportState()', state);

    const consoleCalls = printed.flatMap((spy) => spy.mock.calls);
    expect(consoleCalls.length).toBeGreaterThan(0); // the throwing hook's diagnostic
    consoleCalls.forEach((args) => expectNoSecret('console output', args));
  });
});

describe('construction errors', () => {
  it.each([
    ['an unknown slot key', { anilist: { authToken: ANILIST_TOKEN, clientSecret: ANILIST_CLIENT_SECRET, x: 1 } }],
    ['an invalid option', { mal: { accessToken: MAL_TOKEN, refreshToken: MAL_REFRESH_TOKEN, timeout: -1 } }],
    ['a token that cannot be a header value', { anilist: { authToken: `bad\n${ANILIST_TOKEN}` } }],
  ])('%s: the TypeError does not echo the credentials', (_label, credentials) => {
    let thrown: unknown;
    try {
      new (AniLink as unknown as new (c: unknown) => AniLink)(credentials);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expectNoSecret('constructor error', thrown);
  });

  it('printing a client shows no credential', () => {
    const aniLink = new AniLink({
      anilist: { authToken: ANILIST_TOKEN, refreshToken: ANILIST_REFRESH_TOKEN, clientSecret: ANILIST_CLIENT_SECRET },
      mal: { accessToken: MAL_TOKEN, refreshToken: MAL_REFRESH_TOKEN, clientSecret: MAL_CLIENT_SECRET },
    });
    expectNoSecret('the AniLink instance', aniLink);
  });
});

it('the secrets list covers every kind of credential', () => {
  for (const secret of SECRETS) expect(secret).toContain(SECRET_MARKER);
});
