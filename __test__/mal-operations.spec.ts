// End to end through the package entry: every one of the 19 MyAnimeList operations
// (api.md §9.2, §10, §4) against the scriptable test server: method, path under the slot's
// base URL, snake_case query names, `fields` (string, array, default lists of `get`), the
// client-id or bearer header, the form-encoded list-status body, and the parsed result.
// Also: token-only operations and parameter validation with nothing sent, MAL's HTML error
// pages, the no-retry default of REST writes (D1), MAL rate-limit pacing scoped to the MAL
// slot, the seed's provider-scoping example, and `mal.paginate` following `paging.next`.
import { performance } from 'node:perf_hooks';

import { describe, expect, it } from 'vitest';

import {
  AniLink,
  AniLinkApiError,
  AniLinkAuthError,
  AniLinkError,
  AniLinkRestError,
  AniLinkValidationError,
} from 'anilink-api-wrapper';
import { onlyRequest, rejectionOf, useTestServer } from './support/helpers';
import { graphqlData, type RecordedRequest, type TestServer } from './support/test-server';

const CLIENT_ID = 'cid';
const ACCESS_TOKEN = 'mal-token';
const FORM_TYPE = 'application/x-www-form-urlencoded';

type Mal = AniLink['mal'];

interface OperationCase {
  /** The catalog key of api.md §9.2, e.g. "anime.get". */
  operation: string;
  /** What this case shows about the operation. */
  label: string;
  /** `user` carries an access token, `public` only a client id. */
  client: 'public' | 'user';
  call: (mal: Mal) => Promise<unknown>;
  method: 'GET' | 'PATCH' | 'DELETE';
  path: string;
  /** The decoded query string; values may be asymmetric matchers. */
  query: Record<string, unknown>;
  /** The decoded form body of list-status writes. */
  form?: Record<string, string>;
  /** The JSON the server answers with (none: an empty 200); the call resolves it as is. */
  response: object | undefined;
}

/** A `fields` value that lists (at least) these names, comma-separated, in any order. */
function listing(...names: string[]): unknown {
  const lookaheads = names.map((name) => `(?=(?:.*,)?${name.replace(/[{}]/g, '\\$&')}(?:,|$))`).join('');
  return expect.stringMatching(new RegExp(`^${lookaheads}`));
}

const animeNode = { id: 30, title: 'Neon Genesis Evangelion' };
const listPage = (node: object) => ({ data: [{ node }], paging: {} });

