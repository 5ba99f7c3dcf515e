// The published testing entry (`anilink-api-wrapper/testing`): the AniList + MAL upstream, its
// answers and records, the client helper, the simulator wrapper, and both module systems.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AniLinkApiError,
  AniLinkError,
  AniLinkGraphQLError,
  AniLinkRestError,
  destroyCachedAgents,
  type ResponseContext,
} from 'anilink-api-wrapper';
import * as testingEsm from 'anilink-api-wrapper/testing';
import {
  startAniListSimulator,
  startTestUpstream,
  TEST_MAL_CLIENT_ID,
  type TestUpstream,
} from 'anilink-api-wrapper/testing';
import { rejectionOf } from './support/helpers';

const run = promisify(execFile);
const packageRoot = join(__dirname, '..');
const fixtures = join(__dirname, 'fixtures', 'testing');

let upstream: TestUpstream;
beforeAll(async () => {
  upstream = await startTestUpstream();
});
beforeEach(() => upstream.reset());
afterAll(async () => {
  destroyCachedAgents();
  await upstream.close();
});

/** A client on the upstream with retries off, unless the test turns them on. */
function noRetryClient() {
  return upstream.client({ anilist: { retry: false }, mal: { retry: false } });
}

describe('AniList answers', () => {
  it('answers by root field and records the operation, variables and headers', async () => {
    upstream.anilist.reply('Media', { data: { Media: { id: 7, title: { romaji: 'Seven' } } } });
    const client = upstream.client({ anilist: { authToken: 'secret-token' } });

    const media = await client.anilist.query.media({ id: 7 }, { fields: ['id', 'title.romaji'] });

    expect(media).toEqual({ id: 7, title: { romaji: 'Seven' } });
    const [request] = upstream.anilist.requests;
    expect(upstream.requests).toHaveLength(1);
    expect(request).toMatchObject({
      provider: 'anilist',
      method: 'POST',
      path: '/anilist',
      operationName: 'Media',
      variables: { id: 7 },
    });
    expect(request.rootFields).toContain('Media');
    expect(request.document).toMatch(/^query Media/);
    expect(request.headers.authorization).toBe('Bearer secret-token');
    upstream.assertDone();
  });

  it('answers by operation name, and queued answers go first in first out', async () => {
    upstream.anilist.reply(
      'GetTitles',
      { data: { Page: { media: [{ id: 1 }] } } },
      { data: { Page: { media: [{ id: 2 }] } } },
    );
    const client = noRetryClient();
    const document = 'query GetTitles($page: Int) { Page(page: $page) { media { id } } }';

    expect(await client.anilist.custom(document, { page: 1 })).toEqual({ media: [{ id: 1 }] });
    expect(await client.anilist.custom(document, { page: 2 })).toEqual({ media: [{ id: 2 }] });
    expect(upstream.anilist.requests.map((request) => request.variables)).toEqual([{ page: 1 }, { page: 2 }]);
  });

  it('plays a GraphQL error envelope in a 200', async () => {
    upstream.anilist.reply('Media', { status: 200, errors: [{ message: 'Validation error.', status: 400 }] });

    const error = await rejectionOf<AniLinkGraphQLError>(noRetryClient().anilist.query.media({ id: 1 }));

    expect(error).toBeInstanceOf(AniLinkGraphQLError);
    expect(error.status).toBe(400);
    expect(error.graphqlErrors).toEqual([{ message: 'Validation error.', status: 400 }]);
    expect(error.partialData).toBeNull();
  });

  it('sends an error envelope with the first error status as the HTTP status, as AniList does', async () => {
    upstream.anilist.reply('Media', { errors: [{ message: 'Not Found.', status: 404 }], data: { Media: null } });

    const error = await rejectionOf<AniLinkApiError>(noRetryClient().anilist.query.media({ id: 1 }));

    expect(error.status).toBe(404);
    expect(error.data).toEqual({ errors: [{ message: 'Not Found.', status: 404 }], data: { Media: null } });
  });

  it('scripts a 429 with Retry-After: the client waits that long and the retry gets the data', async () => {
    upstream.anilist.reply(
      'Media',
      {
        status: 429,
        retryAfter: 0.2,
        rateLimit: { limit: 90, remaining: 0 },
        errors: [{ message: 'Too Many Requests.', status: 429 }],
      },
      { data: { Media: { id: 3 } } },
    );

    const media = await upstream.client().anilist.query.media({ id: 3 });

    expect(media).toEqual({ id: 3 });
    const [first, second] = upstream.anilist.requests;
    expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(190);
  });

  it('scripts a 429 with Retry-After that surfaces at once with retries off', async () => {
    upstream.anilist.reply('Media', {
      status: 429,
      retryAfter: '30',
      errors: [{ message: 'Too Many Requests.', status: 429 }],
    });

    const error = await rejectionOf<AniLinkApiError>(noRetryClient().anilist.query.media({ id: 1 }));

    expect(error).toBeInstanceOf(AniLinkApiError);
    expect(error.status).toBe(429);
    expect(upstream.requests).toHaveLength(1);
  });

  it('sends the quota headers, which reach onResponse as rateLimit', async () => {
    const reset = new Date(Date.now() + 60_000);
    upstream.anilist.reply('Media', { data: { Media: { id: 1 } }, rateLimit: { limit: 90, remaining: 42, reset } });
    const contexts: ResponseContext[] = [];

    await noRetryClient().anilist.query.media({ id: 1 }, { onResponse: (context) => contexts.push(context) });

    expect(contexts[0].rateLimit).toMatchObject({ limit: 90, remaining: 42 });
  });

  it('drops the connection: a network error with retries off, the next answer on a retry', async () => {
    // Every time: a drop before any byte on a reused keep-alive connection is resent once on a fresh one.
    upstream.anilist.replyAlways('Media', { drop: 'before-response' });
    const failure = await rejectionOf<AniLinkError>(noRetryClient().anilist.query.media({ id: 1 }));
    expect(failure.code).toBe('NETWORK_ERROR');

    upstream.reset();
    upstream.anilist.reply('Media', { drop: 'mid-body' }, { data: { Media: { id: 5 } } });
    const media = await upstream
      .client({ anilist: { retry: { baseDelayMs: 1, jitter: false } } })
      .anilist.query.media({ id: 5 });
    expect(media).toEqual({ id: 5 });
  });

  it('delays an answer past the timeout', async () => {
    upstream.anilist.reply('Media', { delayMs: 500, data: { Media: { id: 1 } } });
    const error = await rejectionOf<AniLinkError>(noRetryClient().anilist.query.media({ id: 1 }, { timeout: 50 }));
    expect(error.code).toBe('TIMEOUT_ERROR');
  });

  it('answers from a function of the request, and replyAlways answers once the queue is empty', async () => {
    upstream.anilist.replyAlways('Media', (request) => ({
      data: { Media: { id: Number(request.variables.id) * 10 } },
    }));
    upstream.anilist.reply('Media', { data: { Media: { id: 1 } } });
    const client = noRetryClient();

    expect(await client.anilist.query.media({ id: 2 })).toEqual({ id: 1 });
    expect(await client.anilist.query.media({ id: 2 })).toEqual({ id: 20 });
    expect(await client.anilist.query.media({ id: 3 })).toEqual({ id: 30 });
    expect(upstream.pending()).toEqual([]);
  });

  it('answers an unscripted request with a 501 whose message says what to queue, and assertDone names it', async () => {
    const client = noRetryClient();
    const media = await rejectionOf<AniLinkApiError>(client.anilist.query.media({ id: 1 }));
    const titles = await rejectionOf<AniLinkApiError>(
      client.anilist.custom('query GetTitles { Page { media { id } } }'),
    );
    const user = await rejectionOf<AniLinkApiError>(client.anilist.query.user({ name: 'x' }));
    const anime = await rejectionOf<AniLinkRestError>(client.mal.anime.get({ id: 5 }));

    expect(media.status).toBe(501);
    expect(media.message).toBe(
      'API request failed with status 501. anilink-api-wrapper/testing: no answer queued for AniList root field "Media". ' +
        'Queue one with upstream.anilist.reply("Media", { data: { … } }).',
    );
    expect(titles.message).toContain('no answer queued for AniList operation "GetTitles" (root field "Page")');
    expect(titles.message).toContain('upstream.anilist.reply("GetTitles"');
    expect(user.message).toContain('AniList root field "User"');
    expect(anime).toBeInstanceOf(AniLinkRestError);
    expect(anime.message).toContain(
      'no answer queued for MAL GET /anime/5. Queue one with upstream.mal.reply("/anime/5"',
    );
    expect(upstream.unmatched).toHaveLength(4);
    let done: Error | undefined;
    try {
      upstream.assertDone();
    } catch (error) {
      done = error as Error;
    }
    expect(done?.message).toBe(
      'anilink-api-wrapper/testing: unscripted AniList root field "Media"; unscripted AniList operation "GetTitles" ' +
        '(root field "Page"); unscripted AniList root field "User"; unscripted MAL GET /anime/5.',
    );
  });
});

