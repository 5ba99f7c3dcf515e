// The pure helpers (api.md §9.1 "Helpers", §11): fuzzy dates, MediaListCollection flattening,
// AniList↔MAL id maps, and the OAuth authorize-URL and token-expiry helpers. Each is checked
// through the package entries and the `aniLink.anilist` namespace; only the one end-to-end
// test (a real `mediaListCollection` result fed to the flattener) talks to the test server.
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ANILIST_AUTHORIZE_URL,
  AniLink,
  MAL_AUTHORIZE_URL,
  buildAuthorizationUrl,
  buildMalAuthorizationUrl,
  crossLink,
  fuzzyDate,
  fuzzyDateInt,
  getMalTokenExpiry,
  getTokenExpiry,
} from 'anilink-api-wrapper';
import { useTestServer } from './support/helpers';
import { graphqlData, type TestServer } from './support/test-server';

const { flattenMediaListCollection } = new AniLink().anilist;

afterEach(() => {
  vi.restoreAllMocks();
});

/** The error `run` throws (fails the test when it does not throw). */
function thrownBy(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to throw');
}

/** Asserts `run` throws a TypeError whose message contains every fragment. */
function expectTypeError(run: () => unknown, ...fragments: string[]): TypeError {
  const error = thrownBy(run);
  expect(error).toBeInstanceOf(TypeError);
  for (const fragment of fragments) expect(error.message).toContain(fragment);
  return error as TypeError;
}

describe('fuzzyDate and fuzzyDateInt', () => {
  it('fill every missing part with 0', () => {
    expect(fuzzyDate({ year: 2024, month: 4, day: 15 })).toEqual({ year: 2024, month: 4, day: 15 });
    expect(fuzzyDate({ year: 2024 })).toEqual({ year: 2024, month: 0, day: 0 });
    expect(fuzzyDate({ month: 4 })).toEqual({ year: 0, month: 4, day: 0 });
    expect(fuzzyDate()).toEqual({ year: 0, month: 0, day: 0 });
    expect(fuzzyDate({})).toEqual({ year: 0, month: 0, day: 0 });
    expect(fuzzyDateInt({ year: 2024, month: 4, day: 15 })).toBe(20240415);
    expect(fuzzyDateInt({ year: 1998, month: 4 })).toBe(19980400);
    expect(fuzzyDateInt({ year: 2024 })).toBe(20240000);
    expect(fuzzyDateInt()).toBe(0);
  });

  it('read an AniList FuzzyDate (null parts) as unknown parts', () => {
    const startDate = { year: 2023, month: 9, day: null };
    expect(fuzzyDate(startDate)).toEqual({ year: 2023, month: 9, day: 0 });
    expect(fuzzyDateInt(startDate)).toBe(20230900);
    expect(fuzzyDateInt(null)).toBe(0);
  });

  it('return a fresh object with only the three parts', () => {
    const options = { year: 2024, month: 1, day: 2, extra: true };
    const date = fuzzyDate(options);
    expect(Object.keys(date)).toEqual(['year', 'month', 'day']);
    expect(date).not.toBe(options);
  });

  it.each([
    [{ month: 13 }, 'month must be an integer from 0 to 12', 'the number 13'],
    [{ day: 32 }, 'day must be an integer from 0 to 31', 'the number 32'],
    [{ year: -1 }, 'year must be an integer from 0 to 9999', 'the number -1'],
    [{ year: 10000 }, 'year must be an integer from 0 to 9999', 'the number 10000'],
    [{ year: 2024.5 }, 'year must be an integer', 'the number 2024.5'],
    [{ year: Number.NaN }, 'year must be an integer', 'NaN'],
    [{ year: '2024' }, 'year must be an integer', 'a string'],
  ])('reject %o with a TypeError naming the part and the rule', (options, rule, received) => {
    expectTypeError(() => fuzzyDate(options as never), 'fuzzyDate:', rule, `received ${received}`);
    expectTypeError(() => fuzzyDateInt(options as never), 'fuzzyDateInt:', rule, `received ${received}`);
  });

  it('reject options that are not an object', () => {
    expectTypeError(() => fuzzyDate('2024-04-15' as never), 'fuzzyDate: options must be an object', 'a string');
    expectTypeError(() => fuzzyDateInt([2024, 4, 15] as never), 'fuzzyDateInt: options must be an object', 'an array');
  });
});