/** One case per operation at least (several for `fields` forms and snake_case bodies). */
const CASES: OperationCase[] = [
  {
    operation: 'anime.get',
    label: 'default field list',
    client: 'public',
    call: (mal) => mal.anime.get({ id: 30 }),
    method: 'GET',
    path: '/v2/anime/30',
    query: { fields: listing('id', 'title', 'main_picture', 'synopsis', 'mean', 'genres', 'status', 'num_episodes') },
    response: animeNode,
  },
  {
    operation: 'anime.get',
    label: 'fields as an array',
    client: 'public',
    call: (mal) => mal.anime.get({ id: 30 }, { fields: ['id', 'title', 'mean'] }),
    method: 'GET',
    path: '/v2/anime/30',
    query: { fields: 'id,title,mean' },
    response: { ...animeNode, mean: 8.3 },
  },
  {
    operation: 'anime.get',
    label: 'fields as a string',
    client: 'user',
    call: (mal) => mal.anime.get({ id: 30 }, { fields: 'id,my_list_status{score}' }),
    method: 'GET',
    path: '/v2/anime/30',
    query: { fields: 'id,my_list_status{score}' },
    response: { ...animeNode, my_list_status: { score: 9 } },
  },
  {
    operation: 'anime.search',
    label: 'q, limit, offset and fields',
    client: 'public',
    call: (mal) => mal.anime.search({ q: 'evangelion', limit: 10, offset: 20 }, { fields: ['id', 'title'] }),
    method: 'GET',
    path: '/v2/anime',
    query: { q: 'evangelion', limit: '10', offset: '20', fields: 'id,title' },
    response: listPage(animeNode),
  },
  {
    operation: 'anime.seasonal',
    label: 'year and season in the path',
    client: 'public',
    call: (mal) => mal.anime.seasonal({ year: 2024, season: 'fall', sort: 'anime_score', limit: 5, offset: 10 }),
    method: 'GET',
    path: '/v2/anime/season/2024/fall',
    query: { sort: 'anime_score', limit: '5', offset: '10' },
    response: { ...listPage(animeNode), season: { year: 2024, season: 'fall' } },
  },
  {
    operation: 'anime.ranking',
    label: 'rankingType as ranking_type',
    client: 'public',
    call: (mal) => mal.anime.ranking({ rankingType: 'bypopularity', limit: 3, offset: 0 }),
    method: 'GET',
    path: '/v2/anime/ranking',
    query: { ranking_type: 'bypopularity', limit: '3', offset: '0' },
    response: { data: [{ node: animeNode, ranking: { rank: 1 } }], paging: {} },
  },
  {
    operation: 'anime.suggestions',
    label: 'options as the first argument',
    client: 'user',
    call: (mal) => mal.anime.suggestions({ fields: ['id', 'title'], timeout: 5_000 }),
    method: 'GET',
    path: '/v2/anime/suggestions',
    query: { fields: 'id,title' },
    response: listPage(animeNode),
  },
  {
    operation: 'anime.suggestions',
    label: 'no argument at all',
    client: 'user',
    call: (mal) => mal.anime.suggestions(),
    method: 'GET',
    path: '/v2/anime/suggestions',
    query: {},
    response: listPage(animeNode),
  },
  {
    operation: 'anime.updateMyListStatus',
    label: 'camelCase params as a form body, tags comma-joined',
    client: 'user',
    call: (mal) =>
      mal.anime.updateMyListStatus({
        id: 30,
        status: 'watching',
        numWatchedEpisodes: 3,
        score: 8,
        isRewatching: false,
        priority: 2,
        numTimesRewatched: 1,
        rewatchValue: 4,
        tags: ['comfy', 'second watch'],
        comments: 'so good & sad',
      }),
    method: 'PATCH',
    path: '/v2/anime/30/my_list_status',
    query: {},
    form: {
      status: 'watching',
      num_watched_episodes: '3',
      score: '8',
      is_rewatching: 'false',
      priority: '2',
      num_times_rewatched: '1',
      rewatch_value: '4',
      tags: 'comfy,second watch',
      comments: 'so good & sad',
    },
    response: {
      status: 'watching',
      score: 8,
      num_episodes_watched: 3,
      is_rewatching: false,
      tags: ['comfy', 'second watch'],
    },
  },
  {
    operation: 'anime.updateMyListStatus',
    label: "MAL's snake_case names, as api.md lists them",
    client: 'user',
    call: (mal) =>
      mal.anime.updateMyListStatus({ id: 30, status: 'completed', num_watched_episodes: 26, is_rewatching: true }),
    method: 'PATCH',
    path: '/v2/anime/30/my_list_status',
    query: {},
    form: { status: 'completed', num_watched_episodes: '26', is_rewatching: 'true' },
    response: { status: 'completed', num_episodes_watched: 26, is_rewatching: true },
  },
  {
    operation: 'anime.deleteFromList',
    label: 'DELETE of the list entry',
    client: 'user',
    call: (mal) => mal.anime.deleteFromList({ id: 30 }),
    method: 'DELETE',
    path: '/v2/anime/30/my_list_status',
    query: {},
    response: undefined,
  },
  {
    operation: 'manga.get',
    label: 'default field list',
    client: 'public',
    call: (mal) => mal.manga.get({ id: 2 }),
    method: 'GET',
    path: '/v2/manga/2',
    query: {
      fields: listing(
        'id',
        'title',
        'main_picture',
        'synopsis',
        'mean',
        'genres',
        'status',
        'num_chapters',
        'num_volumes',
      ),
    },
    response: { id: 2, title: 'Berserk' },
  },
  {
    operation: 'manga.search',
    label: 'q with reserved characters, the maximum limit',
    client: 'public',
    call: (mal) => mal.manga.search({ q: 'berserk: golden age & more+', limit: 100 }),
    method: 'GET',
    path: '/v2/manga',
    query: { q: 'berserk: golden age & more+', limit: '100' },
    response: listPage({ id: 2, title: 'Berserk' }),
  },
  {
    operation: 'manga.ranking',
    label: 'rankingType as ranking_type',
    client: 'public',
    call: (mal) => mal.manga.ranking({ rankingType: 'manhwa', limit: 2 }, { fields: 'id' }),
    method: 'GET',
    path: '/v2/manga/ranking',
    query: { ranking_type: 'manhwa', limit: '2', fields: 'id' },
    response: { data: [{ node: { id: 2, title: 'Berserk' }, ranking: { rank: 1 } }], paging: {} },
  },
  {
    operation: 'manga.updateMyListStatus',
    label: 'camelCase params as a form body',
    client: 'user',
    call: (mal) =>
      mal.manga.updateMyListStatus({
        id: 2,
        status: 'reading',
        numChaptersRead: 12,
        numVolumesRead: 1,
        isRereading: true,
        score: 0,
        priority: 0,
        numTimesReread: 0,
        rereadValue: 5,
        tags: ['dark'],
        comments: 'rereading',
      }),
    method: 'PATCH',
    path: '/v2/manga/2/my_list_status',
    query: {},
    form: {
      status: 'reading',
      num_chapters_read: '12',
      num_volumes_read: '1',
      is_rereading: 'true',
      score: '0',
      priority: '0',
      num_times_reread: '0',
      reread_value: '5',
      tags: 'dark',
      comments: 'rereading',
    },
    response: { status: 'reading', num_chapters_read: 12, num_volumes_read: 1, is_rereading: true, score: 0 },
  },
  {
    operation: 'manga.updateMyListStatus',
    label: "MAL's snake_case names, as api.md lists them",
    client: 'user',
    call: (mal) =>
      mal.manga.updateMyListStatus({ id: 2, status: 'plan_to_read', num_chapters_read: 0, reread_value: 1 }),
    method: 'PATCH',
    path: '/v2/manga/2/my_list_status',
    query: {},
    form: { status: 'plan_to_read', num_chapters_read: '0', reread_value: '1' },
    response: { status: 'plan_to_read', num_chapters_read: 0 },
  },
  {
    operation: 'manga.deleteFromList',
    label: 'DELETE of the list entry',
    client: 'user',
    call: (mal) => mal.manga.deleteFromList({ id: 2 }),
    method: 'DELETE',
    path: '/v2/manga/2/my_list_status',
    query: {},
    response: undefined,
  },
  {
    operation: 'user.me',
    label: 'options as the first argument',
    client: 'user',
    call: (mal) => mal.user.me({ fields: 'id,name,anime_statistics' }),
    method: 'GET',
    path: '/v2/users/@me',
    query: { fields: 'id,name,anime_statistics' },
    response: { id: 1, name: 'me' },
  },
  {
    operation: 'user.get',
    label: 'a public user, default field list',
    client: 'public',
    call: (mal) => mal.user.get({ username: 'Xinil' }),
    method: 'GET',
    path: '/v2/users/Xinil',
    query: { fields: listing('id', 'name') },
    response: { id: 4, name: 'Xinil' },
  },
  {
    operation: 'user.get',
    label: 'a user name that stays one path segment',
    client: 'public',
    call: (mal) => mal.user.get({ username: 'a/b c' }, { fields: 'id' }),
    method: 'GET',
    path: '/v2/users/a%2Fb%20c',
    query: { fields: 'id' },
    response: { id: 5 },
  },
  {
    operation: 'user.get',
    label: '@me in any case, trimmed',
    client: 'user',
    call: (mal) => mal.user.get({ username: ' @ME ' }, { fields: ['id'] }),
    method: 'GET',
    path: '/v2/users/@me',
    query: { fields: 'id' },
    response: { id: 1 },
  },
  {
    operation: 'user.animeList',
    label: 'status, sort, the maximum limit and offset',
    client: 'public',
    call: (mal) =>
      mal.user.animeList({ username: 'someone', status: 'watching', sort: 'list_score', limit: 1000, offset: 5 }),
    method: 'GET',
    path: '/v2/users/someone/animelist',
    query: { status: 'watching', sort: 'list_score', limit: '1000', offset: '5' },
    response: { data: [{ node: animeNode, list_status: { status: 'watching' } }], paging: {} },
  },
  {
    operation: 'user.mangaList',
    label: "the token owner's list",
    client: 'user',
    call: (mal) => mal.user.mangaList({ username: '@me', status: 'reading', sort: 'manga_title' }),
    method: 'GET',
    path: '/v2/users/@me/mangalist',
    query: { status: 'reading', sort: 'manga_title' },
    response: { data: [{ node: { id: 2, title: 'Berserk' }, list_status: { status: 'reading' } }], paging: {} },
  },
  {
    operation: 'forum.boards',
    label: 'options as the first argument',
    client: 'public',
    call: (mal) => mal.forum.boards({ timeout: 5_000 }),
    method: 'GET',
    path: '/v2/forum/boards',
    query: {},
    response: { categories: [{ title: 'MyAnimeList', boards: [{ id: 5, title: 'Updates', subboards: [] }] }] },
  },
  {
    operation: 'forum.topics',
    label: 'every filter, snake_case',
    client: 'public',
    call: (mal) =>
      mal.forum.topics({
        boardId: 5,
        subboardId: 2,
        q: 'season',
        topicUserName: 'starter',
        userName: 'poster',
        sort: 'recent',
        limit: 100,
        offset: 0,
      }),
    method: 'GET',
    path: '/v2/forum/topics',
    query: {
      board_id: '5',
      subboard_id: '2',
      q: 'season',
      topic_user_name: 'starter',
      user_name: 'poster',
      sort: 'recent',
      limit: '100',
      offset: '0',
    },
    response: { data: [{ id: 481, title: 'Season talk' }], paging: {} },
  },
  {
    operation: 'forum.topics',
    label: 'no filter at all',
    client: 'public',
    call: (mal) => mal.forum.topics(),
    method: 'GET',
    path: '/v2/forum/topics',
    query: {},
    response: { data: [], paging: {} },
  },
  {
    operation: 'forum.topic',
    label: 'id in the path, posts paging',
    client: 'public',
    call: (mal) => mal.forum.topic({ id: 481, limit: 10, offset: 20 }),
    method: 'GET',
    path: '/v2/forum/topic/481',
    query: { limit: '10', offset: '20' },
    response: { data: { title: 'Season talk', posts: [{ id: 1, body: 'hi' }] }, paging: {} },
  },
];

