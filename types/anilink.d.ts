import type {
  ActivityUnion,
  AniListMutationOperations,
  AniListPageOperations,
  AniListQueryOperations,
  NotificationUnion,
} from './anilist.generated';
import type { FlattenedMediaListEntry, MediaListCollectionLike, crossLink, fuzzyDate, fuzzyDateInt } from './helpers';
import type { mapExternalIds } from './helpers';
import type { MyAnimeListApi } from './mal';
import type { PaginateOptions, PaginateResult, paginate, paginateChunks, paginatePages } from './paginate';
import type {
  DiagnosticsMode,
  OnHookErrorHandler,
  RequestOptions,
  SlotOptions,
  TransportStateSnapshot,
} from './transport';
import type { ResponseCache } from './response-cache';
import type { AniLinkError } from './errors';

/** Transport options for the positional form `new AniLink(token, options)` (AniList only). */
export interface AniLinkOptions extends SlotOptions {
  /** Endpoint override (decisions D14); default https://graphql.anilist.co or $ANILINK_ANILIST_URL. */
  baseUrl?: string;
}

export interface AniListTokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token?: string;
}

export interface MalTokenResponse extends AniListTokenResponse {
  scope?: string;
}

/** Called once per successful automatic token refresh, with the effective token response (persist it). */
export type AniListTokenRefreshCallback = (response: AniListTokenResponse) => void;
/** Called once per failed automatic token refresh, with the error the waiting calls reject with. */
export type AniListTokenRefreshErrorCallback = (error: AniLinkError) => void;
/** Called once per successful automatic MyAnimeList token refresh, with the effective token response. */
export type MalTokenRefreshCallback = (response: MalTokenResponse) => void;
/** Called once per failed automatic MyAnimeList token refresh. */
export type MalTokenRefreshErrorCallback = (error: AniLinkError) => void;

/**
 * What any provider slot may hold: transport options and provider-specific fields (the
 * original's base shape; `AniListCredentials` and `MalCredentials` name their fields).
 */
export interface ProviderCredentials extends SlotOptions {
  readonly [credential: string]: unknown;
}

/** The AniList slot: auth fields plus any transport option. */
export interface AniListCredentials extends SlotOptions {
  authToken?: string;
  refreshToken?: string;
  clientId?: string;
  clientSecret?: string;
  onTokenRefresh?: AniListTokenRefreshCallback;
  onTokenRefreshError?: AniListTokenRefreshErrorCallback;
  /** Endpoint override (decisions D14); default https://graphql.anilist.co or $ANILINK_ANILIST_URL. */
  baseUrl?: string;
}

/** The MyAnimeList slot: auth fields plus any transport option. */
export interface MalCredentials extends SlotOptions {
  accessToken?: string;
  refreshToken?: string;
  /** Sent as X-MAL-CLIENT-ID when there is no access token. */
  clientId?: string;
  clientSecret?: string;
  onTokenRefresh?: MalTokenRefreshCallback;
  onTokenRefreshError?: MalTokenRefreshErrorCallback;
  /** Endpoint override (decisions D14); default https://api.myanimelist.net/v2 or $ANILINK_MAL_URL. */
  baseUrl?: string;
}

export interface AniLinkCredentials {
  anilist?: AniListCredentials;
  mal?: MalCredentials;
  /** Default for slots that do not set their own. */
  onHookError?: OnHookErrorHandler;
  /** Default for slots that do not set their own. */
  diagnostics?: DiagnosticsMode;
}

