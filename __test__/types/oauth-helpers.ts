// Typing test: the AniList OAuth, helper and pagination usage patterns of the original's 2.x
// documentation pages (guides/anilist/authentication, helpers, pagination; recipes'
// AniList→MAL hand-over), written anew. Everything below compiles under `tsc --strict`; every
// line under a ts-expect-error directive must not, as it does not against the original's typings.
import {
  ANILIST_AUTHORIZE_URL,
  ANILIST_TOKEN_URL,
  AniLink,
  buildAuthorizationUrl,
  getAccessToken,
  getTokenExpiry,
  paginate,
  refreshAccessToken,
  type AniListTokenResponse,
  type CrossLinkResult,
} from 'anilink-api-wrapper';

declare const code: string;
declare function saveToken(response: AniListTokenResponse): void;
declare const store: { upsert(item: { id: number }): void };

// ---- authentication page ----

export async function authorizationCodeFlow(): Promise<void> {
  const state = crypto.randomUUID();
  const authorizeUrl: string = buildAuthorizationUrl('your-client-id', 'https://example.com/callback', state);
  console.log(authorizeUrl, ANILIST_AUTHORIZE_URL, ANILIST_TOKEN_URL);

  const { access_token, refresh_token } = await getAccessToken(
    'your-client-id',
    'your-client-secret',
    code,
    'https://example.com/callback',
  );
  new AniLink(access_token);
  // The original's optional redirectUri and trailing AbortSignal.
  await getAccessToken('your-client-id', 'your-client-secret', code);
  await getAccessToken('your-client-id', 'your-client-secret', code, undefined, AbortSignal.timeout(5_000));

  // The page passes the destructured `refresh_token` (string | undefined) straight on; that
  // does not compile under --strict against the original's typings either (see below).
  if (refresh_token !== undefined) {
    const { access_token: next, refresh_token: rotated } = await refreshAccessToken(
      'your-client-id',
      'your-client-secret',
      refresh_token,
    );
    const nextRefreshToken: string = rotated ?? refresh_token;
    let tokenResponse: AniListTokenResponse = { access_token: next, token_type: 'Bearer', expires_in: 3600 };
    if (Date.now() >= getTokenExpiry(tokenResponse).getTime() - 60_000) {
      tokenResponse = await refreshAccessToken('your-client-id', 'your-client-secret', nextRefreshToken);
    }
    await refreshAccessToken('your-client-id', 'your-client-secret', nextRefreshToken, new AbortController().signal);
    console.log(tokenResponse.expires_in);
  }

  new AniLink({
    anilist: {
      authToken: access_token,
      refreshToken: refresh_token,
      clientId: 'your-client-id',
      clientSecret: 'your-client-secret',
      onTokenRefresh: (response) => saveToken(response),
    },
  });
}

// ---- helpers page ----

export async function helpers(): Promise<void> {
  const aniLink = new AniLink('anilist-token');
  const startedAt = aniLink.anilist.fuzzyDate({ year: 2024, month: 4, day: 15 });
  const yearOnly: { year: number; month: number; day: number } = aniLink.anilist.fuzzyDate({ year: 2024 });
  await aniLink.anilist.mutation.saveMediaListEntry({ mediaId: 1, status: 'COMPLETED', startedAt });
  console.log(yearOnly.month);

  const full: number = aniLink.anilist.fuzzyDateInt({ year: 2024, month: 4, day: 15 });
  await aniLink.anilist.query.page.medias({ page: 1, perPage: 50, type: 'ANIME', startDate: full });

  const collection = await aniLink.anilist.query.mediaListCollection({ userId: 542244, type: 'ANIME' });
  const entries = aniLink.anilist.flattenMediaListCollection(collection);
  const names: string[] | undefined = entries[0]?.listNames;
  console.log(entries.length, names);

  const both = new AniLink({ anilist: { authToken: 'anilist-token' }, mal: { accessToken: 'mal-token' } });
  const page = await both.anilist.query.page.medias({ page: 1, perPage: 50, type: 'ANIME' });
  const linked = both.anilist.crossLink(page.media);
  const typed: CrossLinkResult<(typeof page.media)[number]> = linked;
  const malId = typed.anilistToMal.get(21);
  if (malId !== undefined) {
    await both.mal.anime.get({ id: malId }, { fields: ['id', 'title'] });
    await both.mal.anime.get(malId, { fields: ['id', 'title'] });
  }
  const { anilistToMal, unmapped } = await both.anilist.mapExternalIds(
    'anilist',
    page.media.map((media) => media.id),
  );
  console.log(anilistToMal.size, unmapped.length);
}

// ---- pagination page ----

export async function pagination(): Promise<void> {
  const aniLink = new AniLink();
  const result = await aniLink.anilist.paginate(
    (page, perPage) => aniLink.anilist.query.page.medias({ page, perPage, type: 'ANIME' }),
    'media',
    { perPage: 50, maxPages: 10, concurrency: 4 },
  );
  const counts: number = result.items.length + result.pageCount;
  const truncated: boolean = result.truncated;
  console.log(counts, truncated);

  for await (const page of aniLink.anilist.paginatePages((page, perPage) =>
    aniLink.anilist.query.page.medias({ page, perPage, type: 'ANIME' }),
  )) {
    console.log(page.pageInfo.currentPage, page.media.length);
    if (page.media[0]?.id === 1) break;
  }

  const chunked = await aniLink.anilist.paginateChunks(
    (chunk, perChunk) => aniLink.anilist.query.mediaListCollection({ userId: 542244, type: 'ANIME', chunk, perChunk }),
    'lists',
    { perChunk: 500, maxChunks: 20 },
  );
  console.log(chunked.items.length, chunked.chunkCount, chunked.truncated);

  const controller = new AbortController();
  for await (const page of aniLink.anilist.paginatePages(
    (page, perPage, signal) => aniLink.anilist.query.page.medias({ page, perPage, type: 'ANIME' }, { signal }),
    { signal: controller.signal, concurrency: 4 },
  )) {
    if (page.media[0]?.id === 1) {
      controller.abort();
      break;
    }
  }

  for await (const page of aniLink.anilist.paginatePages((page, perPage) =>
    aniLink.anilist.query.page.medias({ page, perPage, type: 'ANIME' }),
  )) {
    for (const item of page.media) store.upsert(item);
  }

  // The root export is the same helper.
  await paginate((page, perPage) => aniLink.anilist.query.page.users({ page, perPage }), 'users', { onPage: () => {} });
}

// ---- wrong calls ----

export async function wrongCalls(stored: AniListTokenResponse): Promise<void> {
  // @ts-expect-error the refresh token of a response may be missing: the page's own call
  await refreshAccessToken('your-client-id', 'your-client-secret', stored.refresh_token);
  // @ts-expect-error the client secret is required
  await getAccessToken('your-client-id', undefined, code);
  // A key that is not an array field of the page types the items as never, as in the original.
  const wrongKey = await paginate(() => new AniLink().anilist.query.page.medias({ page: 1 }), 'pageInfo');
  // @ts-expect-error the items of a wrong key are never
  console.log(wrongKey.items[0].id);
}