/** api.md §9.2: the 19 operations, by namespace. */
const SPEC_OPERATIONS = {
  anime: ['get', 'search', 'seasonal', 'ranking', 'suggestions', 'updateMyListStatus', 'deleteFromList'],
  manga: ['get', 'search', 'ranking', 'updateMyListStatus', 'deleteFromList'],
  user: ['me', 'get', 'animeList', 'mangaList'],
  forum: ['boards', 'topics', 'topic'],
};

let server: TestServer;
let malBase: string;
/** A client id only. */
let publicClient: AniLink;
/** An access token (and a client id, which must then not be sent). */
let userClient: AniLink;

useTestServer((started) => {
  server = started;
  malBase = `${server.url}/v2`;
  publicClient = new AniLink({ mal: { baseUrl: malBase, clientId: CLIENT_ID } });
  userClient = new AniLink({ mal: { baseUrl: malBase, clientId: CLIENT_ID, accessToken: ACCESS_TOKEN } });
});

describe('the operation surface', () => {
  it('has exactly the 19 operations of api.md §9.2, plus the paginators', () => {
    const { mal } = publicClient;
    for (const [namespace, names] of Object.entries(SPEC_OPERATIONS)) {
      expect(Object.keys(mal[namespace as keyof typeof SPEC_OPERATIONS]).sort()).toEqual([...names].sort());
    }
    expect(typeof mal.paginate).toBe('function');
    expect(typeof mal.paginatePages).toBe('function');
  });

  it('has a case below for every operation', () => {
    const covered = new Set(CASES.map((entry) => entry.operation));
    const all = Object.entries(SPEC_OPERATIONS).flatMap(([namespace, names]) =>
      names.map((name) => `${namespace}.${name}`),
    );
    expect([...covered].sort()).toEqual(all.sort());
  });
});