/** Authentication a provider applies to a request: a bearer token, or explicit headers. */
export interface RequestAuth {
  readonly token?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A bare token string, or structured authentication. */
export type RequestAuthInput = string | RequestAuth;

/** One slot split into its authentication and its transport options. */
export interface ResolvedProviderCredentials {
  auth?: RequestAuthInput;
  options?: SlotOptions;
}

export type ProviderId = 'anilist' | 'mal';

/** The provider clients of one `AniLink`, from `buildProviderClients`. */
export interface ProviderClients {
  anilist: AniListApi;
  mal: MyAnimeListApi;
  /** The owner of each client's breaker, budget and pacing state: pass it to `snapshotTransportState`. */
  readonly stateOwners: { readonly anilist: object; readonly mal: object };
  /** The response cache each slot was given, when any was. */
  readonly responseCaches?: { readonly anilist?: ResponseCache; readonly mal?: ResponseCache };
}

/** Builds one provider's client from its slot alone (`legacyOptions`: the positional form's options). */
export type ProviderFactory<TCredentials, TClient> = (
  credentials?: TCredentials,
  legacyOptions?: SlotOptions,
) => TClient;

export interface CustomPageOptions extends PaginateOptions {
  /** Transport options for every page request. */
  transportOptions?: RequestOptions;
}

/** Options of `aniLink.anilist.watch.*`. */
export interface WatchOptions {
  /** Unix time in seconds: yield items created since then. Without it, the first poll only sets the baseline. */
  since?: number;
  /** Between polls; default 60000, at least 10000 (smaller values are raised). */
  intervalMs?: number;
  /** Items per page, at most 50 (default). */
  perPage?: number;
  /** Ends the watch (the generator returns). */
  signal?: AbortSignal;
  /** Transport options of every poll request. */
  transportOptions?: RequestOptions;
}

export interface WatchNotificationsOptions extends WatchOptions {
  type?: string;
  type_in?: readonly string[];
  /** Applied to the first poll only. */
  resetNotificationCount?: boolean;
  asHtml?: boolean;
}

export interface WatchActivityOptions extends WatchOptions {
  userId?: number;
  messengerId?: number;
  mediaId?: number;
  type?: string;
  isFollowing?: boolean;
  /** Default ["ID_DESC"]. */
  sort?: readonly string[];
  asHtml?: boolean;
}

export interface AniListApi {
  query: AniListQueryOperations & { readonly page: AniListPageOperations };
  mutation: AniListMutationOperations;
  /** A caller-written document: one root → its value; several roots → the `{ data }` envelope. */
  custom<T = unknown>(query: string, variables?: Record<string, unknown>, options?: RequestOptions): Promise<T>;
  /** A caller-written `Page` query (with $page/$perPage and pageInfo { hasNextPage }), walked page by page. */
  customPage<TItem = unknown>(
    document: string,
    itemsKey: string,
    variables?: Record<string, unknown>,
    options?: CustomPageOptions,
  ): Promise<PaginateResult<TItem>>;
  paginate: typeof paginate;
  paginatePages: typeof paginatePages;
  paginateChunks: typeof paginateChunks;
  /** Pollers: new notifications or activities, oldest first, every `intervalMs`. */
  watch: {
    /** Notifications (a union: check `__typename` or `type`). */
    notifications(options?: WatchNotificationsOptions): AsyncGenerator<NotificationUnion, void, undefined>;
    /** Activities (a union: check `__typename` or `type`). */
    activity(options?: WatchActivityOptions): AsyncGenerator<ActivityUnion, void, undefined>;
  };
  fuzzyDate: typeof fuzzyDate;
  fuzzyDateInt: typeof fuzzyDateInt;
  /**
   * One entry per list-entry id of a `mediaListCollection` result, with every group it appears
   * in (`listNames`, `inCustomList`, `inSplitCompletedList`). A null collection gives `[]`.
   */
  flattenMediaListCollection(collection: MediaListCollectionLike | null | undefined): FlattenedMediaListEntry[];
  crossLink: typeof crossLink;
  mapExternalIds: typeof mapExternalIds;
}

export declare class AniLink {
  /** No credentials: public AniList queries only. */
  constructor();
  /** An AniList token, and transport options for AniList. */
  constructor(authToken: string | undefined, options?: AniLinkOptions);
  /** Credentials per provider slot, each with its own transport options. */
  constructor(credentials: AniLinkCredentials);
  /**
   * Either form from a value typed as both, as the original declares it. `options` with a
   * credentials object is a TypeError at run time: transport options go in each slot.
   */
  constructor(authToken?: string | AniLinkCredentials, options?: AniLinkOptions);
  /** Writable, as in the original, so a test can swap in a stand-in API. */
  anilist: AniListApi;
  mal: MyAnimeListApi;
  /** A deep-frozen copy of each provider's breaker, budget and pacing state. */
  getTransportState(): { readonly anilist: TransportStateSnapshot; readonly mal: TransportStateSnapshot };
}

/**
 * The provider clients an `AniLink` is made of, without the class: each slot validated as the
 * constructor does. `legacyOptions` (transport options of the positional form) apply to AniList
 * when its slot has no transport option of its own.
 * @throws {TypeError} for a credentials object the constructor would refuse.
 */
export declare function buildProviderClients(
  credentials?: AniLinkCredentials,
  legacyOptions?: AniLinkOptions,
): ProviderClients;

/**
 * A MyAnimeList client alone. `stateOwner`, when given, names its state for
 * `snapshotTransportState` (an owner names one client: reusing one is a TypeError).
 */
export declare function buildMyAnimeListApi(credentials?: MalCredentials, stateOwner?: object): MyAnimeListApi;

/**
 * A deep-frozen copy of the breaker, budget and pacing state a state owner names (an owner that
 * names no client: empty lists); with `responseCache`, that cache's counters as `responseCache`.
 */
export declare function snapshotTransportState(owner: object, responseCache?: ResponseCache): TransportStateSnapshot;

/**
 * Release every keep-alive connection pool: cached, parked and default. Requests already in
 * flight still complete; the next request rebuilds the default pool. Safe to call twice.
 */
export declare function destroyCachedAgents(): void;

export declare const ANILIST_AUTHORIZE_URL: 'https://anilist.co/api/v2/oauth/authorize';
export declare const ANILIST_TOKEN_URL: 'https://anilist.co/api/v2/oauth/token';
export declare const MAL_API_BASE_URL: 'https://api.myanimelist.net/v2';
export declare const MAL_API_REFERENCE: 'https://myanimelist.net/apiconfig/references/api/v2';
export declare const MAL_AUTHORIZE_URL: 'https://myanimelist.net/v1/oauth2/authorize';
export declare const MAL_TOKEN_URL: 'https://myanimelist.net/v1/oauth2/token';
