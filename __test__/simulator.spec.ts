import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../sim/anilist-simulator.mjs';

interface GraphQLAnswer {
  status: number;
  headers: Headers;
  body: { data?: any; errors?: Array<{ message: string; status: number; locations?: unknown[] }> };
}

const MEDIA_QUERY = `query ($id: Int) {
  Media(id: $id) { id title { romaji } startDate { year } genres }
}`;

describe('AniList simulator', () => {
  let sim: Simulator;
  /** Virtual epoch ms for the quota and outage clocks; tests move it instead of sleeping. */
  let clock: number;

  async function graphql(
    query: string,
    variables?: object,
    headers: Record<string, string> = {},
  ): Promise<GraphQLAnswer> {
    const res = await fetch(sim.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify({ query, variables }),
    });
    return { status: res.status, headers: res.headers, body: await res.json() };
  }

  async function scriptOverHttp(command: object): Promise<{ status: number; body: any }> {
    const res = await fetch(`${sim.url}/__sim/script`, { method: 'POST', body: JSON.stringify(command) });
    return { status: res.status, body: await res.json() };
  }

  beforeEach(async () => {
    clock = Date.UTC(2025, 0, 1);
    sim = await startSimulator({ now: () => clock });
  });

  afterEach(async () => {
    await sim.close();
  });

  describe('GraphQL answers', () => {
    it('answers a Media query with exactly the selected fields, id from the variables', async () => {
      const { status, body } = await graphql(MEDIA_QUERY, { id: 42 });
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
      const media = body.data.Media;
      expect(Object.keys(body.data)).toEqual(['Media']);
      expect(Object.keys(media)).toEqual(['id', 'title', 'startDate', 'genres']);
      expect(Object.keys(media.title)).toEqual(['romaji']);
      expect(Object.keys(media.startDate)).toEqual(['year']);
      expect(media.id).toBe(42);
      expect(media.title.romaji).toMatch(/^Simulated (Anime|Manga) #42$/);
      expect(media.startDate.year).toBeGreaterThanOrEqual(1990);
      expect(media.genres.length).toBeGreaterThanOrEqual(1);
      expect(media.genres.length).toBeLessThanOrEqual(3);
    });

    it('is deterministic and honours aliases, fragments and the requested type', async () => {
      const query = `query { a: Media(id: 7, type: MANGA) { ...Basics } b: Media(id: 7, type: MANGA) { ...Basics } }
        fragment Basics on Media { id type format title { english } }`;
      const first = await graphql(query);
      const second = await graphql(query);
      expect(first.body).toEqual(second.body);
      expect(first.body.data.a).toEqual(first.body.data.b);
      expect(first.body.data.a.type).toBe('MANGA');
      expect(['MANGA', 'NOVEL', 'ONE_SHOT']).toContain(first.body.data.a.format);
    });

    it('gives a page query a pageInfo consistent with page, perPage and the fixed total', async () => {
      const query = `query ($page: Int, $perPage: Int) {
        Page(page: $page, perPage: $perPage) {
          pageInfo { total perPage currentPage lastPage hasNextPage }
          media { id }
        }
      }`;
      const middle = await graphql(query, { page: 2, perPage: 10 });
      expect(middle.body.data.Page.pageInfo).toEqual({
        total: 125,
        perPage: 10,
        currentPage: 2,
        lastPage: 13,
        hasNextPage: true,
      });
      expect(middle.body.data.Page.media.map((m: { id: number }) => m.id)).toEqual([
        11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
      ]);

      const last = await graphql(query, { page: 13, perPage: 10 });
      expect(last.body.data.Page.pageInfo).toMatchObject({ currentPage: 13, hasNextPage: false });
      expect(last.body.data.Page.media).toHaveLength(5);
    });

    it('serves any positive id: real-world ids such as AniList user ids in the millions', async () => {
      for (const id of [100_001, 5_123_456, 2_147_483_647]) {
        const media = await graphql(MEDIA_QUERY, { id });
        expect(media.status).toBe(200);
        expect(media.body.data.Media.id).toBe(id);
      }
      const user = await graphql('query ($id: Int) { User(id: $id) { id name } }', { id: 6_543_210 });
      expect(user.status).toBe(200);
      expect(user.body.data.User).toEqual({ id: 6_543_210, name: expect.any(String) });
    });

    it('answers 404 with data.Media null for an id below 1', async () => {
      for (const id of [0, -3]) {
        const { status, body } = await graphql(MEDIA_QUERY, { id });
        expect(status).toBe(404);
        expect(body.data).toEqual({ Media: null });
        expect(body.errors).toHaveLength(1);
        expect(body.errors![0]).toMatchObject({ message: 'Not Found.', status: 404 });
      }
    });

    it('answers 404 for the ids given to the missing script, until it is replaced or reset', async () => {
      sim.script.missing({ ids: [42, 7_000_000] });
      const missing = await graphql(MEDIA_QUERY, { id: 7_000_000 });
      expect(missing.status).toBe(404);
      expect(missing.body.data).toEqual({ Media: null });
      const character = await graphql('{ Character(id: 42) { id } }');
      expect(character.status).toBe(404);
      expect(character.body.data).toEqual({ Character: null });
      expect((await graphql(MEDIA_QUERY, { id: 43 })).status).toBe(200);

      sim.script.missing({ ids: [] });
      expect((await graphql(MEDIA_QUERY, { id: 42 })).status).toBe(200);
      sim.script.missing({ ids: [42] });
      sim.script.reset();
      expect((await graphql(MEDIA_QUERY, { id: 42 })).status).toBe(200);

      const overHttp = await scriptOverHttp({ action: 'missing', ids: [9] });
      expect(overHttp.status).toBe(200);
      expect((await graphql(MEDIA_QUERY, { id: 9 })).status).toBe(404);
      expect(() => sim.script.missing({ ids: [0] })).toThrow(TypeError);
      expect(() => sim.script.missing({ ids: 5 } as never)).toThrow(TypeError);
    });

    it('refuses an invalid document with a 400 errors envelope that locates the problem', async () => {
      const unknownField = await graphql('{ Media(id: 1) { id nonexistentField } }');
      expect(unknownField.status).toBe(400);
      expect(unknownField.body.data).toBeNull();
      expect(unknownField.body.errors![0]).toMatchObject({
        message: expect.stringContaining('nonexistentField'),
        status: 400,
        locations: [{ line: 1, column: 21 }],
      });

      const syntaxError = await graphql('{ Media(id: 1) { id ');
      expect(syntaxError.status).toBe(400);
      expect(syntaxError.body.errors![0].message).toMatch(/Syntax Error/);

      const badVariable = await graphql(MEDIA_QUERY, { id: 'one' });
      expect(badVariable.status).toBe(400);
      expect(badVariable.body.errors![0].message).toMatch(/\$id/);
    });

    it('refuses a body that is not JSON or has no query, and paths other than POST /', async () => {
      for (const body of ['{"query": ', JSON.stringify({ variables: {} })]) {
        const res = await fetch(sim.url, { method: 'POST', body });
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ data: null, errors: [{ status: 400 }] });
      }
      const elsewhere = await fetch(`${sim.url}/graphql`, { method: 'POST', body: '{}' });
      expect(elsewhere.status).toBe(404);
    });

    it('requires a token for Viewer', async () => {
      const anonymous = await graphql('{ Viewer { id } }');
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({ data: null, errors: [{ message: 'Unauthorized.', status: 401 }] });
      const signedIn = await graphql('{ Viewer { id } }', undefined, { authorization: 'Bearer token' });
      expect(Number.isInteger(signedIn.body.data.Viewer.id)).toBe(true);
    });

    it('echoes mutation arguments into a plausible object, and requires a token', async () => {
      const mutation = `mutation ($mediaId: Int, $status: MediaListStatus, $progress: Int) {
        SaveMediaListEntry(mediaId: $mediaId, status: $status, progress: $progress) { id mediaId status progress media { id } }
      }`;
      const variables = { mediaId: 5, status: 'CURRENT', progress: 3 };
      const anonymous = await graphql(mutation, variables);
      expect(anonymous.status).toBe(401);

      const { status, body } = await graphql(mutation, variables, { authorization: 'Bearer token' });
      expect(status).toBe(200);
      expect(body.data.SaveMediaListEntry).toMatchObject({
        mediaId: 5,
        status: 'CURRENT',
        progress: 3,
        media: { id: 5 },
      });
      expect(Number.isInteger(body.data.SaveMediaListEntry.id)).toBe(true);
    });

    it('echoes an input object argument into the same-named object field, making up the parts it leaves out', async () => {
      const mutation = `mutation ($startedAt: FuzzyDateInput) {
        SaveMediaListEntry(mediaId: 1, startedAt: $startedAt) { startedAt { year month day } completedAt { year } }
      }`;
      const { body } = await graphql(
        mutation,
        { startedAt: { year: 2024, month: 4 } },
        { authorization: 'Bearer token' },
      );
      expect(body.data.SaveMediaListEntry.startedAt).toEqual({ year: 2024, month: 4, day: expect.any(Number) });
      expect(body.data.SaveMediaListEntry.completedAt).toEqual({ year: expect.any(Number) });
    });

    it('picks union members the selection asks about', async () => {
      const { body } = await graphql(
        `{ Page(perPage: 5) { notifications { ... on AiringNotification { __typename episode } } } }`,
      );
      const notifications = body.data.Page.notifications as Array<{ __typename: string; episode: number }>;
      expect(notifications).toHaveLength(5);
      for (const notification of notifications) {
        expect(notification.__typename).toBe('AiringNotification');
        expect(Number.isInteger(notification.episode)).toBe(true);
      }
    });
  });

  describe('rate limiting', () => {
    it('counts the quota down, announces the reset on the last request and then answers 429', async () => {
      sim.script.setQuota({ limit: 3, windowMs: 60_000 });
      const answers = [];
      for (let i = 0; i < 4; i += 1) answers.push(await graphql(MEDIA_QUERY, { id: 1 }));

      expect(answers.map((a) => a.headers.get('x-ratelimit-limit'))).toEqual(['3', '3', '3', '3']);
      expect(answers.map((a) => a.headers.get('x-ratelimit-remaining'))).toEqual(['2', '1', '0', '0']);
      expect(answers[0].headers.get('x-ratelimit-reset')).toBeNull();
      expect(answers[2].headers.get('x-ratelimit-reset')).toBe(String((clock + 60_000) / 1000));

      const refused = answers[3];
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('60');
      expect(refused.headers.get('x-ratelimit-reset')).toBe(String((clock + 60_000) / 1000));
      expect(refused.body).toEqual({ data: null, errors: [{ message: 'Too Many Requests.', status: 429 }] });
      expect(sim.stats().rateLimited).toBe(1);
    });

    it('keeps refusing for one window after the quota is exceeded, then opens a fresh window', async () => {
      sim.script.setQuota({ limit: 1, windowMs: 10_000 });
      expect((await graphql(MEDIA_QUERY, { id: 1 })).status).toBe(200);
      clock += 9_000;
      expect((await graphql(MEDIA_QUERY, { id: 1 })).status).toBe(429); // timeout runs to clock + 10 s
      clock += 9_500;
      const stillRefused = await graphql(MEDIA_QUERY, { id: 1 });
      expect(stillRefused.status).toBe(429);
      expect(stillRefused.headers.get('retry-after')).toBe('1');
      clock += 500;
      const accepted = await graphql(MEDIA_QUERY, { id: 1 });
      expect(accepted.status).toBe(200);
      expect(accepted.headers.get('x-ratelimit-remaining')).toBe('0');
    });

    it('degraded mode announces the limit, enforces less, and going over earns a window of 429s', async () => {
      sim.script.setQuota({ limit: 5, windowMs: 10_000 });
      sim.script.degrade({ enforce: 2 });
      const answers = [];
      for (let i = 0; i < 3; i += 1) answers.push(await graphql(MEDIA_QUERY, { id: 1 }));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
      // The headers still count against 5; the last enforced request tells the window's end.
      expect(answers.map((a) => a.headers.get('x-ratelimit-remaining'))).toEqual(['4', '3', '0']);
      expect(answers[0].headers.get('x-ratelimit-reset')).toBeNull();
      expect(answers[1].headers.get('x-ratelimit-reset')).toBe(String((clock + 10_000) / 1000));
      clock += 9_999;
      expect((await graphql(MEDIA_QUERY, { id: 1 })).status).toBe(429);
      clock += 1;
      expect((await graphql(MEDIA_QUERY, { id: 1 })).status).toBe(200);
      sim.script.degrade({ enforce: 0 });
      for (let i = 0; i < 4; i += 1) expect((await graphql(MEDIA_QUERY, { id: 1 })).status).toBe(200);
      expect(() => sim.script.degrade({ enforce: 6 })).toThrow(TypeError);
    });

    it('a burst limiter refuses requests too close together, without spending quota or a timeout', async () => {
      sim.script.burstLimit({ max: 2, perMs: 1_000 });
      const answers = [];
      for (let i = 0; i < 3; i += 1) answers.push(await graphql(MEDIA_QUERY, { id: 1 }));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
      expect(answers[2].headers.get('retry-after')).toBe('1');
      expect(answers[2].headers.get('x-ratelimit-remaining')).toBe('88');
      clock += 1_000;
      expect((await graphql(MEDIA_QUERY, { id: 1 })).status).toBe(200);
      sim.script.burstLimit({ max: 0 });
      for (let i = 0; i < 3; i += 1) expect((await graphql(MEDIA_QUERY, { id: 1 })).status).toBe(200);
      expect(sim.stats().rateLimited).toBe(1);
    });

    it('rejects an invalid quota', () => {
      expect(() => sim.script.setQuota({ limit: 0 })).toThrow(TypeError);
      expect(() => sim.script.setQuota({ windowMs: -1 })).toThrow(TypeError);
    });
  });

  describe('scripted failures', () => {
    it('fails the next N requests with the burst status without spending quota', async () => {
      sim.script.burst5xx({ count: 2, status: 502 });
      const answers = [];
      for (let i = 0; i < 3; i += 1) answers.push(await graphql(MEDIA_QUERY, { id: 1 }));
      expect(answers.map((a) => a.status)).toEqual([502, 502, 200]);
      expect(answers[0].body.errors![0]).toMatchObject({ status: 502 });
      expect(answers.map((a) => a.headers.get('x-ratelimit-remaining'))).toEqual(['90', '90', '89']);
      expect(sim.stats()).toEqual({ requests: 3, byStatus: { 200: 1, 502: 2 }, rateLimited: 0 });
    });

    it('answers 503 to everything during an outage and recovers when it ends', async () => {
      sim.script.outage({ ms: 30_000 });
      expect((await graphql(MEDIA_QUERY, { id: 1 })).status).toBe(503);
      clock += 29_999;
      expect((await graphql(MEDIA_QUERY, { id: 1 })).status).toBe(503);
      clock += 1;
      expect((await graphql(MEDIA_QUERY, { id: 1 })).status).toBe(200);
    });

    it('holds back the next answers when slowed', async () => {
      sim.script.slow({ ms: 200, count: 1 });
      const slowStart = performance.now();
      await graphql(MEDIA_QUERY, { id: 1 });
      const slowMs = performance.now() - slowStart;
      const fastStart = performance.now();
      await graphql(MEDIA_QUERY, { id: 1 });
      const fastMs = performance.now() - fastStart;
      expect(slowMs).toBeGreaterThanOrEqual(195);
      expect(fastMs).toBeLessThan(slowMs - 100); // only the first answer was held back
    });

    it('rejects invalid script arguments', () => {
      expect(() => sim.script.burst5xx({ count: 0 })).toThrow(TypeError);
      expect(() => sim.script.burst5xx({ count: 1, status: 404 })).toThrow(TypeError);
      expect(() => sim.script.outage({ ms: Number.NaN })).toThrow(TypeError);
    });

    it('reset clears scripts and statistics', async () => {
      sim.script.burst5xx({ count: 5 });
      await graphql(MEDIA_QUERY, { id: 1 });
      sim.script.reset();
      expect(sim.stats()).toEqual({ requests: 0, byStatus: {}, rateLimited: 0 });
      expect((await graphql(MEDIA_QUERY, { id: 1 })).status).toBe(200);
    });
  });

  describe('scripting over HTTP', () => {
    it('runs scripts posted to /__sim/script and reports statistics', async () => {
      const scripted = await scriptOverHttp({ action: 'burst5xx', count: 1, status: 504 });
      expect(scripted).toEqual({
        status: 200,
        body: { ok: true, stats: { requests: 0, byStatus: {}, rateLimited: 0 } },
      });
      expect((await graphql(MEDIA_QUERY, { id: 1 })).status).toBe(504);

      const stats = await scriptOverHttp({ action: 'stats' });
      expect(stats.body.stats).toEqual({ requests: 1, byStatus: { 504: 1 }, rateLimited: 0 });
    });

    it('answers 400 to unknown actions and invalid arguments', async () => {
      const unknown = await scriptOverHttp({ action: 'explode' });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toMatchObject({ ok: false, error: expect.stringContaining('explode') });
      const invalid = await scriptOverHttp({ action: 'slow', ms: -5 });
      expect(invalid.status).toBe(400);
      expect(invalid.body.error).toMatch(/slow ms/);
    });
  });

  it('runs standalone and prints its URL', async () => {
    const script = fileURLToPath(new URL('../sim/anilist-simulator.mjs', import.meta.url));
    const child = spawn(process.execPath, [script, '--port', '0', '--limit', '7'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const [firstLine] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
      expect(firstLine).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(firstLine, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ Media(id: 3) { id } }' }),
      });
      expect(await res.json()).toEqual({ data: { Media: { id: 3 } } });
      expect(res.headers.get('x-ratelimit-limit')).toBe('7');
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
});
