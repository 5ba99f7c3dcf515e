// Typing test: every name the original's entries export (api.md §1, its src/anilist.ts and
// src/mal.ts barrels) is exported here under the same name, value or type. `mapExternalIds` and
// its types are checked with that helper.
import {
  AniLink,
  AniLinkError,
  AniLinkApiError,
  AniLinkGraphQLError,
  AniLinkRestError,
  AniLinkNetworkError,
  AniLinkAuthError,
  AniLinkValidationError,
  AniLinkErrorCodes,
  ANILIST_AUTHORIZE_URL,
  ANILIST_TOKEN_URL,
  buildAuthorizationUrl,
  getAccessToken,
  getTokenExpiry,
  refreshAccessToken,
  paginate,
  paginatePages,
  paginateChunks,
  crossLink,
  fuzzyDate,
  fuzzyDateInt,
  destroyCachedAgents,
  ResponseCache,
  snapshotTransportState,
  buildProviderClients,
  MAL_API_BASE_URL,
  MAL_API_REFERENCE,
  MAL_AUTHORIZE_URL,
  MAL_TOKEN_URL,
  buildMalAuthorizationUrl,
  getMalAccessToken,
  getMalTokenExpiry,
  refreshMalAccessToken,
  buildMyAnimeListApi,
  malPaginate,
  malPaginatePages,
  type AniListApi,
  type AniLinkOptions,
  type AniListTokenResponse,
  type AniLinkErrorCode,
  type RateLimitInfo,
  type ChunkPaginateOptions,
  type ChunkPaginateResult,
  type PaginateOptions,
  type PaginateResult,
  type CustomPageOptions,
  type CrossLinkMedia,
  type CrossLinkResult,
  type FuzzyDateOptions,
  type AniLinkCredentials,
  type AniListCredentials,
  type MalCredentials,
  type ProviderCredentials,
  type ResolvedProviderCredentials,
  type AniLinkDiagnostic,
  type CircuitOpenContext,
  type DiagnosticsMode,
  type OnCircuitCloseHandler,
  type OnCircuitOpenHandler,
  type OnHookErrorHandler,
  type OnPaceHandler,
  type OnResponseHandler,
  type RequestAuth,
  type RequestAuthInput,
  type RequestContext,
  type RequestErrorContext,
  type RequestOptions,
  type ResponseCacheOptions,
  type ResponseCacheStats,
  type CircuitStateSnapshot,
  type PaceDeadlineSnapshot,
  type RetryBudgetSnapshot,
  type TransportStateSnapshot,
  type ProviderClients,
  type ProviderFactory,
  type ProviderId,
  type MalAuthorizationCodeRequest,
  type MalRefreshTokenRequest,
  type MalTokenResponse,
  type MalTokenRefreshCallback,
  type MalTokenRefreshErrorCallback,
  type AniListTokenRefreshCallback,
  type AniListTokenRefreshErrorCallback,
  type MyAnimeListApi,
  type MalPage,
  type MalPaginateOptions,
  type MalPaginateResult,
} from 'anilink-api-wrapper';
import * as anilistEntry from 'anilink-api-wrapper/anilist';
import * as malEntry from 'anilink-api-wrapper/mal';

// The /anilist barrel.
export const anilistValues = [
  anilistEntry.ANILIST_AUTHORIZE_URL,
  anilistEntry.ANILIST_TOKEN_URL,
  anilistEntry.buildAuthorizationUrl,
  anilistEntry.getAccessToken,
  anilistEntry.getTokenExpiry,
  anilistEntry.refreshAccessToken,
  anilistEntry.AniLinkApiError,
  anilistEntry.AniLinkAuthError,
  anilistEntry.AniLinkError,
  anilistEntry.AniLinkErrorCodes,
  anilistEntry.AniLinkGraphQLError,
  anilistEntry.AniLinkNetworkError,
  anilistEntry.AniLinkRestError,
  anilistEntry.AniLinkValidationError,
  anilistEntry.paginate,
  anilistEntry.paginateChunks,
  anilistEntry.paginatePages,
  anilistEntry.crossLink,
  anilistEntry.fuzzyDate,
  anilistEntry.fuzzyDateInt,
  anilistEntry.AniLink,
];
export type AniListEntryTypes = [
  anilistEntry.AniListTokenResponse,
  anilistEntry.AniLinkErrorCode,
  anilistEntry.RateLimitInfo,
  anilistEntry.RequestAuth,
  anilistEntry.RequestAuthInput,
  anilistEntry.RequestOptions,
  anilistEntry.ChunkPaginateOptions,
  anilistEntry.ChunkPaginateResult<unknown>,
  anilistEntry.PaginateOptions,
  anilistEntry.PaginateResult<unknown>,
  anilistEntry.CrossLinkMedia,
  anilistEntry.CrossLinkResult,
  anilistEntry.FuzzyDateOptions,
  anilistEntry.AniListApi,
  anilistEntry.AniLinkOptions,
];

