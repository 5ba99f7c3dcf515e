// Typing test: the usage patterns the original's 2.x documentation shows for AniList, the
// constructor, options, hooks and errors, written as a strict "typical user" would write them.
// They must compile under `tsc --strict` exactly where they compile against the original's
// typings (which type every result field as a plain `T`): lines marked @ts-expect-error are
// documentation examples that do not compile against the original either (see the report).
import {
  AniLink,
  AniLinkApiError,
  AniLinkAuthError,
  AniLinkError,
  AniLinkErrorCodes,
  AniLinkGraphQLError,
  AniLinkNetworkError,
  AniLinkRestError,
  AniLinkValidationError,
  buildAuthorizationUrl,
  getAccessToken,
  getTokenExpiry,
  refreshAccessToken,
  ResponseCache,
  type AniLinkCredentials,
  type AniLinkOptions,
  type AniListStrict,
  type AniListTokenResponse,
  type PaginateOptions,
  type ProviderId,
  type RateLimitInfo,
  type RequestErrorContext,
} from 'anilink-api-wrapper';
import { paginate, type AniListApi } from 'anilink-api-wrapper/anilist';

declare const log: (...values: unknown[]) => void;
declare const store: { upsert(item: { id: number }): void };
declare const saveToken: (response: AniListTokenResponse) => void;
declare const code: string;

// --- Constructor forms (getting started, provider configuration, authentication) ---
export const anonymous = new AniLink();
export const positional = new AniLink('anilist-token');
export const positionalWithOptions = new AniLink('token', { timeout: 5_000 });
export const optionsOnly = new AniLink(undefined, { retry: false });
export const slots = new AniLink({
  anilist: { authToken: 'anilist-token' },
  mal: { accessToken: 'mal-token', clientId: 'c' },
});
export const autoRefresh = new AniLink({
  anilist: {
    authToken: 'access',
    refreshToken: 'refresh',
    clientId: 'your-client-id',
    clientSecret: 'your-client-secret',
    onTokenRefresh: (response) => saveToken(response),
    onTokenRefreshError: (error) => log(error.code, error.message),
  },
  onHookError: (hookName, error) => log(hookName, error),
  diagnostics: 'silent',
});
// As the original declares them: a value typed as either form, read-only status lists, and
// writable APIs (a test swaps in a stand-in).
export function clientFor(auth?: string | AniLinkCredentials, options?: AniLinkOptions): AniLink {
  return new AniLink(auth, options);
}
const RETRY_ON = [429, 503] as const;
export const readonlyStatuses = new AniLink('token', { retry: { retryOnStatus: RETRY_ON } });
export const frozenStatuses = new AniLink({ anilist: { retry: { retryOnStatus: Object.freeze([429, 503]) } } });
export function withStandIns(client: AniLink, anilist: AniLink['anilist'], mal: AniLink['mal']): void {
  client.anilist = anilist;
  client.mal = mal;
}

const aniLink = new AniLink();

