// Pure helpers: AniList fuzzy dates, list flattening, AniList↔MyAnimeList id maps, and the
// OAuth authorize-URL and token-expiry helpers. None of them sends a request.
import type { AniListTokenResponse, MalTokenResponse } from './anilink';
import type { RequestOptions } from './transport';

/** Parts of an AniList fuzzy date; a missing (or null) part means "unknown" and becomes 0. */
export interface FuzzyDateOptions {
  /** 0–9999, e.g. `2024`. */
  year?: number | null;
  /** 1–12 (0 = unknown). */
  month?: number | null;
  /** 1–31 (0 = unknown). */
  day?: number | null;
}

/**
 * AniList's `FuzzyDateInput` (for `saveMediaListEntry`'s `startedAt`/`completedAt`) with
 * every part filled: missing parts are 0. Throws a `TypeError` for a part that is not a
 * whole number in range.
 */
export declare function fuzzyDate(options?: FuzzyDateOptions | null): { year: number; month: number; day: number };

/**
 * AniList's `FuzzyDateInt` (the `YYYYMMDD` integer query filters such as `startDate_greater`
 * take): `year * 10000 + month * 100 + day`, missing parts 0.
 */
export declare function fuzzyDateInt(options?: FuzzyDateOptions | null): number;

/** The list-entry fields `flattenMediaListCollection` reads; `query.mediaListCollection` results fit. */
export interface MediaListCollectionEntryLike {
  id: number;
  userId?: number | null;
  mediaId?: number | null;
  status?: string | null;
  score?: number | null;
  progress?: number | null;
}

/** The `MediaListCollection` shape `flattenMediaListCollection` reads. */
export interface MediaListCollectionLike {
  lists?:
    | readonly {
        name?: string | null;
        isCustomList?: boolean | null;
        isSplitCompletedList?: boolean | null;
        entries?: readonly MediaListCollectionEntryLike[] | null;
      }[]
    | null;
}

/** One list entry of a flattened `MediaListCollection`, with every list group it appears in. */
export interface FlattenedMediaListEntry {
  id: number;
  userId: number;
  mediaId: number;
  /** As the response carried it, e.g. `CURRENT` or `COMPLETED`. */
  status: string;
  score: number;
  progress: number;
  /** The names of the groups holding the entry: its status list and any custom lists. */
  listNames: string[];
  /** The entry is in at least one custom list. */
  inCustomList: boolean;
  /** The entry is in at least one split completed list (e.g. "Completed TV"). */
  inSplitCompletedList: boolean;
}

/** The media fields `crossLink` reads: `query.media` results and `page.medias` items fit. */
export interface CrossLinkMedia {
  id: number;
  /** AniList's MyAnimeList id, or null when MyAnimeList has no such entry. */
  idMal?: number | null;
}

export interface CrossLinkResult<TMedia extends CrossLinkMedia = CrossLinkMedia> {
  /** AniList id → MyAnimeList id, for media that carry one. */
  anilistToMal: ReadonlyMap<number, number>;
  /** MyAnimeList id → AniList id; when several media share a MyAnimeList id, the last wins. */
  malToAnilist: ReadonlyMap<number, number>;
  /** The media without a MyAnimeList id, in input order. */
  unmapped: readonly TMedia[];
}

/** AniList ↔ MyAnimeList id maps from a batch of AniList media. Pure: sends no request. */
export declare function crossLink<TMedia extends CrossLinkMedia>(media: readonly TMedia[]): CrossLinkResult<TMedia>;

/**
 * The AniList authorize URL (authorization-code grant) with `client_id`, `redirect_uri`,
 * `response_type=code` and, when given, `state`. Throws a `TypeError` for a blank or
 * non-string argument.
 */
export declare function buildAuthorizationUrl(clientId: string | number, redirectUri: string, state?: string): string;

/**
 * When an AniList access token expires: `now` (epoch ms or a Date; default: the current time)
 * plus `expires_in` seconds. Throws a `TypeError` when `expires_in` is not a finite number ≥ 0.
 */
export declare function getTokenExpiry(
  response: AniListTokenResponse | Pick<AniListTokenResponse, 'expires_in'>,
  now?: number | Date,
): Date;

/**
 * The MyAnimeList authorize URL (PKCE, `code_challenge_method=plain`): `response_type=code`,
 * `client_id`, `code_challenge` and, when given, `state`. Any non-empty challenge is taken, as
 * the original takes it (MAL wants 43–128 characters of `A-Z a-z 0-9 - . _ ~` and says so when
 * the user arrives). Under `plain` the challenge is the verifier, so keep the URL out of logs.
 */