describe.each(CASES.map((entry) => [`${entry.operation}: ${entry.label}`, entry] as const))(
  'mal.%s',
  (_title, entry) => {
    it('sends the documented request and resolves the parsed result', async () => {
      server.enqueue(entry.response === undefined ? { status: 200 } : { body: entry.response });
      const client = entry.client === 'user' ? userClient : publicClient;

      const result = await entry.call(client.mal);

      expect(result).toEqual(entry.response);
      const request = onlyRequest(server);
      expect(request.method).toBe(entry.method);
      expect(request.path).toBe(entry.path);
      expect(Object.fromEntries(request.query)).toEqual(entry.query);
      if (entry.client === 'user') {
        expect(request.headers.authorization).toBe(`Bearer ${ACCESS_TOKEN}`);
        expect(request.headers['x-mal-client-id']).toBeUndefined();
      } else {
        expect(request.headers['x-mal-client-id']).toBe(CLIENT_ID);
        expect(request.headers.authorization).toBeUndefined();
      }
      if (entry.form) {
        expect(request.headers['content-type']).toMatch(new RegExp(`^${FORM_TYPE}\\b`));
        expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual(entry.form);
      } else {
        expect(request.body).toBe('');
      }
    });
  },
);

describe('deleteFromList', () => {
  it.each([
    ['an empty body', { status: 200 }],
    ['MAL\'s "[]" body', { status: 200, body: [] }],
  ])('resolves undefined on %s', async (_label, response) => {
    server.enqueue(response);
    await expect(userClient.mal.anime.deleteFromList({ id: 30 })).resolves.toBeUndefined();
    server.enqueue(response);
    await expect(userClient.mal.manga.deleteFromList({ id: 2 })).resolves.toBeUndefined();
    expect(server.requests.map((request) => request.method)).toEqual(['DELETE', 'DELETE']);
  });
});