// --- Queries, read into plain values under --strict (querying, typical user code) ---
export async function typicalUser(): Promise<void> {
  const media = await aniLink.anilist.query.media({ id: 21, type: 'ANIME' });
  const title: string = media.title.romaji;
  const english: string = media.title.english;
  const score: number = media.averageScore;
  const episodes: number = media.episodes;
  const adult: boolean = media.isAdult;
  const genres: string[] = media.genres;
  const year: number = media.startDate.year;
  const cover: string = media.coverImage.large;
  const firstTag: string | undefined = media.tags[0]?.name;
  const idMal: number = media.idMal;
  const next: number = media.nextAiringEpisode.episode;
  const studios: string[] = media.studios.nodes.map((studio) => studio.name);
  const castNames: string[] = media.characters.nodes.map((character) => character.name.full);
  log(title, english, score, episodes, adult, genres, year, cover, firstTag, idMal, next, studios, castNames);

  const character = await aniLink.anilist.query.character({
    id: 1,
    asHtml: true,
    mediaSort: ['POPULARITY_DESC'],
    mediaPage: 1,
    mediaPerPage: 10,
  });
  const fullName: string = character.name.full;
  const appearsIn: string[] = character.media.nodes.map((node) => node.title.romaji);
  log(fullName, appearsIn);

  const staff = await aniLink.anilist.query.staff({
    id: 95269,
    staffMediaPage: 1,
    characterMediaPerPage: 5,
    charactersSort: ['FAVOURITES_DESC'],
  });
  const staffName: string = staff.name.full;
  const roles: number = staff.characters.nodes.length;
  log(staffName, roles);

  const studio = await aniLink.anilist.query.studio({ id: 11, mediaSort: ['START_DATE_DESC'], mediaIsMain: true });
  const works: string[] = studio.media.nodes.map((work) => work.title.userPreferred);
  log(studio.name, works);

  const user = await aniLink.anilist.query.user({ id: 542244, asHtml: true });
  const name: string = user.name;
  const watched: number = user.statistics.anime.minutesWatched;
  const avatar: string = user.avatar.large;
  log(name, watched, avatar);

  const viewer = await new AniLink('token').anilist.query.viewer();
  const unread: number = viewer.unreadNotificationCount;
  log(unread);

  const genresList: string[] = await aniLink.anilist.query.genreCollection();
  const tags = await aniLink.anilist.query.mediaTagCollection();
  const tagName: string | undefined = tags[0]?.name;
  log(genresList, tagName);

  const collection = await aniLink.anilist.query.mediaListCollection({ userId: 542244, type: 'ANIME' });
  const entries = aniLink.anilist.flattenMediaListCollection(collection);
  const listName: string | undefined = collection.lists[0]?.name;
  const firstProgress: number | undefined = collection.lists[0]?.entries[0]?.progress;
  log(entries.length, listName, firstProgress);

  const stats = await aniLink.anilist.query.siteStatistics({ usersSort: ['DATE_DESC'], usersPerPage: 7 });
  const newUsers: number | undefined = stats.users.nodes[0]?.count;
  log(newUsers);
}

// --- Page queries and pagination helpers (page queries, pagination) ---
export async function pages(): Promise<void> {
  const page = await aniLink.anilist.query.page.medias({
    page: 1,
    perPage: 10,
    type: 'ANIME',
    sort: ['POPULARITY_DESC'],
  });
  if (page.pageInfo.hasNextPage) log('more');
  const total: number = page.pageInfo.total;
  const current: number = page.pageInfo.currentPage;
  const firstTitle: string | undefined = page.media[0]?.title.romaji;
  log(total, current, firstTitle, page.media.length);

  const result = await aniLink.anilist.paginate(
    (page, perPage) => aniLink.anilist.query.page.medias({ page, perPage, type: 'ANIME' }),
    'media',
    { perPage: 50, maxPages: 10, concurrency: 4 },
  );
  const itemTitle: string | undefined = result.items[0]?.title.romaji;
  const pageCount: number = result.pageCount;
  const truncated: boolean = result.truncated;
  log(itemTitle, pageCount, truncated, result.items.length);

  // The root helper is the same function, typed the same way.
  const rooted = await paginate(
    (page, perPage) => aniLink.anilist.query.page.characters({ page, perPage, search: 'Frieren' }),
    'characters',
  );
  log(rooted.items.map((item) => item.name.full));

  const controller = new AbortController();
  for await (const walked of aniLink.anilist.paginatePages(
    (page, perPage, signal) => aniLink.anilist.query.page.medias({ page, perPage, type: 'ANIME' }, { signal }),
    { signal: controller.signal, concurrency: 4 },
  )) {
    for (const item of walked.media) store.upsert(item);
    if (walked.media[0]?.id === 1) {
      controller.abort();
      break;
    }
  }

  const chunked = await aniLink.anilist.paginateChunks(
    (chunk, perChunk) => aniLink.anilist.query.mediaListCollection({ userId: 542244, type: 'ANIME', chunk, perChunk }),
    'lists',
    { perChunk: 500, maxChunks: 20 },
  );
  const chunkCount: number = chunked.chunkCount;
  log(chunked.items.length, chunkCount, chunked.truncated);

  const opts: PaginateOptions = { perPage: 50, concurrency: 4 };
  log(opts);
}

