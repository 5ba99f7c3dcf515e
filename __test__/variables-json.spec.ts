// What a call sends for its variables, arguments and fields, and what it refuses
// (lib/json-text.cjs, decisions D33): values are read as JSON.stringify reads them (own
// enumerable string keys; undefined members left out, undefined items sent as null), and what
// JSON cannot carry is an AniLinkValidationError naming every problem by its path, before
// anything is sent.
import { describe, expect, it } from 'vitest';
import { AniLinkValidationError } from 'anilink-api-wrapper';
import { aniListClient, malClient, rejectionOf, useTestServer } from './support/helpers';
import type { TestServer } from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

const DOCUMENT = 'query ($v: Json) { Media(id: 1) { id } }';

/** The `variables` member of the one request `variables` made through `custom`. */
async function sentVariables(variables: unknown): Promise<unknown> {
  await aniListClient(server).anilist.custom(DOCUMENT, variables as Record<string, unknown>);
  expect(server.requests).toHaveLength(1);
  return (server.requests[0].json as { variables: unknown }).variables;
}

describe('variables are sent as JSON.stringify would write them', () => {
  it('undefined members are left out, undefined and hole items become null, nesting is kept', async () => {
    const sparse: unknown[] = [1];
    sparse[2] = 3; // a hole at index 1
    expect(
      await sentVariables({ a: undefined, b: [undefined, sparse], c: { d: null, e: true, f: 'x"\\\n' }, g: -0 }),
    ).toEqual({ b: [null, [1, null, 3]], c: { d: null, e: true, f: 'x"\\\n' }, g: 0 });
  });

  it('only own enumerable string keys are read: not inherited, non-enumerable or symbol keys', async () => {
    const object = Object.create({ inherited: 1 }) as Record<string, unknown>;
    object.own = 2;
    Object.defineProperty(object, 'hidden', { value: 3, enumerable: false });
    (object as Record<symbol, unknown>)[Symbol('s')] = 4;
    expect(await sentVariables(object)).toEqual({ own: 2 });
  });

  it('numbers are written as JSON.stringify writes them: fractions, exponents, integers past 2^53', async () => {
    const numbers = { a: 0.1, b: 1e-7, c: 2 ** 60, d: 1e21, e: -5, f: 5e-324 };
    await aniListClient(server).anilist.custom(DOCUMENT, numbers);
    expect(server.requests[0].body).toContain(`"variables":${JSON.stringify(numbers)}`);
  });

  it("custom variables keep the caller's key order, as JSON.stringify writes it", async () => {
    const variables = { zeta: 1, alpha: { y: 2, b: 3 } };
    await aniListClient(server).anilist.custom(DOCUMENT, variables);
    expect(server.requests[0].body).toContain(`"variables":${JSON.stringify(variables)}}`);
  });

  it("catalog operations send their variables in the caller's key order too, escapes as written", async () => {
    const variables = { type: 'ANIME', search: 'été "x"', id: 1 } as const;
    await aniListClient(server).anilist.query.media(variables);
    expect(server.requests[0].body).toContain(`"variables":${JSON.stringify(variables)}}`);
  });

  it('toJSON methods are called with their key, as JSON.stringify calls them (a Date becomes its ISO string)', async () => {
    const variables = {
      at: new Date(Date.UTC(2026, 11, 1)),
      tagged: { toJSON: (key: string) => `key ${key}` },
      list: [{ toJSON: (key: string) => Number(key) + 10 }],
    };
    expect(await sentVariables(variables)).toEqual({
      at: '2026-12-01T00:00:00.000Z',
      tagged: 'key tagged',
      list: [10],
    });
  });

  it('a key with a lone surrogate is sent with U+FFFD in its place', async () => {
    expect(await sentVariables({ 'k\ud800': 1 })).toEqual({ 'k\ufffd': 1 });
  });
});

describe('what JSON cannot carry is refused, every problem named by its path', () => {
  it('NaN, infinities, functions, symbols and bigints in custom variables', async () => {
    const error = await rejectionOf<AniLinkValidationError>(
      aniListClient(server).anilist.custom(DOCUMENT, {
        nan: Number.NaN,
        list: [Number.POSITIVE_INFINITY, () => 1],
        deep: { symbol: Symbol('s'), big: 1n, low: Number.NEGATIVE_INFINITY },
      } as never),
    );
    expect(error).toBeInstanceOf(AniLinkValidationError);
    expect(error.details).toEqual([
      'Invalid variables.nan: NaN. Expected a JSON value',
      'Invalid variables.list[0]: inf. Expected a JSON value',
      'Invalid variables.list[1]: a function. Expected a JSON value',
      'Invalid variables.deep.symbol: a symbol. Expected a JSON value',
      'Invalid variables.deep.big: a bigint. Expected a JSON value',
      'Invalid variables.deep.low: -inf. Expected a JSON value',
    ]);
    expect(error.message).toBe(`Request variables are invalid:\n${error.details.join('\n')}`);
    expect(server.requests).toHaveLength(0);
  });

  it('a cycle is nesting too deep, named where it passes the limit', async () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const error = await rejectionOf<AniLinkValidationError>(aniListClient(server).anilist.custom(DOCUMENT, cycle));
    expect(error.details).toEqual([
      `Invalid variables${'.self'.repeat(32)}: an object nested too deeply (a cycle?). Expected a JSON value`,
    ]);
    expect(server.requests).toHaveLength(0);
  });

  it('catalog arguments are named without a prefix, their problems listed before those of fields', async () => {
    const error = await rejectionOf<AniLinkValidationError>(
      aniListClient(server).anilist.query.media({ id: 1, search: Number.NaN } as never, { fields: 7 } as never),
    );
    expect(error.details).toEqual([
      'Invalid search: NaN. Expected a JSON value',
      'Invalid fields: 7. Expected an array of field paths (strings)',
    ]);
    const mal = await rejectionOf<AniLinkValidationError>(
      malClient(server).mal.anime.get({ id: 1, fields: [() => 1] } as never),
    );
    expect(mal.details).toEqual(['Invalid fields[0]: a function. Expected a JSON value']);
    expect(server.requests).toHaveLength(0);
  });
});
