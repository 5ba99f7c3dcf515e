// anilink-api-wrapper/mal: the MyAnimeList-scoped entry (same classes as the root entry).
export {
  AniLink,
  MAL_API_BASE_URL,
  MAL_API_REFERENCE,
  MAL_AUTHORIZE_URL,
  MAL_TOKEN_URL,
  type MalCredentials,
  type MalTokenResponse,
  buildMyAnimeListApi,
  type AniLinkCredentials,
  type ProviderCredentials,
  type RequestAuth,
  type RequestAuthInput,
  type MalTokenRefreshCallback,
  type MalTokenRefreshErrorCallback,
} from '../anilink';
export * from '../errors';
export type { RequestOptions, RateLimitInfo, AniLinkErrorCode } from '../transport';
export { malPaginate, malPaginatePages } from '../paginate';
export type { MalPaginateOptions, MalPaginateResult } from '../paginate';
export { buildMalAuthorizationUrl, getMalTokenExpiry, getMalAccessToken, refreshMalAccessToken } from '../helpers';
export type { TokenRequestOptions, MalAuthorizationCodeRequest, MalRefreshTokenRequest } from '../helpers';
export * from '../mal';