// --- Mutations ---
export async function mutations(): Promise<void> {
  const authed = new AniLink('anilist-token');
  const entry = await authed.anilist.mutation.saveMediaListEntry({
    mediaId: 143271,
    status: 'CURRENT',
    score: 8.5,
    progress: 3,
  });
  const progress: number = entry.progress;
  const status: string = entry.status;
  await authed.anilist.mutation.saveMediaListEntry({
    id: 123456,
    mediaId: 21,
    status: 'CURRENT',
    score: 9.5,
    scoreRaw: 95,
    progress: 12,
    progressVolumes: 3,
    repeat: 1,
    priority: 1,
    private: false,
    notes: 'cozy rewatch',
    hiddenFromStatusLists: false,
    customLists: ['Winter 2026'],
    advancedScores: [90, 95],
    startedAt: { year: 2026, month: 1, day: 15 },
    completedAt: authed.anilist.fuzzyDate({ year: 2026, month: 3, day: 31 }),
  });
  const deleted: boolean = (await authed.anilist.mutation.deleteMediaListEntry({ id: entry.id })).deleted;
  const followed: boolean = (await authed.anilist.mutation.toggleFollow({ userId: 1 })).isFollowing;
  log(progress, status, deleted, followed);
}

// --- Field selection ---
export async function fieldSelection(): Promise<void> {
  const slim = await aniLink.anilist.query.media({ id: 123 }, { fields: ['id', 'title', 'averageScore'] });
  const slimScore: number = slim.averageScore;
  const romaji = await aniLink.anilist.query.media({ id: 123 }, { fields: ['title.romaji'], timeout: 5_000 });
  const handle: number = romaji.idMal;
  const tagged = await aniLink.anilist.query.media({ id: 123 }, { fields: ['tags.name', 'tags.category'] });
  const categories: string[] = tagged.tags.map((tag) => tag.category);
  log(slimScore, handle, categories);
}

// --- Per-request options, cancellation and timeouts ---
export async function perRequest(): Promise<void> {
  const controller = new AbortController();
  await aniLink.anilist.query.media({ id: 1, type: 'ANIME' }, { timeout: 5_000, signal: controller.signal });
  await aniLink.anilist.query.media({ id: 1 }, { retry: { maxRetries: 1 } });
  await aniLink.anilist.query.media({ id: 1 }, { signal: AbortSignal.timeout(2_000), retry: false });
  await aniLink.anilist.query.media(
    { id: 1 },
    { responseCache: new ResponseCache({ ttlMs: 30_000 }), bypassResponseCache: true },
  );
}

// --- Hooks (observability) ---
export const observed = new AniLink('token', {
  onRequestStart: ({ requestId, url, method, attempt }) => log(requestId, url, method, attempt),
  onResponse: ({ durationMs, rateLimit, cacheHit, pacedMs }) =>
    log(durationMs, rateLimit?.remaining, cacheHit, pacedMs),
  onRetry: (error, context) => log(error.code, context.attempt, context.nextDelayMs),
  onError: (error: AniLinkError, context: RequestErrorContext) =>
    log(error.requestId, context.code, context.status, context.budgetExhausted),
  onPace: ({ delayMs, aborted }) => log(delayMs, aborted),
  onCircuitOpen: ({ host, failures }) => log(host, failures),
  onCircuitClose: ({ host }) => log(host),
  onHookError: (hookName, error) => log(hookName, error),
  diagnostics: 'hook',
});
const state = observed.getTransportState();
export const openSince: number | null = state.anilist.circuit[0]?.openedAt ?? null;
export const budgetUsed: number | undefined = state.anilist.retryBudget?.retriesUsed;
export const pacingUntil: number | undefined = state.anilist.paceDeadlines[0]?.deadlineMs;

