// Both released MyAnimeList calling conventions (decisions D25), end to end against the test
// server: the positional form of the published 2.x line (2.2.0: `get(id, options?)`,
// `updateMyListStatus(id, payload, options?)`, `deleteFromList(id, options?)`) sends exactly
// what the object form of the newest sources sends (method, path, query, form body, headers);
// and the no-credentials rule: a call of a slot with no credentials at all goes out without
// any, and MAL's answer decides (only token-only operations are refused locally).
import { describe, expect, it } from 'vitest';

import { AniLink, AniLinkAuthError, AniLinkRestError, AniLinkValidationError } from 'anilink-api-wrapper';
import { malClient, onlyRequest, rejectionOf, useTestServer } from './support/helpers';
import type { MalCredentials } from 'anilink-api-wrapper';
import type { RecordedRequest, TestServer } from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

type Mal = AniLink['mal'];

/** A MAL client under `/v2` of the test server, as MAL's own base URL has it (client id `cid`). */
const client = (options: MalCredentials = {}) => malClient({ url: `${server.url}/v2` }, options);

/** What identifies a request on the wire; the request id and connection do not count. */
function wire(request: RecordedRequest) {
  const { authorization, accept } = request.headers;
  return {
    method: request.method,
    path: request.path,
    query: Object.fromEntries(request.query),
    body: request.body,
    contentType: request.headers['content-type'],
    authorization,
    clientId: request.headers['x-mal-client-id'],
    accept,
  };
}

/** Send `call` once and return its request as seen by the server. */
async function sent(mal: Mal, call: (mal: Mal) => Promise<unknown>, response: object | undefined = { id: 1 }) {
  server.reset();
  server.enqueue(response === undefined ? { status: 200, body: '' } : { body: response });
  await call(mal);
  return wire(onlyRequest(server));
}

const FORM = 'application/x-www-form-urlencoded';

interface Pair {
  operation: string;
  positional: (mal: Mal) => Promise<unknown>;
  object: (mal: Mal) => Promise<unknown>;
  method: string;
  path: string;
  query: Record<string, string>;
  form?: Record<string, string>;
  response?: object;
}