describe('flattenMediaListCollection', () => {
  const entry = (id: number, mediaId: number, status: string, extra: object = {}) => ({
    id,
    userId: 7,
    mediaId,
    status,
    score: id / 10,
    progress: id * 2,
    media: { id: mediaId, title: { romaji: `media ${mediaId}` } },
    ...extra,
  });
  const collection = {
    lists: [
      {
        name: 'Watching',
        isCustomList: false,
        isSplitCompletedList: false,
        entries: [entry(1, 101, 'CURRENT'), entry(2, 102, 'CURRENT')],
      },
      { name: 'Completed TV', isCustomList: false, isSplitCompletedList: true, entries: [entry(3, 103, 'COMPLETED')] },
      {
        name: 'Favourites',
        isCustomList: true,
        isSplitCompletedList: false,
        entries: [entry(3, 103, 'COMPLETED'), entry(1, 101, 'CURRENT'), entry(4, 104, 'PLANNING')],
      },
      { name: 'Rewatch', isCustomList: true, isSplitCompletedList: false, entries: [entry(1, 101, 'CURRENT')] },
    ],
  };

  it('keeps one entry per id, in first-seen order, with every group it appears in', () => {
    const flattened = flattenMediaListCollection(collection);

    expect(flattened.map((item) => item.id)).toEqual([1, 2, 3, 4]);
    expect(flattened[0]).toEqual({
      id: 1,
      userId: 7,
      mediaId: 101,
      status: 'CURRENT',
      score: 0.1,
      progress: 2,
      listNames: ['Watching', 'Favourites', 'Rewatch'],
      inCustomList: true,
      inSplitCompletedList: false,
    });
    expect(flattened[1]).toMatchObject({ listNames: ['Watching'], inCustomList: false, inSplitCompletedList: false });
    expect(flattened[2]).toMatchObject({
      listNames: ['Completed TV', 'Favourites'],
      inCustomList: true,
      inSplitCompletedList: true,
    });
  });

  it('includes entries that sit only in a custom list', () => {
    const onlyCustom = flattenMediaListCollection(collection).find((item) => item.id === 4);
    expect(onlyCustom).toMatchObject({
      mediaId: 104,
      status: 'PLANNING',
      listNames: ['Favourites'],
      inCustomList: true,
    });
  });

  it('copies the list-entry fields only, not the embedded media', () => {
    const [first] = flattenMediaListCollection(collection);
    expect(first).not.toHaveProperty('media');
  });

  it('names a group once even when it lists an entry twice', () => {
    const twice = {
      lists: [
        {
          name: 'Watching',
          isCustomList: false,
          isSplitCompletedList: false,
          entries: [entry(1, 101, 'CURRENT'), entry(1, 101, 'CURRENT')],
        },
      ],
    };
    expect(flattenMediaListCollection(twice)).toEqual([expect.objectContaining({ id: 1, listNames: ['Watching'] })]);
  });

  it('gives [] for no collection, no lists or empty groups', () => {
    expect(flattenMediaListCollection(null)).toEqual([]);
    expect(flattenMediaListCollection(undefined)).toEqual([]);
    expect(flattenMediaListCollection({})).toEqual([]);
    expect(flattenMediaListCollection({ lists: null })).toEqual([]);
    expect(
      flattenMediaListCollection({
        lists: [
          { name: 'Paused', entries: null },
          { name: 'Dropped', entries: [] },
        ],
      }),
    ).toEqual([]);
  });

  it.each([
    ['a string', 'collection', 'the argument must be a MediaListCollection object', 'a string'],
    ['lists that are not an array', { lists: {} }, 'lists must be an array', 'a value of type object'],
    ['a group that is not an object', { lists: [null] }, 'lists[0] must be a list group object', 'null'],
    [
      'entries that are not an array',
      { lists: [{ name: 'A', entries: 'x' }] },
      'lists[0].entries must be an array',
      'a string',
    ],
    [
      'a null entry',
      { lists: [{ name: 'A', entries: [entry(1, 1, 'CURRENT'), null] }] },
      'lists[0].entries[1] must be an object with an integer id',
      'null',
    ],
    [
      'an entry without an id',
      {
        lists: [
          { name: 'A', entries: [] },
          { name: 'B', entries: [{ mediaId: 5 }] },
        ],
      },
      'lists[1].entries[0] must be an object with an integer id',
      'a value of type undefined',
    ],
    [
      'an entry with a string id',
      { lists: [{ name: 'A', entries: [{ id: '1' }] }] },
      'lists[0].entries[0] must be an object with an integer id',
      'a string',
    ],
  ])('rejects %s with a TypeError naming where', (_label, input, rule, received) => {
    expectTypeError(
      () => flattenMediaListCollection(input as never),
      'flattenMediaListCollection:',
      rule,
      `received ${received}`,
    );
  });

  describe('on a real mediaListCollection result', () => {
    let server: TestServer;
    useTestServer((started) => {
      server = started;
    });

    it('flattens what query.mediaListCollection resolves', async () => {
      server.enqueue({ body: graphqlData('MediaListCollection', { ...collection, hasNextChunk: false }) });
      const aniLink = new AniLink({ anilist: { baseUrl: server.url, retry: false } });

      const result = await aniLink.anilist.query.mediaListCollection({ userId: 7, type: 'ANIME' });
      const flattened = aniLink.anilist.flattenMediaListCollection(result);

      expect(flattened.map((item) => [item.id, item.listNames])).toEqual([
        [1, ['Watching', 'Favourites', 'Rewatch']],
        [2, ['Watching']],
        [3, ['Completed TV', 'Favourites']],
        [4, ['Favourites']],
      ]);
    });
  });
});