// --- Errors: instanceof first, then code (error handling, TypeScript patterns) ---
export async function errors(): Promise<void> {
  try {
    await aniLink.anilist.query.user({ id: 542244 });
  } catch (error: unknown) {
    if (error instanceof AniLinkGraphQLError) {
      const messages: string[] = error.graphqlErrors.map((entry) => entry.message);
      log(messages, error.data, error.partialData);
    } else if (error instanceof AniLinkApiError) {
      const status: number = error.status;
      const reset: number | undefined = error.rateLimit?.reset;
      log(error.code, status, error.data, reset);
    } else if (error instanceof AniLinkAuthError) {
      log('Token missing or rejected:', error.code);
    } else if (error instanceof AniLinkNetworkError) {
      const timeoutMs: number | undefined = error.timeoutMs;
      log(error.code, error.message, timeoutMs);
    } else if (error instanceof AniLinkValidationError) {
      const details: readonly string[] = error.details;
      log(details);
    } else {
      throw error;
    }
  }

  try {
    await aniLink.anilist.query.viewer();
  } catch (error: unknown) {
    if (error instanceof AniLinkApiError && error.status === 429) {
      const quota: RateLimitInfo | undefined = error.rateLimit;
      log(quota?.reset);
    } else if (error instanceof AniLinkError) {
      switch (error.code) {
        case AniLinkErrorCodes.AUTH:
          break;
        case AniLinkErrorCodes.TIMEOUT:
          break;
        default:
          break;
      }
      const requestId: string | undefined = error.requestId;
      log(requestId);
    }
  }

  try {
    await aniLink.mal.anime.get({ id: 21 });
  } catch (error) {
    if (error instanceof AniLinkRestError && error.contentType?.includes('application/json')) log(error.data);
  }
}

// --- custom() and customPage() ---
interface MediaTitle {
  id: number;
  title: { romaji: string };
}
export async function custom(): Promise<void> {
  const single = await aniLink.anilist.custom<MediaTitle>(
    'query ($id: Int) { Media(id: $id) { id title { romaji } } }',
    { id: 1 },
  );
  const romaji: string = single.title.romaji;
  const envelope = await aniLink.anilist.custom<{ data: { User: { name: string }; Media: MediaTitle } }>(
    'query { User(id: 1) { name } Media(id: 1) { id title { romaji } } }',
    undefined,
    { allowPartialData: true, onError: (error) => log(error.code) },
  );
  log(romaji, envelope.data.User.name);
}

// --- OAuth helpers (authentication) ---
export async function oauth(): Promise<void> {
  const state = crypto.randomUUID();
  const authorizeUrl: string = buildAuthorizationUrl('your-client-id', 'https://example.com/callback', state);
  let tokenResponse = await getAccessToken(
    'your-client-id',
    'your-client-secret',
    code,
    'https://example.com/callback',
  );
  const { access_token, refresh_token } = tokenResponse;
  const client = new AniLink(access_token);
  if (refresh_token !== undefined && Date.now() >= getTokenExpiry(tokenResponse).getTime() - 60_000) {
    const { refresh_token: rotated } = (tokenResponse = await refreshAccessToken(
      'your-client-id',
      'your-client-secret',
      refresh_token,
    ));
    const nextRefreshToken: string = rotated ?? refresh_token;
    log(nextRefreshToken);
  }
  log(authorizeUrl, client);
}

// --- Types for the caller's own signatures (TypeScript patterns) ---
export const provider: ProviderId = 'anilist';
export function titles(api: AniListApi): Promise<string[]> {
  return api.query.page.medias({ search: 'Frieren' }).then((page) => page.media.map((media) => media.title.romaji));
}

// --- The opt-in schema-exact types: annotating a result opts that code into null checks ---
export async function strictOptIn(): Promise<void> {
  const media: AniListStrict.Media = await aniLink.anilist.query.media({ id: 1 });
  const title: string = media.title?.romaji ?? 'untitled';
  const page: AniListStrict.MediasPageResult = await aniLink.anilist.query.page.medias({ page: 1 });
  const more: boolean = page.pageInfo?.hasNextPage ?? false;
  log(title, more);
  // @ts-expect-error the strict title may be null
  const unchecked: string = media.title.romaji;
  log(unchecked);
}

