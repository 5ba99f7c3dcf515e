// Wrongly typed options must not compile (npm run test:types fails if any of these does).
import {
  AniLink,
  AniLinkApiError,
  AniLinkError,
  AniLinkErrorCodes,
  type RequestErrorContext,
} from 'anilink-api-wrapper';
import {
  AniLink as AniListEntry,
  buildAuthorizationUrl,
  fuzzyDateInt,
  getTokenExpiry,
  type FlattenedMediaListEntry,
} from 'anilink-api-wrapper/anilist';
import { AniLink as MalEntry, buildMalAuthorizationUrl, getMalTokenExpiry } from 'anilink-api-wrapper/mal';

// @ts-expect-error retry is a boolean or a policy object
new AniLink('token', { retry: 'yes' });
// @ts-expect-error unknown option key
new AniLink('token', { retries: 3 });
// @ts-expect-error maxRetries is a number
new AniLink('token', { retry: { maxRetries: '3' } });
// @ts-expect-error diagnostics is one of warn | hook | silent
new AniLink('token', { diagnostics: 'loud' });
// Compiles, as against the original's single signature; a TypeError at run time (options go in each slot).
export const credentialsWithOptions = () => new AniLink({ anilist: { authToken: 't' } }, { retry: false });
// @ts-expect-error unknown slot key
new AniLink({ anilist: { token: 't' } });
// @ts-expect-error the MAL slot's token field is accessToken
new AniLink({ mal: { authToken: 't' } });
// @ts-expect-error circuitBreaker needs both fields
new AniLink('token', { circuitBreaker: { threshold: 5 } });
// @ts-expect-error coalesce is a boolean
new AniLink('token', { coalesce: 'yes' });
// @ts-expect-error maxRedirects is a number
new AniLink('token', { maxRedirects: '5' });
new AniLink({ anilist: { maxRedirects: 0 }, mal: { clientId: 'cid', maxRedirects: 10 } });
new AniLink({
  anilist: {
    coalesce: true,
    onResponse: (context) => {
      const leader: string | undefined = context.coalesced ? context.leaderRequestId : undefined;
      void leader;
    },
  },
});

const client = new AniLink({
  anilist: {
    authToken: 't',
    onRetry: (error: AniLinkError, context: RequestErrorContext) => {
      const delay: number | undefined = context.nextDelayMs;
      void [error.code, delay];
    },
  },
  mal: { clientId: 'cid', maxSockets: 4 },
});

export async function calls(): Promise<void> {
  const controller = new AbortController();
  await client.anilist.query.media({ id: 1 }, { signal: controller.signal, timeout: 1000 });
  // @ts-expect-error per-request options are typed too
  await client.anilist.query.media({ id: 1 }, { timeout: '1s' });
  await client.mal.anime.get({ id: 1 }, { maxRedirects: 0 });
  // @ts-expect-error maxRedirects is a number per request too
  await client.anilist.query.media({ id: 1 }, { maxRedirects: true });
  await client.mal.anime.get({ id: 1 }, { fields: ['id', 'title'] });
  try {
    await client.anilist.custom<{ id: number }>('query { Media(id: 1) { id } }');
  } catch (error) {
    if (error instanceof AniLinkApiError) {
      const status: number = error.status;
      void status;
    }
    if (error instanceof AniLinkError && error.code === AniLinkErrorCodes.TIMEOUT) {
      void error.requestId;
    }
  }
}

// Every entry hands out the same class.
export const sameClass: typeof AniLink = AniListEntry;
export const sameClassMal: typeof AniLink = MalEntry;

// The pure helpers: typed inputs, typed results.
// @ts-expect-error fuzzy-date parts are numbers
fuzzyDateInt({ year: '2024' });
// @ts-expect-error the redirect URI is a string
buildAuthorizationUrl(1234, new URL('https://example.com/callback'));
// @ts-expect-error the MAL helper takes the code challenge, not an options object
buildMalAuthorizationUrl({ clientId: 'cid', codeChallenge: 'x' });
// @ts-expect-error expires_in is a number of seconds
getTokenExpiry({ expires_in: '3600' });

export async function helperCalls(): Promise<unknown[]> {
  const startedAt = client.anilist.fuzzyDate({ year: 2024, month: 4 });
  await client.anilist.mutation.saveMediaListEntry({ mediaId: 1, startedAt });
  const page = await client.anilist.query.page.medias({ startDate_greater: fuzzyDateInt({ year: 2020 }) });
  const { anilistToMal, unmapped } = client.anilist.crossLink(page.media);
  const firstUnmappedTitle: string | null | undefined = unmapped[0]?.title.romaji;
  const malId: number | undefined = anilistToMal.get(1);
  const collection = await client.anilist.query.mediaListCollection({ userId: 1, type: 'ANIME' });
  const entries: FlattenedMediaListEntry[] = client.anilist.flattenMediaListCollection(collection);
  const expiresAt: Date = getMalTokenExpiry({ access_token: 'a', token_type: 'Bearer', expires_in: 3600 }, new Date());
  return [firstUnmappedTitle, malId, entries, expiresAt];
}

// OAuth token exchanges: typed arguments and results.
import { getAccessToken, getMalAccessToken } from 'anilink-api-wrapper';
export async function tokens(): Promise<number> {
  const anilistToken = await getAccessToken(1234, 'secret', 'code', 'https://example.com/cb', { timeout: 5_000 });
  const malToken = await getMalAccessToken({ clientId: 'cid', code: 'code', codeVerifier: 'verifier' });
  // @ts-expect-error MAL's exchange takes one request object
  await getMalAccessToken('cid', 'code', 'verifier');
  return anilistToken.expires_in + malToken.expires_in;
}

export async function watching(signal: AbortSignal): Promise<number[]> {
  const ids: number[] = [];
  for await (const notification of client.anilist.watch.notifications({ since: 0, intervalMs: 30_000, signal })) {
    ids.push(notification.id);
  }
  // @ts-expect-error intervalMs is a number of milliseconds
  client.anilist.watch.activity({ intervalMs: '30s' });
  return ids;
}