describe('MAL answers', () => {
  it('answers by path and by method and path, and records the query and headers', async () => {
    upstream.mal.reply('/anime/1', { body: { id: 1, title: 'Cowboy Bebop' } });
    const client = noRetryClient();

    expect(await client.mal.anime.get({ id: 1 }, { fields: ['title'] })).toEqual({ id: 1, title: 'Cowboy Bebop' });

    const [request] = upstream.mal.requests;
    expect(request).toMatchObject({ provider: 'mal', method: 'GET', path: '/anime/1' });
    expect(request.headers['x-mal-client-id']).toBe(TEST_MAL_CLIENT_ID);
  });

  it("plays a MAL 404 with MAL's error body", async () => {
    upstream.mal.reply('GET /anime/999999', { status: 404 });

    const error = await rejectionOf<AniLinkRestError>(noRetryClient().mal.anime.get({ id: 999_999 }));

    expect(error).toBeInstanceOf(AniLinkRestError);
    expect(error.status).toBe(404);
    expect(error.data).toEqual({ error: 'not_found', message: '' });
    upstream.assertDone();
  });

  it('drops a MAL connection mid-body', async () => {
    upstream.mal.reply('*', { drop: 'mid-body', body: { id: 1, title: 'x'.repeat(200) } });
    const error = await rejectionOf<AniLinkError>(noRetryClient().mal.anime.get({ id: 1 }));
    expect(error.code).toBe('NETWORK_ERROR');
  });

  it('lists unused answers in pending() and assertDone()', () => {
    upstream.mal.reply('/anime/2', { body: {} }, { body: {} });
    expect(upstream.pending()).toEqual([{ provider: 'mal', key: '/anime/2', count: 2 }]);
    expect(() => upstream.assertDone()).toThrow(/2 mal answer\(s\) for "\/anime\/2" never requested/);
  });
});