describe('token-only operations without a token', () => {
  it.each<[string, (mal: Mal) => Promise<unknown>]>([
    ['anime.suggestions', (mal) => mal.anime.suggestions()],
    ['anime.updateMyListStatus', (mal) => mal.anime.updateMyListStatus({ id: 1, score: 5 })],
    ['anime.deleteFromList', (mal) => mal.anime.deleteFromList({ id: 1 })],
    ['manga.updateMyListStatus', (mal) => mal.manga.updateMyListStatus({ id: 1, score: 5 })],
    ['manga.deleteFromList', (mal) => mal.manga.deleteFromList({ id: 1 })],
    ['user.me', (mal) => mal.user.me()],
    ['user.get @me', (mal) => mal.user.get({ username: '@me' })],
    ['user.animeList @me', (mal) => mal.user.animeList({ username: '@Me' })],
    ['user.mangaList @me', (mal) => mal.user.mangaList({ username: ' @me' })],
  ])('%s rejects with AniLinkAuthError, nothing sent', async (_name, call) => {
    const error = await rejectionOf(call(publicClient.mal));
    expect(error).toBeInstanceOf(AniLinkAuthError);
    expect((error as AniLinkAuthError).code).toBe('AUTH_ERROR');
    expect(server.requests).toHaveLength(0);
  });
});