/** Every operation the 2.2.0 line declares positionally, in both conventions. */
const PAIRS: Pair[] = [
  {
    operation: 'anime.get',
    positional: (mal) => mal.anime.get(21, { fields: ['id', 'title', 'main_picture'] }),
    object: (mal) => mal.anime.get({ id: 21 }, { fields: ['id', 'title', 'main_picture'] }),
    method: 'GET',
    path: '/v2/anime/21',
    query: { fields: 'id,title,main_picture' },
  },
  {
    operation: 'anime.get (default fields, string fields)',
    positional: (mal) => mal.anime.get(21, { fields: 'id,title' }),
    object: (mal) => mal.anime.get({ id: 21 }, { fields: 'id,title' }),
    method: 'GET',
    path: '/v2/anime/21',
    query: { fields: 'id,title' },
  },
  {
    operation: 'anime.updateMyListStatus',
    positional: (mal) => mal.anime.updateMyListStatus(21, { status: 'watching', num_watched_episodes: 10, score: 9 }),
    object: (mal) => mal.anime.updateMyListStatus({ id: 21, status: 'watching', num_watched_episodes: 10, score: 9 }),
    method: 'PATCH',
    path: '/v2/anime/21/my_list_status',
    query: {},
    form: { status: 'watching', score: '9', num_watched_episodes: '10' },
    response: { status: 'watching', score: 9, num_episodes_watched: 10 },
  },
  {
    operation: 'anime.updateMyListStatus (every field, fields option)',
    positional: (mal) =>
      mal.anime.updateMyListStatus(
        21,
        {
          status: 'completed',
          is_rewatching: true,
          score: 10,
          num_watched_episodes: 26,
          priority: 2,
          num_times_rewatched: 1,
          rewatch_value: 5,
          tags: ['cozy', 'winter'],
          comments: 'again',
          start_date: '2026-01',
          finish_date: '2026-02-03',
        },
        { fields: ['status', 'score'] },
      ),
    object: (mal) =>
      mal.anime.updateMyListStatus(
        {
          id: 21,
          status: 'completed',
          isRewatching: true,
          score: 10,
          numWatchedEpisodes: 26,
          priority: 2,
          numTimesRewatched: 1,
          rewatchValue: 5,
          tags: ['cozy', 'winter'],
          comments: 'again',
          startDate: '2026-01',
          finishDate: '2026-02-03',
        },
        { fields: 'status,score' },
      ),
    method: 'PATCH',
    path: '/v2/anime/21/my_list_status',
    query: { fields: 'status,score' },
    form: {
      status: 'completed',
      is_rewatching: 'true',
      score: '10',
      num_watched_episodes: '26',
      priority: '2',
      num_times_rewatched: '1',
      rewatch_value: '5',
      tags: 'cozy,winter',
      comments: 'again',
      start_date: '2026-01',
      finish_date: '2026-02-03',
    },
  },
  {
    operation: 'anime.deleteFromList',
    positional: (mal) => mal.anime.deleteFromList(21),
    object: (mal) => mal.anime.deleteFromList({ id: 21 }),
    method: 'DELETE',
    path: '/v2/anime/21/my_list_status',
    query: {},
  },
  {
    operation: 'manga.get',
    positional: (mal) => mal.manga.get(1, { fields: ['id', 'title', 'num_chapters'] }),
    object: (mal) => mal.manga.get({ id: 1 }, { fields: ['id', 'title', 'num_chapters'] }),
    method: 'GET',
    path: '/v2/manga/1',
    query: { fields: 'id,title,num_chapters' },
  },
  {
    operation: 'manga.updateMyListStatus',
    positional: (mal) =>
      mal.manga.updateMyListStatus(1, {
        status: 'reading',
        num_chapters_read: 10,
        num_volumes_read: 1,
        score: 9,
        is_rereading: false,
      }),
    object: (mal) =>
      mal.manga.updateMyListStatus({
        id: 1,
        status: 'reading',
        numChaptersRead: 10,
        numVolumesRead: 1,
        score: 9,
        isRereading: false,
      }),
    method: 'PATCH',
    path: '/v2/manga/1/my_list_status',
    query: {},
    form: { status: 'reading', is_rereading: 'false', score: '9', num_volumes_read: '1', num_chapters_read: '10' },
  },
  {
    operation: 'manga.deleteFromList (fields ignored, as the original ignores them)',
    positional: (mal) => mal.manga.deleteFromList(1, { fields: ['id'] }),
    object: (mal) => mal.manga.deleteFromList({ id: 1 }, { fields: 'id' }),
    method: 'DELETE',
    path: '/v2/manga/1/my_list_status',
    query: {},
  },
];

