// GraphQL envelopes are classified as JSON.parse reads the same bytes (decisions D29): any
// `errors` member that is not null and not [] fails the call whatever its entries look like,
// duplicate keys resolve to the last, any depth is read, and only an integer status 100–599
// counts for retries and the breaker.
import { describe, expect, it } from 'vitest';
import { AniLinkGraphQLError } from 'anilink-api-wrapper';
import { aniListClient, failureOf, mediaIdOf, useTestServer } from './support/helpers';
import type { TestServer } from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

/** Serve `bodies[id]` to the Media query with that id. */
function serveBodies(bodies: string[]): void {
  server.handle((req) => ({ headers: { 'content-type': 'application/json' }, body: bodies[mediaIdOf(req)] }));
}

type Expected = { code: 'API_ERROR' } | { code: 'GRAPHQL_ERROR'; status: number } | { value: unknown };

/** What JSON.parse says the call must do with `body`. */
function expectedOutcome(body: string): Expected {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { code: 'API_ERROR' };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { value: parsed };
  const envelope = parsed as { data?: unknown; errors?: unknown };
  const errors = envelope.errors;
  if (errors !== undefined && errors !== null && !(Array.isArray(errors) && errors.length === 0)) {
    const entries = Array.isArray(errors) ? errors : [];
    const status = entries
      .map((e) => (e !== null && typeof e === 'object' ? (e as { status?: unknown }).status : undefined))
      .find((s) => typeof s === 'number' && Number.isInteger(s) && s >= 100 && s <= 599);
    return { code: 'GRAPHQL_ERROR', status: (status as number | undefined) ?? 200 };
  }
  const data = envelope.data;
  if (data !== null && typeof data === 'object' && !Array.isArray(data) && Object.keys(data).length === 1) {
    return { value: Object.values(data)[0] };
  }
  return { value: parsed };
}

async function outcomeOf(call: Promise<unknown>): Promise<Expected> {
  try {
    return { value: await call };
  } catch (error) {
    const e = error as { code: string; status?: number };
    return e.code === 'GRAPHQL_ERROR'
      ? { code: 'GRAPHQL_ERROR', status: e.status as number }
      : ({ code: e.code } as Expected);
  }
}

/** A small seeded PRNG (mulberry32), so every run sends the same bodies. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Envelope-shaped JSON texts with hostile members, duplicates and, now and then, a broken byte. */
function randomBody(next: () => number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const scalars = [
    'null',
    'true',
    '0',
    '200',
    '429',
    '500',
    '503',
    '599',
    '600',
    '5e2',
    '500.5',
    '1e400',
    '-1',
    '""',
    '"m"',
    '"500"',
  ];
  const keys = ['data', 'errors', 'message', 'status', 'Media', 'x'];
  const value = (depth: number): string => {
    const roll = next();
    if (depth > 3 || roll < 0.4) return pick(scalars);
    const size = Math.floor(next() * 4);
    if (roll < 0.7) {
      return `{${Array.from({ length: size }, () => `"${pick(keys)}":${value(depth + 1)}`).join(',')}}`;
    }
    return `[${Array.from({ length: size }, () => value(depth + 1)).join(',')}]`;
  };
  const members = Array.from(
    { length: 1 + Math.floor(next() * 3) },
    () => `"${pick(['data', 'errors', 'errors', 'x'])}":${value(1)}`,
  );
  let body = `{${members.join(',')}}`;
  if (next() < 0.08) {
    const at = Math.floor(next() * body.length);
    body = body.slice(0, at) + pick(['}', ']', ',', '"']) + body.slice(at);
  }
  return body;
}

describe('envelopes as JSON.parse reads them', () => {
  it('the failure shapes of the issue are GraphQL errors', async () => {
    const deep = `${'['.repeat(5000)}"deep"${']'.repeat(5000)}`;
    const bodies = [
      '{"data":null,"errors":[null]}',
      '{"data":null,"errors":[1,2,3]}',
      '{"data":null,"errors":[null,{"message":"down","status":500}]}',
      '{"data":null,"errors":[{"message":"a","status":1e400},{"message":"b","status":503}]}',
      `{"data":null,"errors":[{"message":${deep},"status":502}]}`,
      '{"errors":[],"data":{"Media":{"id":1}},"errors":[{"message":"late","status":500}]}',
      '{"data":{"Media":{"id":1}},"data":null,"errors":[{"message":"m"}]}',
      '{"data":null,"errors":"broken"}',
      '{"data":null,"errors":{"message":"object"}}',
    ];
    serveBodies(bodies);
    const client = aniListClient(server);
    const statuses = [200, 200, 500, 503, 502, 500, 200, 200, 200];
    for (const [id, status] of statuses.entries()) {
      const error = await failureOf(client.anilist.query.media({ id }));
      expect(error, bodies[id].slice(0, 80)).toBeInstanceOf(AniLinkGraphQLError);
      expect((error as AniLinkGraphQLError).status).toBe(status);
    }
  });

  it('a persistent 5xx inside odd entries trips the breaker', async () => {
    serveBodies(['{"data":null,"errors":[null,{"message":"down","status":500}]}']);
    const client = aniListClient(server, { circuitBreaker: { threshold: 2, cooldownMs: 60_000 } });
    expect((await failureOf(client.anilist.query.media({ id: 0 }))).code).toBe('GRAPHQL_ERROR');
    expect((await failureOf(client.anilist.query.media({ id: 0 }))).code).toBe('GRAPHQL_ERROR');
    expect((await failureOf(client.anilist.query.media({ id: 0 }))).code).toBe('CIRCUIT_OPEN_ERROR');
  });

  it('a constructed AniLinkGraphQLError reads the status by the same rule', () => {
    expect(
      new AniLinkGraphQLError([
        { message: 'a', status: 500.5 },
        { message: 'b', status: 503 },
      ]).status,
    ).toBe(503);
    expect(new AniLinkGraphQLError([{ message: 'a', status: 700 }]).status).toBe(200);
    expect(new AniLinkGraphQLError([{ message: 'a', status: Infinity }]).status).toBe(200);
  });

  it('400 seeded random bodies resolve or fail exactly as JSON.parse reads them', async () => {
    const next = random(0xd29);
    const bodies = Array.from({ length: 400 }, () => randomBody(next));
    serveBodies(bodies);
    const client = aniListClient(server);
    const outcomes = await Promise.all(bodies.map((_, id) => outcomeOf(client.anilist.query.media({ id }))));
    const mismatches = bodies
      .map((body, id) => ({ body, expected: expectedOutcome(body), got: outcomes[id] }))
      .filter(({ expected, got }) => JSON.stringify(expected) !== JSON.stringify(got));
    expect(mismatches).toEqual([]);
    expect(outcomes.filter((o) => 'code' in o && o.code === 'GRAPHQL_ERROR').length).toBeGreaterThan(50);
  });
});