// --- Documentation examples that do not compile against the original's typings either ---
export async function documentationMistakes(): Promise<void> {
  const anime = await aniLink.anilist.query.media({ id: 21, type: 'ANIME' });
  // getting-started.md: the result is the Media itself, it has no `media` field.
  // @ts-expect-error no property media on the Media result
  log(anime.media?.title?.romaji);

  try {
    await aniLink.anilist.query.media({ id: 1 });
  } catch (error) {
    // error-handling.md: under --strict a catch variable is `unknown`.
    // @ts-expect-error error is unknown
    log(error.requestId, error.code);
  }

  // complete-examples.md: `advancedScores` is a list of floats (`number[]` in the original too).
  // @ts-expect-error an object is not a number[]
  await aniLink.anilist.mutation.saveMediaListEntry({ mediaId: 21, advancedScores: { story: 90, characters: 95 } });

  const { refresh_token } = await getAccessToken('id', 'secret', code, 'https://example.com/callback');
  // authentication.md: `refresh_token` is optional in AniListTokenResponse.
  // @ts-expect-error string | undefined is not a string
  await refreshAccessToken('id', 'secret', refresh_token);
}

// --- Helpers on the client (AniList helpers) ---
export async function helpers(): Promise<void> {
  const client = new AniLink({ anilist: { authToken: 'anilist-token' }, mal: { accessToken: 'mal-token' } });
  const startedAt = client.anilist.fuzzyDate({ year: 2024, month: 4, day: 15 });
  const month: number = startedAt.month;
  await client.anilist.mutation.saveMediaListEntry({ mediaId: 1, status: 'COMPLETED', startedAt });
  const full: number = client.anilist.fuzzyDateInt({ year: 2024, month: 4, day: 15 });
  const page = await client.anilist.query.page.medias({ page: 1, perPage: 50, type: 'ANIME', startDate: full });
  const { anilistToMal, malToAnilist, unmapped } = client.anilist.crossLink(page.media);
  const malId = anilistToMal.get(21);
  if (malId !== undefined) {
    const malAnime = await client.mal.anime.get({ id: malId }, { fields: ['id', 'title'] });
    log(malAnime.title);
  }
  const unmappedTitle: string | undefined = unmapped[0]?.title.romaji;
  const collection = await client.anilist.query.mediaListCollection({ userId: 542244, type: 'ANIME' });
  const entries = client.anilist.flattenMediaListCollection(collection);
  const lists: string[] | undefined = entries[0]?.listNames;
  log(month, malToAnilist.size, unmappedTitle, lists);
}

// --- Hooks per slot, client-level onHookError, latency metrics (observability) ---
declare const metrics: { observe(name: string, value: number, tags?: object): void; record(value: number): void };
export const perSlot = new AniLink({
  onHookError: (hookName, error) => log(`hook ${hookName} threw`, error),
  anilist: {
    authToken: 't',
    onResponse: ({ requestId, url, durationMs, rateLimit, pacedMs }) => {
      metrics.observe(pacedMs === undefined ? 'latency' : 'paced-latency', durationMs, { requestId, url });
      if (rateLimit && rateLimit.remaining < 10) log('quota running low:', rateLimit.remaining, '/', rateLimit.limit);
    },
    onError: (error, { requestId, attempt, code }) => log(requestId, attempt, code, error.message),
    onRetry: (_error, { attempt, nextDelayMs }) => log(attempt, nextDelayMs),
    onPace: ({ requestId, delayMs }) => log(requestId, delayMs),
  },
  mal: { accessToken: 'm' },
});