describe('fields in the params object (the object form of D25)', () => {
  const FIELDS = ['id', 'title'];
  it.each<[string, (mal: Mal) => Promise<unknown>, (mal: Mal) => Promise<unknown>]>([
    ['anime.get', (mal) => mal.anime.get({ id: 21, fields: FIELDS }), (mal) => mal.anime.get(21, { fields: FIELDS })],
    [
      'manga.get',
      (mal) => mal.manga.get({ id: 2, fields: 'id,title' }),
      (mal) => mal.manga.get(2, { fields: 'id,title' }),
    ],
    [
      'anime.search',
      (mal) => mal.anime.search({ q: 'one', limit: 2, fields: FIELDS }),
      (mal) => mal.anime.search({ q: 'one', limit: 2 }, { fields: FIELDS }),
    ],
    [
      'user.animeList',
      (mal) => mal.user.animeList({ username: 'someone', fields: ['list_status'] }),
      (mal) => mal.user.animeList({ username: 'someone' }, { fields: ['list_status'] }),
    ],
    [
      'anime.updateMyListStatus',
      (mal) => mal.anime.updateMyListStatus({ id: 21, score: 9, fields: ['score'] }),
      (mal) => mal.anime.updateMyListStatus(21, { score: 9 }, { fields: ['score'] }),
    ],
  ])('%s sends them as options.fields sends them', async (_operation, inParams, inOptions) => {
    const user = client({ accessToken: 'mal-token' });
    const fromParams = await sent(user.mal, inParams);
    expect(fromParams).toEqual(await sent(user.mal, inOptions));
    expect(fromParams.query.fields).toBeDefined();
  });

  it('given in both places, the call is refused before any request', async () => {
    const error = await rejectionOf<AniLinkValidationError>(
      client().mal.anime.get({ id: 21, fields: ['id'] }, { fields: ['title'] }),
    );
    expect(error).toBeInstanceOf(AniLinkValidationError);
    expect(error.details).toEqual([
      'Conflicting fields: given both in the params object and in the options. Give them in one place',
    ]);
    expect(server.requests).toHaveLength(0);
  });
});

describe('the positional form of 2.2.0 and the object form send the same request', () => {
  it.each(PAIRS)('$operation', async (pair) => {
    const user = client({ accessToken: 'mal-token' });
    const isDelete = pair.method === 'DELETE';
    const response = isDelete ? undefined : (pair.response ?? { id: 1 });

    const positional = await sent(user.mal, pair.positional, response);
    const object = await sent(user.mal, pair.object, response);

    expect(positional).toEqual(object);
    expect(positional.method).toBe(pair.method);
    expect(positional.path).toBe(pair.path);
    expect(positional.query).toEqual(pair.query);
    expect(positional.authorization).toBe('Bearer mal-token');
    expect(positional.clientId).toBeUndefined();
    expect(positional.accept).toBe('application/json');
    if (pair.form) {
      expect(positional.contentType).toBe(FORM);
      expect(Object.fromEntries(new URLSearchParams(positional.body))).toEqual(pair.form);
    } else {
      expect(positional.contentType).toBeUndefined();
      expect(positional.body).toBe('');
    }
  });

  it('resolves what the server answers, in both forms', async () => {
    const user = client({ accessToken: 'mal-token' });
    server.enqueue({ body: { id: 21, title: 'One Piece' } }, { status: 200, body: '' });
    await expect(user.mal.anime.get(21)).resolves.toEqual({ id: 21, title: 'One Piece' });
    await expect(user.mal.anime.deleteFromList(21)).resolves.toBeUndefined();
  });

  it('the default field list of get is the same in both forms', async () => {
    const positional = await sent(client().mal, (mal) => mal.manga.get(2));
    const object = await sent(client().mal, (mal) => mal.manga.get({ id: 2 }));
    expect(positional).toEqual(object);
    expect(positional.query.fields).toContain('num_chapters');
  });

  it.each<[string, (mal: Mal) => Promise<unknown>, string]>([
    [
      'a positional id that is not a number',
      (mal) => mal.anime.get('21' as never),
      'Invalid id: "21". Expected a positive integer',
    ],
    [
      'a fractional positional id',
      (mal) => mal.manga.deleteFromList(1.5),
      'Invalid id: 1.5. Expected a positive integer',
    ],
    [
      'a payload that is not an object',
      (mal) => mal.anime.updateMyListStatus(21, 'watching' as never),
      'Invalid payload: expected an object of list-status fields (received a string).',
    ],
    [
      'an empty payload',
      (mal) => mal.manga.updateMyListStatus(1, {}),
      'updateMyListStatus requires at least one list field',
    ],
    [
      'an unknown payload field',
      (mal) => mal.anime.updateMyListStatus(21, { score: 3, episodes: 3 } as never),
      'Unknown variable: episodes',
    ],
  ])('rejects %s before sending anything', async (_label, call, detail) => {
    const user = client({ accessToken: 'mal-token' });
    const error = await rejectionOf<AniLinkValidationError>(call(user.mal));
    expect(error).toBeInstanceOf(AniLinkValidationError);
    expect(error.details).toEqual([detail]);
    expect(server.requests).toHaveLength(0);
  });
});