describe('parameter validation before dispatch', () => {
  async function details(call: Promise<unknown>): Promise<readonly string[]> {
    const error = await rejectionOf(call);
    expect(error).toBeInstanceOf(AniLinkValidationError);
    expect(error).toBeInstanceOf(AniLinkError);
    const validation = error as AniLinkValidationError;
    expect(validation.code).toBe('VALIDATION_ERROR');
    expect(validation.message).toBe(`Request variables are invalid:\n${validation.details.join('\n')}`);
    expect(server.requests).toHaveLength(0);
    return validation.details;
  }

  it.each<[string, (mal: Mal) => Promise<unknown>, RegExp]>([
    ['a blank q', (mal) => mal.anime.search({ q: '   ' }), /\bq\b/],
    ['an empty q', (mal) => mal.manga.search({ q: '' }), /\bq\b/],
    ['a search limit above 100', (mal) => mal.anime.search({ q: 'x', limit: 101 }), /\blimit\b.*101/],
    ['a zero limit', (mal) => mal.anime.search({ q: 'x', limit: 0 }), /\blimit\b/],
    ['a list limit above 1000', (mal) => mal.user.animeList({ username: 'x', limit: 1001 }), /\blimit\b.*1001/],
    ['a forum limit above 100', (mal) => mal.forum.topics({ limit: 101 }), /\blimit\b.*101/],
    ['a topic posts limit above 100', (mal) => mal.forum.topic({ id: 1, limit: 101 }), /\blimit\b.*101/],
    ['a negative offset', (mal) => mal.anime.search({ q: 'x', offset: -1 }), /\boffset\b/],
    ['a blank username', (mal) => mal.user.get({ username: '  ' }), /\busername\b/],
    ['a missing id', (mal) => mal.anime.get({} as never), /\bid\b/],
    ['an id that is not a number', (mal) => mal.manga.get({ id: '2' } as never), /\bid\b/],
    ['an unknown param', (mal) => mal.anime.get({ id: 1, title: 'x' } as never), /\btitle\b/],
  ])('rejects %s', async (_label, call, mentions) => {
    const found = await details(call(publicClient.mal));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(mentions);
  });

  it('lists the allowed values of a bad enum (api.md §5 format)', async () => {
    expect(await details(publicClient.mal.anime.seasonal({ year: 2024, season: 'autumn' } as never))).toEqual([
      'Invalid season: "autumn". Expected one of: winter, spring, summer, fall',
    ]);
    expect(await details(publicClient.mal.anime.ranking({ rankingType: 'novels' } as never))).toEqual([
      'Invalid rankingType: "novels". Expected one of: all, airing, upcoming, tv, ova, movie, special, bypopularity, favorite',
    ]);
    expect(await details(publicClient.mal.manga.ranking({ rankingType: 'tv' } as never))).toEqual([
      'Invalid rankingType: "tv". Expected one of: all, manga, novels, oneshots, doujin, manhwa, manhua, bypopularity, favorite',
    ]);
    expect(await details(publicClient.mal.user.animeList({ username: 'x', sort: 'manga_title' } as never))).toEqual([
      'Invalid sort: "manga_title". Expected one of: list_score, list_updated_at, anime_title, anime_start_date, anime_id',
    ]);
  });

  it('checks list-status values', async () => {
    const update = userClient.mal.anime;
    expect(await details(update.updateMyListStatus({ id: 1, status: 'reading' } as never))).toEqual([
      'Invalid status: "reading". Expected one of: watching, completed, on_hold, dropped, plan_to_watch',
    ]);
    for (const [params, name] of [
      [{ id: 1, score: 11 }, 'score'],
      [{ id: 1, score: -1 }, 'score'],
      [{ id: 1, rewatchValue: 6 }, 'rewatchValue'],
      [{ id: 1, priority: 3 }, 'priority'],
    ] as const) {
      const found = await details(update.updateMyListStatus(params as never));
      expect(found).toHaveLength(1);
      expect(found[0]).toContain(name);
    }
    expect(await details(userClient.mal.manga.updateMyListStatus({ id: 1, status: 'watching' } as never))).toEqual([
      'Invalid status: "watching". Expected one of: reading, completed, on_hold, dropped, plan_to_read',
    ]);
  });

  it('requires at least one list field in an update', async () => {
    expect(await details(userClient.mal.anime.updateMyListStatus({ id: 1 }))).toHaveLength(1);
    expect(await details(userClient.mal.manga.updateMyListStatus({ id: 1 }))).toHaveLength(1);
  });

  it('reports every problem at once', async () => {
    expect(await details(publicClient.mal.anime.search({ q: ' ', limit: 101, offset: -1 }))).toHaveLength(3);
  });
});