export declare function buildMalAuthorizationUrl(clientId: string, codeChallenge: string, state?: string): string;

/** When a MyAnimeList access token expires: `now` plus `expires_in` seconds. */
export declare function getMalTokenExpiry(
  response: MalTokenResponse | Pick<MalTokenResponse, 'expires_in'>,
  now?: number | Date,
): Date;

/**
 * Where a token request goes and its per-call transport settings over the token client's
 * (10 s timeout, no retries): every `RequestOptions` key.
 */
export interface TokenRequestOptions extends RequestOptions {
  /** Override the token endpoint (a proxy, a test server); else ANILINK_*_TOKEN_URL, else the provider's. */
  tokenUrl?: string;
}

/**
 * Exchange an AniList authorization code for a token (no retries: a code is single-use). The
 * grant is a form, as the original sends it; `redirectUri` may be left out (sent empty). The
 * last argument is the original's `AbortSignal`, or per-call options. A refused grant rejects
 * with `AniLinkApiError` "AniList token request failed with status N." carrying `status` and `data`;
 * a 2xx answer without a usable token (not a JSON object, no non-empty string `access_token`, a
 * `refresh_token` neither absent, null nor a non-empty string) with `AniLinkAuthError`
 * "AniList token request returned an invalid token response: …".
 */
export declare function getAccessToken(
  clientId: string | number,
  clientSecret: string,
  code: string,
  redirectUri?: string,
  options?: TokenRequestOptions | AbortSignal,
): Promise<AniListTokenResponse>;

/** Trade an AniList refresh token for a new token (a form grant; errors as getAccessToken's). */
export declare function refreshAccessToken(
  clientId: string | number,
  clientSecret: string,
  refreshToken: string,
  options?: TokenRequestOptions | AbortSignal,
): Promise<AniListTokenResponse>;

export interface MalAuthorizationCodeRequest {
  clientId: string;
  /** Only for MAL apps of the "web" type. */
  clientSecret?: string;
  code: string;
  /** The PKCE verifier (MAL uses the plain method: the challenge you sent). */
  codeVerifier: string;
  redirectUri?: string;
  options?: TokenRequestOptions;
}

export interface MalRefreshTokenRequest {
  clientId: string;
  clientSecret?: string;
  refreshToken: string;
  options?: TokenRequestOptions;
}

/** Exchange a MyAnimeList authorization code for a token (errors as getAccessToken's, naming the MAL token request). */
export declare function getMalAccessToken(request: MalAuthorizationCodeRequest): Promise<MalTokenResponse>;

/** Trade a MyAnimeList refresh token for a new token (errors as getAccessToken's, naming the MAL token request). */
export declare function refreshMalAccessToken(request: MalRefreshTokenRequest): Promise<MalTokenResponse>;

// ---- mapExternalIds ----

/** The site the ids given to `mapExternalIds` belong to. */
export type MapExternalIdsSource = 'anilist' | 'myanimelist';

/**
 * Per-call transport settings of `mapExternalIds` (over the AniList slot's for
 * `aniLink.anilist.mapExternalIds`), plus where the id-mapping service is.
 */
export interface MapExternalIdsOptions extends RequestOptions {
  /** Base URL of the ARM id-mapping service; else ANILINK_ARM_URL, else `https://arm.haglund.dev`. */
  armUrl?: string;
}

export interface MapExternalIdsResult {
  /** AniList media id → MyAnimeList id, for the ids the service maps. */
  anilistToMal: ReadonlyMap<number, number>;
  /** MyAnimeList id → AniList media id, for the ids the service maps. */
  malToAnilist: ReadonlyMap<number, number>;
  /** The ids given that have no counterpart, in input order. */
  unmapped: readonly number[];
}

/**
 * Map AniList ids to MyAnimeList ids or back through the public ARM service (`POST
 * /api/v2/ids`, batches of 100, no credentials sent). An empty list sends nothing. Failures
 * are the transport's errors (`AniLinkRestError` for an HTTP error answer); an answer that is
 * not one entry per id is a `TypeError`.
 */
export declare function mapExternalIds(
  source: MapExternalIdsSource,
  ids: readonly number[],
  options?: MapExternalIdsOptions,
): Promise<MapExternalIdsResult>;