describe('answer checks', () => {
  it.each([
    [{ stauts: 200 }, /unknown key "stauts"\. Valid keys are: data, errors/],
    [{ status: 42 }, /status must be an integer from 100 to 599/],
    [{ retryAfter: -1 }, /retryAfter must be seconds/],
    [{ drop: 'sometimes' }, /drop must be one of "before-response", "mid-body"/],
    [{ errors: [{ status: 500 }] }, /errors must be an array of GraphQL error entries/],
    [{ rateLimit: { limit: 90 } }, /rateLimit must be \{ limit, remaining, reset\? \}/],
  ])('refuses the AniList answer %j with a TypeError', (answer, message) => {
    expect(() => upstream.anilist.reply('Media', answer as never)).toThrow(TypeError);
    expect(() => upstream.anilist.reply('Media', answer as never)).toThrow(message);
  });

  it('refuses GraphQL keys in a MAL answer and an empty key', () => {
    expect(() => upstream.mal.reply('/anime/1', { data: {} } as never)).toThrow(/MAL answer: unknown key "data"/);
    expect(() => upstream.mal.reply('', { body: {} })).toThrow(/the key must be a path/);
  });
});

describe('lifetime and entries', () => {
  it('close() is idempotent and Symbol.asyncDispose closes', async () => {
    const other = await startTestUpstream();
    await other[Symbol.asyncDispose]();
    await expect(other.close()).resolves.toBeUndefined();
    await expect(fetch(`${other.url}/anilist`, { method: 'POST' })).rejects.toThrow();
  });

  it('never keeps a process alive: a child that forgets close() exits right after its calls', async () => {
    const started = Date.now();
    const { stdout } = await run(process.execPath, [join(fixtures, 'forgets-close.mjs')], {
      cwd: packageRoot,
      timeout: 15_000,
    });
    expect(JSON.parse(stdout)).toEqual({ media: { id: 1 }, simulated: 1, raw: 200 });
    // The server's keep-alive timeout is 5 s: exiting well before it shows nothing was held open.
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('the CommonJS and ESM entries hand out the same functions', () => {
    const cjs = createRequire(__filename)('anilink-api-wrapper/testing') as typeof testingEsm;
    for (const name of Object.keys(cjs) as (keyof typeof testingEsm)[]) expect(testingEsm[name]).toBe(cjs[name]);
    expect(Object.keys(cjs).sort()).toEqual(
      [
        'TEST_MAL_CLIENT_ID',
        'graphqlData',
        'rateLimitHeaders',
        'startAniListSimulator',
        'startScriptedServer',
        'startTestUpstream',
      ].sort(),
    );
  });
});

describe('the simulator wrapper', () => {
  it('starts the AniList simulator with a client helper and its scripts', async () => {
    const simulator = await startAniListSimulator({ quota: { limit: 5, windowMs: 60_000 } });
    try {
      const client = simulator.client({ anilist: { retry: false } });
      expect((await client.anilist.query.media({ id: 42 }, { fields: ['id'] })).id).toBe(42);
      simulator.script.burst5xx({ count: 1, status: 503 });
      const error = await rejectionOf<AniLinkApiError>(client.anilist.query.media({ id: 1 }));
      expect(error.status).toBe(503);
      expect(simulator.stats()).toMatchObject({ requests: 2, byStatus: { 200: 1, 503: 1 } });
    } finally {
      await simulator[Symbol.asyncDispose]();
    }
  });
});