// The /mal barrel.
export const malValues = [
  malEntry.AniLink,
  malEntry.MAL_API_BASE_URL,
  malEntry.MAL_API_REFERENCE,
  malEntry.MAL_AUTHORIZE_URL,
  malEntry.MAL_TOKEN_URL,
  malEntry.buildMalAuthorizationUrl,
  malEntry.getMalAccessToken,
  malEntry.getMalTokenExpiry,
  malEntry.refreshMalAccessToken,
  malEntry.buildMyAnimeListApi,
  malEntry.AniLinkApiError,
  malEntry.AniLinkAuthError,
  malEntry.AniLinkError,
  malEntry.AniLinkErrorCodes,
  malEntry.AniLinkGraphQLError,
  malEntry.AniLinkNetworkError,
  malEntry.AniLinkRestError,
  malEntry.AniLinkValidationError,
];
export type MalEntryTypes = [
  malEntry.MalAuthorizationCodeRequest,
  malEntry.MalRefreshTokenRequest,
  malEntry.MalTokenResponse,
  malEntry.MyAnimeListAnimeApi,
  malEntry.MyAnimeListApi,
  malEntry.MyAnimeListMangaApi,
  malEntry.MyAnimeListUserApi,
  malEntry.MalAnime,
  malEntry.MalAnimeListStatus,
  malEntry.MalAnimeListStatusUpdate,
  malEntry.MalAnimeListStatusValue,
  malEntry.MalManga,
  malEntry.MalMangaListStatus,
  malEntry.MalMangaListStatusUpdate,
  malEntry.MalMangaListStatusValue,
  malEntry.MalPicture,
  malEntry.MalRequestOptions,
  malEntry.MalUser,
  malEntry.AniLinkCredentials,
  malEntry.MalCredentials,
  malEntry.ProviderCredentials,
  malEntry.AniLinkErrorCode,
  malEntry.RateLimitInfo,
  malEntry.RequestAuth,
  malEntry.RequestAuthInput,
  malEntry.RequestOptions,
];

// The root values, by kind.
export const rootClasses = [
  AniLink,
  AniLinkError,
  AniLinkApiError,
  AniLinkGraphQLError,
  AniLinkRestError,
  AniLinkNetworkError,
  AniLinkAuthError,
  AniLinkValidationError,
  ResponseCache,
];
export const rootConstants: string[] = [
  ANILIST_AUTHORIZE_URL,
  ANILIST_TOKEN_URL,
  MAL_API_BASE_URL,
  MAL_API_REFERENCE,
  MAL_AUTHORIZE_URL,
  MAL_TOKEN_URL,
];
export const rootFunctions = [
  buildAuthorizationUrl,
  getAccessToken,
  getTokenExpiry,
  refreshAccessToken,
  paginate,
  paginatePages,
  paginateChunks,
  crossLink,
  fuzzyDate,
  fuzzyDateInt,
  destroyCachedAgents,
  snapshotTransportState,
  buildProviderClients,
  buildMalAuthorizationUrl,
  getMalAccessToken,
  getMalTokenExpiry,
  refreshMalAccessToken,
  buildMyAnimeListApi,
  malPaginate,
  malPaginatePages,
];
export const codes: AniLinkErrorCode = AniLinkErrorCodes.VALIDATION;