describe('crossLink', () => {
  const media = [
    { id: 1, idMal: 1, title: 'Cowboy Bebop' },
    { id: 5, idMal: null, title: 'no MAL entry' },
    { id: 21, idMal: 21, title: 'One Piece' },
    { id: 99, title: 'idMal not selected' },
    { id: 22, idMal: 21, title: 'shares MAL id 21' },
  ];

  it('maps AniList ids to MAL ids and back; the last media wins a shared MAL id', () => {
    const { anilistToMal, malToAnilist } = crossLink(media);

    expect(anilistToMal).toBeInstanceOf(Map);
    expect([...anilistToMal]).toEqual([
      [1, 1],
      [21, 21],
      [22, 21],
    ]);
    expect([...malToAnilist]).toEqual([
      [1, 1],
      [21, 22],
    ]);
  });

  it('keeps the media without a MAL id, in input order and as given', () => {
    const { unmapped } = crossLink(media);
    expect(unmapped).toEqual([media[1], media[3]]);
    expect(unmapped[0]).toBe(media[1]);
  });

  it('gives empty maps for no media, and reads nothing but id and idMal', () => {
    const empty = crossLink([]);
    expect([empty.anilistToMal.size, empty.malToAnilist.size, empty.unmapped]).toEqual([0, 0, []]);
    expect(crossLink([{ id: 3, idMal: 30 }]).anilistToMal.get(3)).toBe(30);
  });

  it.each([
    [
      'an object instead of an array',
      { media: [] },
      'media must be an array of { id, idMal } objects',
      'a value of type object',
    ],
    ['a null item', [{ id: 1, idMal: 1 }, null], 'media[1] must be an object with an integer id', 'null'],
    [
      'an item without an id',
      [{ idMal: 4 }],
      'media[0] must be an object with an integer id',
      'a value of type undefined',
    ],
  ])('rejects %s with a TypeError naming where', (_label, input, rule, received) => {
    expectTypeError(() => crossLink(input as never), 'crossLink:', rule, `received ${received}`);
  });
});