describe('a slot with no credentials at all', () => {
  const bare = () => new AniLink({ mal: { baseUrl: `${server.url}/v2`, retry: false } });

  it.each<[string, (mal: Mal) => Promise<unknown>, string]>([
    ['anime.get (positional)', (mal) => mal.anime.get(21, { fields: 'id' }), '/v2/anime/21'],
    ['anime.get', (mal) => mal.anime.get({ id: 21 }, { fields: 'id' }), '/v2/anime/21'],
    ['anime.search', (mal) => mal.anime.search({ q: 'x' }), '/v2/anime'],
    ['anime.seasonal', (mal) => mal.anime.seasonal({ year: 2024, season: 'fall' }), '/v2/anime/season/2024/fall'],
    ['anime.ranking', (mal) => mal.anime.ranking({ rankingType: 'all' }), '/v2/anime/ranking'],
    ['manga.get (positional)', (mal) => mal.manga.get(2, { fields: 'id' }), '/v2/manga/2'],
    ['manga.search', (mal) => mal.manga.search({ q: 'x' }), '/v2/manga'],
    ['manga.ranking', (mal) => mal.manga.ranking({ rankingType: 'manga' }), '/v2/manga/ranking'],
    ['user.get', (mal) => mal.user.get({ username: 'someone' }), '/v2/users/someone'],
    ['user.animeList', (mal) => mal.user.animeList({ username: 'someone' }), '/v2/users/someone/animelist'],
    ['user.mangaList', (mal) => mal.user.mangaList({ username: 'someone' }), '/v2/users/someone/mangalist'],
    ['forum.boards', (mal) => mal.forum.boards(), '/v2/forum/boards'],
    ['forum.topics', (mal) => mal.forum.topics({ subboardId: 0 }), '/v2/forum/topics'],
    ['forum.topic', (mal) => mal.forum.topic({ id: 5 }), '/v2/forum/topic/5'],
  ])('%s is sent without credentials', async (_label, call, path) => {
    const request = await sent(bare().mal, call);
    expect(request.path).toBe(path);
    expect(request.authorization).toBeUndefined();
    expect(request.clientId).toBeUndefined();
  });

  it("MAL's answer decides: its 401 comes back as the call's AniLinkRestError", async () => {
    server.enqueue({ status: 401, body: { error: 'invalid_token', message: 'client id is required' } });
    const error = await rejectionOf<AniLinkRestError>(bare().mal.anime.get(21));
    expect(error).toBeInstanceOf(AniLinkRestError);
    expect(error.status).toBe(401);
    expect(error.data).toEqual({ error: 'invalid_token', message: 'client id is required' });
    expect(server.requests).toHaveLength(1);
  });

  it.each<[string, (mal: Mal) => Promise<unknown>]>([
    ['anime.suggestions', (mal) => mal.anime.suggestions()],
    ['anime.updateMyListStatus (positional)', (mal) => mal.anime.updateMyListStatus(21, { score: 5 })],
    ['manga.deleteFromList (positional)', (mal) => mal.manga.deleteFromList(1)],
    ['user.me', (mal) => mal.user.me()],
  ])('%s still needs a token: AniLinkAuthError, nothing sent', async (_label, call) => {
    const error = await rejectionOf(call(bare().mal));
    expect(error).toBeInstanceOf(AniLinkAuthError);
    expect(server.requests).toHaveLength(0);
  });
});

describe('forum.topics', () => {
  it('accepts subboardId 0 (D26) and sends it', async () => {
    const request = await sent(client().mal, (mal) => mal.forum.topics({ boardId: 5, subboardId: 0 }));
    expect(request.query).toEqual({ board_id: '5', subboard_id: '0' });
  });
});