describe('failures', () => {
  const htmlPage = '<!DOCTYPE html><html><body><h1>503 Service Temporarily Unavailable</h1></body></html>';

  it('surfaces an HTML 503 page as AniLinkRestError with its content type, after 4 attempts', async () => {
    const attempts: { requestId: string; url: string; method: string; attempt: number }[] = [];
    const retrying = new AniLink({
      mal: {
        baseUrl: malBase,
        clientId: CLIENT_ID,
        retry: { baseDelayMs: 5, jitter: false },
        onRequestStart: ({ requestId, url, method, attempt }) => attempts.push({ requestId, url, method, attempt }),
      },
    });
    server.setDefault({ status: 503, headers: { 'content-type': 'text/html; charset=utf-8' }, body: htmlPage });

    const error = await rejectionOf(retrying.mal.anime.get({ id: 1 }, { fields: 'id' }));

    expect(error).toBeInstanceOf(AniLinkRestError);
    expect(error).toBeInstanceOf(AniLinkApiError);
    const rest = error as AniLinkRestError;
    expect(rest.code).toBe('REST_ERROR');
    expect(rest.status).toBe(503);
    expect(rest.contentType).toMatch(/^text\/html/);
    expect(rest.data).toBe(htmlPage);
    expect(rest.message).toBe('API request failed with status 503.');
    expect(server.requests).toHaveLength(4);
    // One request id across the attempts, the one the error carries (D16).
    expect(attempts).toEqual(
      [1, 2, 3, 4].map((attempt) => ({
        requestId: rest.requestId,
        url: `${malBase}/anime/1?fields=id`,
        method: 'GET',
        attempt,
      })),
    );
    expect(rest.requestId).toEqual(expect.any(String));
  });

  it('surfaces a JSON 404 at once, its body parsed', async () => {
    server.enqueue({ status: 404, body: { error: 'not_found', message: '' } });

    const error = await rejectionOf<AniLinkRestError>(publicClient.mal.anime.get({ id: 999999 }));

    expect(error).toBeInstanceOf(AniLinkRestError);
    expect(error.status).toBe(404);
    expect(error.data).toEqual({ error: 'not_found', message: '' });
    expect(error.contentType).toMatch(/^application\/json/);
    expect(server.requests).toHaveLength(1);
  });

  it('never retries list writes by default (D1)', async () => {
    server.setDefault({ status: 503, body: { error: 'unavailable' } });

    await expect(userClient.mal.anime.updateMyListStatus({ id: 1, score: 7 })).rejects.toBeInstanceOf(AniLinkRestError);
    await expect(userClient.mal.manga.deleteFromList({ id: 1 })).rejects.toBeInstanceOf(AniLinkRestError);
    expect(server.requests.map((request) => request.method)).toEqual(['PATCH', 'DELETE']);
  });

  it('retries list writes when the slot opts in with a policy (D1)', async () => {
    const optedIn = new AniLink({
      mal: { baseUrl: malBase, accessToken: ACCESS_TOKEN, retry: { maxRetries: 2, baseDelayMs: 5, jitter: false } },
    });
    server.setDefault({ status: 503, body: { error: 'unavailable' } });

    await expect(optedIn.mal.anime.updateMyListStatus({ id: 1, score: 7 })).rejects.toBeInstanceOf(AniLinkRestError);
    expect(server.requests).toHaveLength(3);
    expect(new Set(server.requests.map((request) => request.body))).toEqual(new Set(['score=7']));
  });
});