describe('buildAuthorizationUrl', () => {
  it('builds the AniList authorize URL with client_id, redirect_uri, response_type=code', () => {
    const url = new URL(buildAuthorizationUrl('1234', 'https://example.com/callback'));

    expect(`${url.origin}${url.pathname}`).toBe(ANILIST_AUTHORIZE_URL);
    expect([...url.searchParams]).toEqual([
      ['client_id', '1234'],
      ['redirect_uri', 'https://example.com/callback'],
      ['response_type', 'code'],
    ]);
  });

  it('accepts an AniList client id given as a number, as the original did', () => {
    const url = new URL(buildAuthorizationUrl(1234, 'https://example.com/callback'));

    expect(url.searchParams.get('client_id')).toBe('1234');
  });

  it('appends the state and percent-encodes every value (spaces as %20)', () => {
    const redirectUri = 'https://example.com/cb?next=/list&tab=a b';
    const built = buildAuthorizationUrl('12 34', redirectUri, 'state/with&=chars');

    expect(built).toBe(
      `${ANILIST_AUTHORIZE_URL}?client_id=12%2034&redirect_uri=https%3A%2F%2Fexample.com%2Fcb%3Fnext%3D%2Flist%26tab%3Da%20b&response_type=code&state=state%2Fwith%26%3Dchars`,
    );
    expect(Object.fromEntries(new URL(built).searchParams)).toEqual({
      client_id: '12 34',
      redirect_uri: redirectUri,
      response_type: 'code',
      state: 'state/with&=chars',
    });
  });

  it.each([
    ['a fractional clientId', [12.5, 'https://example.com/cb'], 'clientId must be a non-empty string', 'a number'],
    ['an empty clientId', ['', 'https://example.com/cb'], 'clientId must be a non-empty string', 'an empty string'],
    ['a missing redirectUri', ['1234'], 'redirectUri must be a non-empty string', 'a value of type undefined'],
    ['a blank redirectUri', ['1234', '  '], 'redirectUri must be a non-empty string', 'a blank string'],
    ['a numeric state', ['1234', 'https://example.com/cb', 42], 'state must be a non-empty string', 'a number'],
    ['an empty state', ['1234', 'https://example.com/cb', ''], 'state must be a non-empty string', 'an empty string'],
  ])('rejects %s with a TypeError naming the argument and the rule', (_label, args, rule, received) => {
    expectTypeError(
      () => (buildAuthorizationUrl as (...values: unknown[]) => string)(...args),
      'buildAuthorizationUrl:',
      rule,
      `received ${received}`,
    );
  });
});

