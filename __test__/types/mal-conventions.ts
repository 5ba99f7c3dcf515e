// Typing test: the MyAnimeList, OAuth and helper usage patterns of the original's 2.x
// documentation pages (guides/mal/operations, authentication, configuration, complete-examples,
// pagination; guides/anilist/helpers for the id maps), written anew. Everything below compiles
// under `tsc --strict`, in both MAL calling conventions (decisions D25); every line under a
// ts-expect-error directive must not compile, as it does not against the original's typings.
import { randomBytes } from 'node:crypto';

import {
  AniLink,
  AniLinkApiError,
  AniLinkAuthError,
  AniLinkNetworkError,
  buildMalAuthorizationUrl,
  getMalAccessToken,
  getMalTokenExpiry,
  mapExternalIds,
  refreshMalAccessToken,
  type MalTokenResponse,
  type MapExternalIdsOptions,
  type MapExternalIdsResult,
  type MapExternalIdsSource,
} from 'anilink-api-wrapper';
import { mapExternalIds as mapFromAniListEntry } from 'anilink-api-wrapper/anilist';
import type {
  MalAnime,
  MalAnimeListStatus,
  MalAnimeListStatusUpdate,
  MalAuthorizationCodeRequest,
  MalManga,
  MalMangaListStatus,
  MalRequestOptions,
  MalUser,
  MyAnimeListAuthApi,
} from 'anilink-api-wrapper/mal';

const aniLink = new AniLink({ mal: { accessToken: 'mal-token', clientId: 'mal-client-id', timeout: 10_000 } });

// ---- operations: the 2.2.0 positional form ----

export async function positional(): Promise<void> {
  const anime: MalAnime = await aniLink.mal.anime.get(21, { fields: ['id', 'title', 'main_picture', 'synopsis'] });
  const title: string = anime.title;
  const large: string | undefined = anime.main_picture?.large;
  const extra: unknown = anime.some_field_selected_with_fields;
  console.log(title, large, extra);

  await aniLink.mal.anime.get(21, { fields: 'id,title,main_picture' });
  await aniLink.mal.anime.get(21);

  const status: MalAnimeListStatus = await aniLink.mal.anime.updateMyListStatus(21, {
    status: 'watching',
    num_watched_episodes: 10,
    score: 9,
  });
  const watched: number = status.num_episodes_watched;
  console.log(watched);
  await aniLink.mal.anime.updateMyListStatus(21, { status: 'completed' }, { fields: ['status'], timeout: 5_000 });
  await aniLink.mal.anime.deleteFromList(21);

  const manga: MalManga = await aniLink.mal.manga.get(1, { fields: ['id', 'title', 'main_picture'] });
  console.log(manga.title);
  const read: MalMangaListStatus = await aniLink.mal.manga.updateMyListStatus(1, {
    status: 'reading',
    num_chapters_read: 10,
    score: 9,
  });
  console.log(read.num_chapters_read);
  await aniLink.mal.manga.deleteFromList(1);

  const user: MalUser = await aniLink.mal.user.me({ fields: ['id', 'name', 'location', 'joined_at'] });
  const name: string = user.name;
  console.log(name);
}

// ---- operations: the object form of the newest sources (complete examples) ----