// --- custom(): the caller types the unwrapped value (custom queries) ---
export async function customEnvelope(): Promise<void> {
  const media = await aniLink.anilist.custom<{ id: number }>('query { Media(id: 1) { id } }');
  const id: number = media.id;
  const both = await aniLink.anilist.custom<{ data: { Media: { id: number }; Viewer: { id: number } } }>(
    'query { Media(id: 1) { id } Viewer { id } }',
    undefined,
    { timeout: 10_000 },
  );
  const viewerId: number = both.data.Viewer.id;
  log(id, viewerId);
}

// --- Recipes, provider configuration, cancellation, response cache ---
declare const counters: { increment(name: string, tags: object): void; record(provider: string, value: number): void };
export async function recipes(): Promise<void> {
  const fromEnv = new AniLink(process.env.ANILIST_TOKEN);
  const synced = await fromEnv.anilist.paginate(
    (page, perPage) => fromEnv.anilist.query.page.medias({ page, perPage, type: 'ANIME', sort: ['TRENDING_DESC'] }),
    'media',
    { perPage: 50, maxPages: 10, concurrency: 4 },
  );
  if (synced.truncated) log(`synced ${synced.items.length} items across ${synced.pageCount} pages`);

  const both = new AniLink({
    anilist: { authToken: process.env.ANILIST_TOKEN },
    mal: { accessToken: process.env.MAL_TOKEN },
  });
  const anilistMedia = await both.anilist.query.media({ id: 21, type: 'ANIME' });
  const { anilistToMal } = both.anilist.crossLink([anilistMedia]);
  const page = await both.anilist.query.page.medias({ page: 1, perPage: 50, type: 'ANIME' });
  const malIds: number[] = page.media
    .map((media) => anilistToMal.get(media.id))
    .filter((malId): malId is number => malId !== undefined);
  log(anilistMedia.title.romaji, malIds);

  const scheduler = new AniLink({
    anilist: {
      authToken: process.env.ANILIST_TOKEN,
      paceWithRateLimit: true,
      circuitBreaker: { threshold: 5, cooldownMs: 30_000 },
      onCircuitOpen: ({ host, failures }) => counters.increment('circuit.open', { host, failures }),
      onCircuitClose: ({ host }) => counters.increment('circuit.close', { host }),
      onResponse: ({ durationMs }) => counters.record('anilist', durationMs),
    },
    mal: {
      accessToken: process.env.MAL_TOKEN,
      retry: { maxRetries: 2 },
      onResponse: ({ durationMs }) => counters.record('mal', durationMs),
    },
  });
  log(scheduler);

  const scoped = new AniLink({
    anilist: { authToken: 't', timeout: 5_000, retry: false },
    mal: { accessToken: 'm', timeout: 15_000 },
  });
  const controller = new AbortController();
  const cancellable = new AniLink('token', { signal: controller.signal, timeout: 10_000 });
  try {
    await cancellable.anilist.query.page.medias({ page: 1, perPage: 50 });
  } catch (error) {
    if (error instanceof AniLinkNetworkError && error.abortedDuringPacing) log('never reached the network');
    if (error instanceof AniLinkNetworkError && error.code === AniLinkErrorCodes.TIMEOUT) log(error.timeoutMs);
  }

  const cache = new ResponseCache({ ttlMs: 120_000, maxEntries: 256 });
  const cached = new AniLink('token', {
    responseCache: cache,
    onResponse: ({ url, durationMs, cacheHit }) =>
      cacheHit ? counters.increment('cache.hit', { url }) : counters.record(url, durationMs),
  });
  cache.clear();
  log(scoped, cached, cache.stats().hits);
}

// --- Watchers ---
export async function watchers(): Promise<void> {
  const client = new AniLink({ anilist: { authToken: 'anilist-token' } });
  const controller = new AbortController();
  for await (const notification of client.anilist.watch.notifications({
    since: Math.floor(Date.now() / 1000) - 3600,
    intervalMs: 60_000,
    signal: controller.signal,
  })) {
    const createdAt: number = notification.createdAt;
    log(notification.type, createdAt);
  }
  for await (const activity of client.anilist.watch.activity({ userId: 542244, intervalMs: 120_000 })) {
    const kind: string = activity.type;
    log(kind, activity.createdAt);
  }
}
