// Per-request options and variables fail clearly (decisions D33): an unknown key is reported
// once through the diagnostics channel and ignored; a throwing getter or Proxy rejects the call
// (TypeError for options, AniLinkValidationError for variables) naming the path, with the thrown
// value as `cause`, never UNKNOWN_ERROR and never a synchronous throw; lone surrogates are a
// validation error; ResponseCache methods reject a non-string key with a TypeError.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AniLinkValidationError, ResponseCache } from 'anilink-api-wrapper';
import { aniListClient, malClient, rejectionOf, useTestServer } from './support/helpers';
import type { TestServer } from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** A call that must return a promise (never throw synchronously) and reject. */
async function rejectionOfCall(call: () => Promise<unknown>): Promise<unknown> {
  let promise: Promise<unknown>;
  expect(() => {
    promise = call();
  }).not.toThrow();
  return rejectionOf(promise!);
}

describe('unknown per-request option keys', () => {
  it('are reported once per key with console.warn, naming the valid keys, and ignored', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const client = aniListClient(server);
    await expect(client.anilist.query.media({ id: 1 }, { timout: 5 } as never)).resolves.toEqual({ id: 1 });
    await expect(client.anilist.query.media({ id: 1 }, { timout: 5 } as never)).resolves.toEqual({ id: 1 });
    expect(warn).toHaveBeenCalledTimes(1);
    const record = JSON.parse(String(warn.mock.calls[0][0]));
    expect(record).toMatchObject({ source: 'anilink', kind: 'unknown-option', option: 'timout' });
    expect(record.message).toContain('Unknown request option "timout" was ignored. Valid keys are: timeout, signal,');
    expect(record.message).toContain(
      'maxResponseBytes, proxy, rateLimit, coalesce, maxRedirects, sharedState, degradedLimit, fields.',
    );
  });

  it('go to onHookError when there is one, and stay quiet in "silent" mode', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const seen: [string, Error][] = [];
    const observed = aniListClient(server, { onHookError: (hook, error) => seen.push([hook, error]) });
    await observed.anilist.query.media({ id: 1 }, { retyr: false } as never);
    expect(seen).toHaveLength(1);
    expect(seen[0][0]).toBe('options');
    expect(seen[0][1].message).toContain('"retyr"');
    await aniListClient(server, { diagnostics: 'silent' }).anilist.query.media({ id: 1 }, {
      onErorr: () => {},
    } as never);
    expect(warn).not.toHaveBeenCalled();
  });

  it('a console.warn that throws does not fail the call', async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {
      throw new Error('warn refused');
    });
    await expect(aniListClient(server).anilist.query.media({ id: 1 }, { tiemout: 5 } as never)).resolves.toEqual({
      id: 1,
    });
  });
});