export async function objectForm(): Promise<void> {
  await aniLink.mal.anime.get({ id: 21 });
  await aniLink.mal.anime.seasonal({ year: 2026, season: 'winter' });
  await aniLink.mal.anime.ranking({ rankingType: 'all' });
  await aniLink.mal.anime.suggestions();
  await aniLink.mal.anime.updateMyListStatus({
    id: 21,
    status: 'watching',
    num_watched_episodes: 5,
    score: 8,
    start_date: '2026-01-15',
    finish_date: '2026-09-01',
    comments: 'rewatching with a friend',
    is_rewatching: true,
    num_times_rewatched: 2,
    rewatch_value: 3,
    priority: 1,
    tags: ['cozy', 'winter-2026'],
  });
  await aniLink.mal.anime.deleteFromList({ id: 21 });
  await aniLink.mal.manga.get({ id: 1 });
  await aniLink.mal.manga.updateMyListStatus({
    id: 1,
    status: 'reading',
    num_chapters_read: 45,
    num_volumes_read: 5,
    score: 9,
    start_date: '2026-02-01',
    finish_date: '2026-08-01',
    comments: '',
    is_rereading: false,
    num_times_reread: 0,
    reread_value: 0,
    priority: 0,
    tags: [],
  });
  await aniLink.mal.manga.deleteFromList({ id: 1 });
  await aniLink.mal.user.me();
  await aniLink.mal.user.animeList({ username: '@me', status: 'watching', sort: 'list_score', limit: 100, offset: 0 });
  await aniLink.mal.user.mangaList({ username: '@me', status: 'reading', sort: 'list_score', limit: 100, offset: 0 });
  await aniLink.mal.anime.get(
    { id: 21 },
    { fields: ['id', 'title', 'main_picture'], timeout: 8_000, retry: false, signal: undefined },
  );
  await aniLink.mal.anime.suggestions({ fields: ['id', 'title', 'main_picture'], timeout: 8_000 });
  // Subboard 0 is accepted (decisions D26).
  await aniLink.mal.forum.topics({ subboardId: 0 });
}

// ---- error handling shown on the operations page ----

export async function errors(): Promise<string> {
  try {
    await aniLink.mal.user.me();
    return 'ok';
  } catch (error) {
    if (error instanceof AniLinkAuthError) return 'no token';
    if (error instanceof AniLinkApiError) return `status ${error.status}`;
    if (error instanceof AniLinkNetworkError) return error.code;
    throw error;
  }
}

// ---- pagination page ----

export async function pagination(): Promise<number> {
  const result = await aniLink.mal.paginate(
    (page, perPage) => aniLink.mal.anime.search({ q: 'one piece', limit: perPage, offset: (page - 1) * perPage }),
    { perPage: 100, maxPages: 5 },
  );
  const total: number = result.items.length + result.pageCount;
  const truncated: boolean = result.truncated;
  for await (const page of aniLink.mal.paginatePages((page, perPage) =>
    aniLink.mal.user.animeList({ username: '@me', limit: perPage, offset: (page - 1) * perPage }),
  )) {
    console.log(page.data.length);
    if (page.data[0]?.node.id === 21) break;
  }
  return truncated ? total : 0;
}

// ---- authentication page (PKCE, exchange, refresh, automatic refresh) ----

export async function authentication(code: string): Promise<void> {
  const codeVerifier = randomBytes(32).toString('base64url');
  const codeChallenge = codeVerifier;
  const authorizeUrl: string = buildMalAuthorizationUrl('mal-client-id', codeChallenge, 'csrf-state');
  console.log(authorizeUrl);

  let token: MalTokenResponse = await getMalAccessToken({ clientId: 'mal-client-id', code, codeVerifier });
  const client = new AniLink({
    mal: { accessToken: token.access_token, refreshToken: token.refresh_token, clientId: 'mal-client-id' },
  });
  console.log(client.mal.auth);

  // The page passes `token.refresh_token` (string | undefined) straight to refreshMalAccessToken;
  // that does not compile under --strict against the original's typings either (see below).
  const stored = token.refresh_token;
  if (stored !== undefined && Date.now() >= getMalTokenExpiry(token).getTime() - 60_000) {
    const refreshed = await refreshMalAccessToken({ clientId: 'mal-client-id', refreshToken: stored });
    token = { ...refreshed, refresh_token: refreshed.refresh_token ?? token.refresh_token };
  }

  new AniLink({
    mal: {
      accessToken: token.access_token,
      refreshToken: token.refresh_token,
      clientId: 'mal-client-id',
      onTokenRefresh: (response) => {
        token = { ...response, refresh_token: response.refresh_token ?? token.refresh_token };
      },
    },
  });

  // aniLink.mal.auth: the same helpers under the client.
  const auth: MyAnimeListAuthApi = aniLink.mal.auth;
  const url: string = auth.buildAuthorizationUrl('mal-client-id', codeChallenge);
  const request: MalAuthorizationCodeRequest = {
    clientId: 'mal-client-id',
    code,
    codeVerifier,
    options: { timeout: 5_000 },
  };
  const exchanged: MalTokenResponse = await auth.exchangeCode(request);
  console.log(url, exchanged.expires_in);
}