// The lower-level entry points, as the original types them.
const clients: ProviderClients = buildProviderClients({ anilist: { authToken: 't' }, mal: { clientId: 'c' } });
const state: TransportStateSnapshot = snapshotTransportState(
  clients.stateOwners.anilist,
  clients.responseCaches?.anilist,
);
export const openedAt: number | null = state.circuit[0]?.openedAt ?? null;
export const capturedAt: number = snapshotTransportState(clients.stateOwners.mal).capturedAt;
export const sharing: 'off' | 'redis' | 'local-fallback' = state.sharedState;
export const admittedInFlight: number | undefined = state.admission[0]?.inFlight;
export const quotaWindowEnd: number | null | undefined = state.admission[0]?.windowEndsAt;
export const legacy: ProviderClients = buildProviderClients({}, { timeout: 5_000 } satisfies AniLinkOptions);
const owner = {};
export const malOnly: MyAnimeListApi = buildMyAnimeListApi({ accessToken: 'm' }, owner);
export const malState: TransportStateSnapshot = snapshotTransportState(owner);
export const anilistApi: AniListApi = clients.anilist;
export const factory: ProviderFactory<MalCredentials, MyAnimeListApi> = (credentials) =>
  buildMyAnimeListApi(credentials);

// Credentials and callbacks.
const onTokenRefresh: AniListTokenRefreshCallback = (response: AniListTokenResponse) => void response.access_token;
const onTokenRefreshError: AniListTokenRefreshErrorCallback = (error) => void error.code;
const onMalRefresh: MalTokenRefreshCallback = (response: MalTokenResponse) => void response.scope;
const onMalRefreshError: MalTokenRefreshErrorCallback = (error) => void error.message;
const anilistSlot: AniListCredentials = {
  authToken: 't',
  refreshToken: 'r',
  clientId: '1',
  clientSecret: 's',
  onTokenRefresh,
  onTokenRefreshError,
};
const malSlot: MalCredentials = {
  accessToken: 'm',
  refreshToken: 'r',
  clientId: 'c',
  onTokenRefresh: onMalRefresh,
  onTokenRefreshError: onMalRefreshError,
};
export const credentials: AniLinkCredentials = {
  anilist: anilistSlot,
  mal: malSlot,
  diagnostics: 'hook' satisfies DiagnosticsMode,
};
export const anySlot: ProviderCredentials = { timeout: 1, authToken: 't' };
export const resolved: ResolvedProviderCredentials = {
  auth: { token: 't', headers: { 'X-MAL-CLIENT-ID': 'c' } },
  options: { retry: false },
};
export const auth: RequestAuthInput[] = [
  'token',
  { token: 't' } satisfies RequestAuth,
  { headers: { Authorization: 'Basic x' } },
];
export const provider: ProviderId = 'mal';

// Every other type name resolves.
export type RootTypes = [
  RateLimitInfo,
  ChunkPaginateOptions,
  ChunkPaginateResult<unknown>,
  PaginateOptions,
  PaginateResult<unknown>,
  CustomPageOptions,
  CrossLinkMedia,
  CrossLinkResult,
  FuzzyDateOptions,
  AniLinkDiagnostic,
  CircuitOpenContext,
  OnCircuitCloseHandler,
  OnCircuitOpenHandler,
  OnHookErrorHandler,
  OnPaceHandler,
  OnResponseHandler,
  RequestContext,
  RequestErrorContext,
  RequestOptions,
  ResponseCacheOptions,
  ResponseCacheStats,
  CircuitStateSnapshot,
  PaceDeadlineSnapshot,
  RetryBudgetSnapshot,
  MalAuthorizationCodeRequest,
  MalRefreshTokenRequest,
  MalPage<unknown>,
  MalPaginateOptions,
  MalPaginateResult<unknown>,
];

// The records the facade writes itself are diagnostics too: an ignored request option names it.
export const ignoredOption: AniLinkDiagnostic = {
  source: 'anilink',
  kind: 'unknown-option',
  hookName: 'options',
  option: 'retires',
  message: 'Unknown request option "retires" was ignored.',
};
export const fellBack: AniLinkDiagnostic['kind'] = 'invalid-option';

// @ts-expect-error a state owner is an object
snapshotTransportState('anilist');
// @ts-expect-error stateOwners cannot be replaced
clients.stateOwners = { anilist: {}, mal: {} };
// Deliberate difference: the named slots are closed (a mistyped key fails to compile), where the
// original's extend the open ProviderCredentials.
// @ts-expect-error no index signature on AniListCredentials
export const slotsAreProviderCredentials: ProviderCredentials[] = [anilistSlot];
// @ts-expect-error accessToken is not an AniList field
export const misplaced: AniLinkCredentials = { anilist: { accessToken: 'm' } };