describe('provider slots', () => {
  const isMal = (request: RecordedRequest) => request.path.startsWith('/v2/');

  it("paces the MAL slot on MAL's X-RateLimit-* headers, and only the MAL slot", async () => {
    const paces: number[] = [];
    const both = new AniLink({
      anilist: { baseUrl: server.url },
      mal: { baseUrl: malBase, clientId: CLIENT_ID, onPace: ({ delayMs }) => paces.push(delayMs) },
    });
    // At least a second and a half away, so an unpaced request cannot be mistaken for a paced one.
    const resetSeconds = Math.ceil(Date.now() / 1000 + 1.5);
    server.enqueue({
      headers: { 'X-RateLimit-Limit': '60', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(resetSeconds) },
      body: animeNode,
    });

    // The response that sets the deadline comes back at once.
    await expect(both.mal.anime.get({ id: 30 }, { fields: 'id,title' })).resolves.toEqual(animeNode);
    const state = both.getTransportState();
    expect(state.mal.paceDeadlines).toEqual([{ host: server.host, deadlineMs: resetSeconds * 1000 }]);
    expect(state.anilist.paceDeadlines).toEqual([]);

    server.setDefault((request) => (isMal(request) ? { body: animeNode } : { body: graphqlData('Media', { id: 1 }) }));
    const startedAt = performance.now();
    await Promise.all([both.mal.anime.get({ id: 30 }, { fields: 'id' }), both.anilist.query.media({ id: 1 })]);

    const [malRequest] = server.requests.filter((request) => isMal(request)).slice(1);
    const [aniListRequest] = server.requests.filter((request) => !isMal(request));
    const wallClock = (request: RecordedRequest) => performance.timeOrigin + request.receivedAt;
    expect(aniListRequest.receivedAt - startedAt).toBeLessThan(1000);
    expect(wallClock(malRequest)).toBeGreaterThanOrEqual(resetSeconds * 1000 - 50);
    expect(wallClock(malRequest)).toBeLessThan(resetSeconds * 1000 + 1500);
    expect(paces).toHaveLength(1);
    expect(paces[0]).toBeGreaterThan(1000);
  });

  it('applies retry: false to MAL and the default policy to AniList (the seed example)', async () => {
    const scoped = new AniLink({
      anilist: { authToken: 't', paceWithRateLimit: true, baseUrl: server.url },
      mal: { accessToken: 'm', retry: false, baseUrl: malBase },
    });
    let aniListAttempts = 0;
    server.handle((request) => {
      if (isMal(request)) return { status: 503, body: { error: 'unavailable' } };
      aniListAttempts += 1;
      return aniListAttempts === 1 ? { status: 503, body: 'unavailable' } : { body: graphqlData('Media', { id: 1 }) };
    });

    await expect(scoped.mal.anime.get({ id: 1 })).rejects.toBeInstanceOf(AniLinkRestError);
    await expect(scoped.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });

    const malRequests = server.requests.filter(isMal);
    const aniListRequests = server.requests.filter((request) => !isMal(request));
    expect(malRequests).toHaveLength(1);
    expect(malRequests[0].headers.authorization).toBe('Bearer m');
    expect(aniListRequests).toHaveLength(2);
    expect(aniListRequests[0].headers.authorization).toBe('Bearer t');
  });
});

describe('mal.paginate', () => {
  it('walks anime.search pages while paging.next is present', async () => {
    const total = 6;
    server.setDefault((request) => {
      const limit = Number(request.query.get('limit'));
      const offset = Number(request.query.get('offset') ?? 0);
      const ids = Array.from(
        { length: Math.max(0, Math.min(limit, total - offset)) },
        (_, index) => offset + index + 1,
      );
      const next = offset + limit < total ? `${malBase}/anime?q=x&limit=${limit}&offset=${offset + limit}` : undefined;
      return { body: { data: ids.map((id) => ({ node: { id, title: `t${id}` } })), paging: next ? { next } : {} } };
    });
    const { mal } = publicClient;

    const result = await mal.paginate(
      (page, perPage) => mal.anime.search({ q: 'x', limit: perPage, offset: (page - 1) * perPage }),
      { perPage: 2 },
    );

    expect(result.items.map((entry) => entry.node.id)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(result.pageCount).toBe(3);
    expect(result.truncated).toBe(false);
    // The last page is full, so only paging.next can tell the walk to stop.
    expect(server.requests.map((request) => Object.fromEntries(request.query))).toEqual(
      [0, 2, 4].map((offset) => ({ q: 'x', limit: '2', offset: String(offset) })),
    );
  });
});