// ---- id maps (mapExternalIds: root, /anilist, aniLink.anilist) ----

export async function idMaps(): Promise<number | undefined> {
  const source: MapExternalIdsSource = 'anilist';
  const options: MapExternalIdsOptions = { timeout: 5_000, armUrl: 'http://127.0.0.1:4100' };
  const result: MapExternalIdsResult = await mapExternalIds(source, [21, 22], options);
  const malId: number | undefined = result.anilistToMal.get(21);
  const missing: readonly number[] = result.unmapped;
  const back = await mapFromAniListEntry('myanimelist', [21]);
  const viaClient = await aniLink.anilist.mapExternalIds('anilist', [1], { signal: AbortSignal.timeout(1_000) });
  console.log(missing, back.malToAnilist.size, viaClient.anilistToMal.get(1));
  return malId;
}

// ---- recipes page: MAL lookup, cross-provider comparison, background refresh ----

export async function recipes(): Promise<void> {
  const malOnly = new AniLink({ mal: { accessToken: process.env.MAL_TOKEN } });
  const anime = await malOnly.mal.anime.get(
    { id: 21 },
    { fields: ['id', 'title', 'main_picture', 'synopsis', 'mean'] },
  );
  console.log(anime.title, anime.main_picture?.medium);

  const both = new AniLink({
    anilist: { authToken: process.env.ANILIST_TOKEN },
    mal: { accessToken: process.env.MAL_TOKEN },
  });
  const anilistMedia = await both.anilist.query.media({ id: 21, type: 'ANIME' });
  const { anilistToMal } = both.anilist.crossLink([anilistMedia]);
  const malId = anilistToMal.get(21);
  if (malId !== undefined) {
    const malAnime = await both.mal.anime.get({ id: malId }, { fields: ['id', 'title'] });
    console.log('AniList:', anilistMedia.title.romaji);
    const malTitle: string = malAnime.title;
    console.log('MAL:', malTitle);
  }
  const page = await both.anilist.query.page.medias({ page: 1, perPage: 50, type: 'ANIME' });
  const linked = both.anilist.crossLink(page.media);
  const malIds: number[] = page.media
    .map((media) => linked.anilistToMal.get(media.id))
    .filter((id): id is number => id !== undefined);
  console.log(malIds.length, linked.unmapped.length);
}

let stored: MalTokenResponse = {} as MalTokenResponse;
export async function ensureFreshToken(): Promise<MalTokenResponse> {
  if (Date.now() < getMalTokenExpiry(stored).getTime() - 60_000) return stored;
  const refreshed = await refreshMalAccessToken({
    clientId: process.env.MAL_CLIENT_ID!,
    refreshToken: stored.refresh_token!,
  });
  stored = { ...refreshed, refresh_token: refreshed.refresh_token ?? stored.refresh_token };
  return stored;
}

// ---- wrong calls ----

export function wrongCalls(payload: MalAnimeListStatusUpdate, options: MalRequestOptions): void {
  // @ts-expect-error the positional id is a number
  void aniLink.mal.anime.get('21');
  // @ts-expect-error the positional payload is the list-status fields, not options
  void aniLink.mal.anime.updateMyListStatus(21, { fields: ['status'] });
  // @ts-expect-error a manga status is not an anime status
  void aniLink.mal.anime.updateMyListStatus(21, { status: 'reading' });
  // @ts-expect-error the positional write needs its payload
  void aniLink.mal.manga.updateMyListStatus(1);
  void aniLink.mal.anime.updateMyListStatus(21, payload, options);
  // @ts-expect-error the source is "anilist" or "myanimelist"
  void mapExternalIds('mal', [1]);
  // @ts-expect-error the maps are read-only
  void mapExternalIds('anilist', [1]).then((result) => result.anilistToMal.set(1, 2));
  // @ts-expect-error the token response may lack a refresh token: the page's refresh call
  void refreshMalAccessToken({ clientId: 'mal-client-id', refreshToken: ({} as MalTokenResponse).refresh_token });
}