describe('buildMalAuthorizationUrl', () => {
  const verifier = 'aB3-._~'.repeat(7); // 49 characters of the unreserved set

  it('builds the MAL authorize URL for plain PKCE', () => {
    const url = new URL(buildMalAuthorizationUrl('mal-client', verifier));

    expect(`${url.origin}${url.pathname}`).toBe(MAL_AUTHORIZE_URL);
    expect([...url.searchParams]).toEqual([
      ['response_type', 'code'],
      ['client_id', 'mal-client'],
      ['code_challenge', verifier],
      ['code_challenge_method', 'plain'],
    ]);
  });

  it('appends the state', () => {
    const built = buildMalAuthorizationUrl('mal-client', verifier, 'csrf state');
    expect(built.endsWith('&code_challenge_method=plain&state=csrf%20state')).toBe(true);
    expect(new URL(built).searchParams.get('state')).toBe('csrf state');
  });

  it('accepts any non-empty challenge, as the original (D26): MAL judges it', () => {
    for (const challenge of ['short', 'x'.repeat(42), 'x'.repeat(129), `${'x'.repeat(42)}+=`, 'a b/c']) {
      expect(new URL(buildMalAuthorizationUrl('c', challenge)).searchParams.get('code_challenge')).toBe(challenge);
    }
  });

  it.each([
    ['an empty string', '', 'an empty string'],
    ['a number', 12345, 'a number'],
    ['undefined', undefined, 'a value of type undefined'],
  ])('rejects a codeChallenge of %s with a TypeError', (_label, challenge, received) => {
    expectTypeError(
      () => buildMalAuthorizationUrl('mal-client', challenge as never),
      'buildMalAuthorizationUrl: codeChallenge must be a non-empty string',
      `received ${received}`,
    );
  });

  it('rejects a non-string clientId or state', () => {
    expectTypeError(
      () => buildMalAuthorizationUrl(undefined as never, verifier),
      'buildMalAuthorizationUrl: clientId must be a non-empty string',
    );
    expectTypeError(
      () => buildMalAuthorizationUrl('c', verifier, null as never),
      'buildMalAuthorizationUrl: state must be a non-empty string',
      'received null',
    );
  });
});

describe.each([
  ['getTokenExpiry', getTokenExpiry],
  ['getMalTokenExpiry', getMalTokenExpiry],
])('%s', (name, expiry) => {
  const token = { access_token: 'a', token_type: 'Bearer', expires_in: 3600 };
  const now = Date.UTC(2025, 0, 1, 12, 0, 0);

  it('adds expires_in seconds to now (epoch ms or a Date)', () => {
    expect(expiry(token, now)).toEqual(new Date(now + 3_600_000));
    expect(expiry(token, new Date(now))).toEqual(new Date(now + 3_600_000));
    expect(expiry({ ...token, expires_in: 0 }, now).getTime()).toBe(now);
    expect(expiry({ ...token, expires_in: 1.5 }, now).getTime()).toBe(now + 1500);
  });

  it('counts from the current time by default', () => {
    vi.spyOn(Date, 'now').mockReturnValue(now);
    expect(expiry(token).getTime()).toBe(now + 3_600_000);
  });

  it.each([
    [
      'a string expires_in',
      { expires_in: '3600' },
      'response.expires_in must be a finite number of seconds, 0 or more',
      'a string',
    ],
    ['a NaN expires_in', { expires_in: Number.NaN }, 'response.expires_in must be a finite number', 'NaN'],
    [
      'an infinite expires_in',
      { expires_in: Number.POSITIVE_INFINITY },
      'response.expires_in must be a finite number',
      'Infinity',
    ],
    [
      'a negative expires_in',
      { expires_in: -1 },
      'response.expires_in must be a finite number of seconds, 0 or more',
      'the number -1',
    ],
    ['a missing expires_in', {}, 'response.expires_in must be a finite number', 'a value of type undefined'],
    ['no response', null, 'response must be a token response object', 'null'],
  ])('rejects %s with a TypeError naming the argument and the rule', (_label, response, rule, received) => {
    expectTypeError(() => expiry(response as never, now), `${name}:`, rule, `received ${received}`);
  });

  it('rejects a now that is not a finite time', () => {
    expectTypeError(
      () => expiry(token, new Date('not a date')),
      `${name}: now must be a finite epoch time`,
      'an invalid Date',
    );
    expectTypeError(() => expiry(token, Number.NaN), `${name}: now must be`, 'NaN');
    expectTypeError(() => expiry(token, '2025-01-01' as never), `${name}: now must be`, 'a string');
  });
});

describe('the anilist namespace', () => {
  it('hands out the same helper functions as the package entry', () => {
    const { anilist } = new AniLink();
    expect(anilist.fuzzyDate).toBe(fuzzyDate);
    expect(anilist.fuzzyDateInt).toBe(fuzzyDateInt);
    expect(anilist.crossLink).toBe(crossLink);
    expect(typeof anilist.flattenMediaListCollection).toBe('function');
  });
});