describe('options that throw while read', () => {
  const boom = new Error('getter boom');

  it('a throwing getter rejects with a TypeError naming the key, the thrown value as cause', async () => {
    const options = {
      get timeout(): number {
        throw boom;
      },
    };
    const error = (await rejectionOfCall(() =>
      aniListClient(server).anilist.query.media({ id: 1 }, options),
    )) as TypeError;
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toContain('options.timeout could not be read');
    expect(error.cause).toBe(boom);
    expect(server.requests).toHaveLength(0);
  });

  it('a nested throwing getter and a Proxy whose traps throw reject the same way', async () => {
    const nested = {
      retry: {
        get maxRetries(): number {
          throw boom;
        },
      },
    };
    const nestedError = (await rejectionOfCall(() =>
      aniListClient(server).anilist.query.media({ id: 1 }, nested as never),
    )) as TypeError;
    expect(nestedError).toBeInstanceOf(TypeError);
    expect(nestedError.message).toContain('options.retry.maxRetries could not be read');
    expect(nestedError.cause).toBe(boom);

    const trap = new Proxy(
      {},
      {
        ownKeys: () => {
          throw boom;
        },
      },
    );
    const trapError = (await rejectionOfCall(() =>
      malClient(server).mal.anime.get({ id: 1 }, trap as never),
    )) as TypeError;
    expect(trapError).toBeInstanceOf(TypeError);
    expect(trapError.cause).toBe(boom);

    const revocable = Proxy.revocable({}, {});
    revocable.revoke();
    const revokedError = await rejectionOfCall(() =>
      aniListClient(server).anilist.query.media({ id: 1 }, revocable.proxy as never),
    );
    expect(revokedError).toBeInstanceOf(TypeError);
    expect(server.requests).toHaveLength(0);
  });

  it('ResponseCache options that throw while read are a TypeError naming the path, the thrown value as cause', () => {
    const revocable = Proxy.revocable({}, {});
    revocable.revoke();
    const thrower = () => {
      throw boom;
    };
    const cases: Array<[options: unknown, path: string]> = [
      [new Proxy({}, { ownKeys: thrower }), 'options'],
      [
        {
          get maxEntries(): number {
            return thrower();
          },
        },
        'options.maxEntries',
      ],
      [revocable.proxy, 'options'],
    ];
    for (const [options, path] of cases) {
      let thrown: unknown;
      try {
        new ResponseCache(options as never);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(TypeError);
      expect((thrown as TypeError).message).toBe(
        `${path} could not be read: a getter or Proxy threw (the thrown value is the cause)`,
      );
      expect((thrown as TypeError).cause).toBeDefined();
    }
  });
});

describe('signals that throw or refuse (D33)', () => {
  const boom = new Error('signal boom');
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const signalWithThrowingAborted = Object.defineProperty(new AbortController().signal, 'aborted', {
    get() {
      throw boom;
    },
  });
  const cases: [string, () => unknown, RegExp][] = [
    ['a revoked Proxy', () => revoked.proxy, /signal/],
    [
      'a signal whose `aborted` getter throws',
      () => signalWithThrowingAborted,
      /signal its `aborted` could not be read/,
    ],
    [
      'an object that only inherits from AbortSignal',
      () => Object.create(AbortSignal.prototype),
      /signal its `aborted` could not be read/,
    ],
    [
      'a Proxy of a signal whose get trap throws',
      () =>
        new Proxy(new AbortController().signal, {
          get() {
            throw boom;
          },
        }),
      /signal its `aborted` could not be read/,
    ],
    [
      'a Proxy whose getPrototypeOf trap throws',
      () =>
        new Proxy(new AbortController().signal, {
          getPrototypeOf() {
            throw boom;
          },
        }),
      /signal/,
    ],
  ];

  it.each(cases)(
    '%s rejects with a TypeError (never a synchronous throw) and sends nothing',
    async (_, signal, message) => {
      const error = (await rejectionOfCall(() =>
        aniListClient(server).anilist.query.media({ id: 1 }, { signal: signal() as AbortSignal }),
      )) as TypeError;
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toMatch(message);
      expect(server.requests).toHaveLength(0);
    },
  );

  it('a signal that refuses the abort listener fails the call before anything is sent', async () => {
    const signal = new AbortController().signal;
    signal.addEventListener = () => {
      throw boom;
    };
    const client = aniListClient(server);
    const error = (await rejectionOfCall(() => client.anilist.query.media({ id: 1 }, { signal }))) as TypeError;
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toContain('signal refused an abort listener');
    expect(error.cause).toBe(boom);
    // No request runs out of sight: the next call is the first one the server sees.
    await expect(client.anilist.query.media({ id: 2 })).resolves.toEqual({ id: 1 });
    expect(server.requests).toHaveLength(1);
  });

  it('a signal whose removeEventListener throws still lets the call settle', async () => {
    const signal = new AbortController().signal;
    signal.removeEventListener = () => {
      throw boom;
    };
    await expect(aniListClient(server).anilist.query.media({ id: 1 }, { signal })).resolves.toEqual({ id: 1 });
  });
});

describe('variables that throw while read', () => {
  it('reject with AniLinkValidationError naming the path, the thrown value as cause', async () => {
    const thrown = Object.create(null);
    const variables = {
      get id(): number {
        throw thrown;
      },
    };
    const error = (await rejectionOfCall(() =>
      aniListClient(server).anilist.query.media(variables),
    )) as AniLinkValidationError;
    expect(error).toBeInstanceOf(AniLinkValidationError);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details[0]).toContain('id could not be read');
    expect(error.cause).toBe(thrown);

    const deep = {
      search: 'x',
      genre_in: new Proxy(['a'], {
        get: () => {
          throw new Error('trap');
        },
      }),
    };
    const custom = (await rejectionOfCall(() =>
      aniListClient(server).anilist.custom('query ($search: String) { Media(search: $search) { id } }', deep),
    )) as AniLinkValidationError;
    expect(custom).toBeInstanceOf(AniLinkValidationError);
    expect(custom.details[0]).toContain('variables.genre_in');
    expect(server.requests).toHaveLength(0);
  });

  it('a custom document whose conversion to a string throws rejects naming the document, the thrown value as cause', async () => {
    const thrown = new Error('no text');
    const document = {
      toString(): string {
        throw thrown;
      },
    };
    const client = aniListClient(server);
    for (const call of [
      () => client.anilist.custom(document as never, { id: 1 }),
      () => client.anilist.customPage(document as never, 'media'),
    ]) {
      const error = (await rejectionOfCall(call)) as AniLinkValidationError;
      expect(error).toBeInstanceOf(AniLinkValidationError);
      expect(error.details).toEqual([
        'document could not be read: converting it to a string threw (the thrown value is the cause)',
      ]);
      expect(error.cause).toBe(thrown);
    }
    expect(server.requests).toHaveLength(0);
  });

  it('a lone surrogate is a validation error, a paired one and U+FFFD itself are sent', async () => {
    const client = aniListClient(server);
    const error = await rejectionOf<AniLinkValidationError>(client.anilist.query.media({ search: 'a\ud800b' }));
    expect(error).toBeInstanceOf(AniLinkValidationError);
    expect(error.details[0]).toContain('lone surrogate');
    expect(server.requests).toHaveLength(0);
    await client.anilist.query.media({ search: '\ud83d\ude00 \ufffd' });
    expect((server.requests[0].json as { variables: { search: string } }).variables.search).toBe('\ud83d\ude00 \ufffd');
  });
});

describe('ResponseCache keys', () => {
  it('a Symbol or a number where a string belongs is a TypeError naming the argument', () => {
    const cache = new ResponseCache();
    expect(() => cache.get(Symbol('m') as never, 'http://h/')).toThrow(
      new TypeError('ResponseCache: method must be a string (received a symbol).'),
    );
    expect(() => cache.delete('GET', 42 as never)).toThrow(
      new TypeError('ResponseCache: url must be a string (received a number).'),
    );
    expect(() => cache.deleteMatching(Symbol() as never)).toThrow(TypeError);
    expect(cache.get('GET', 'http://h/')).toBeUndefined();
  });
});
