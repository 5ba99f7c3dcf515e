'use strict';
// OAuth token exchanges (api.md §11), sent through the native transport by one token client:
// a 10-second timeout and no retries by default (a grant code must not be replayed), whatever
// any AniLink instance is configured with. Both providers' grants are forms, as the original
// sends them (decisions D27). A refused grant is an AniLinkApiError whose message names the
// token request; a 2xx answer that is no usable token response is an AniLinkAuthError saying
// what is wrong with it. Secrets travel only in the request body, never in errors.

const { createExternalClient, postTo } = require('./external.cjs');
const { AniLinkApiError, AniLinkAuthError, AniLinkError, AniLinkErrorCodes } = require('./errors.cjs');
const {
  isNonBlankString,
  requireNonBlankString,
  aniListClientId,
  describeKind,
  isObject,
  ANILIST_TOKEN_URL,
  MAL_TOKEN_URL,
} = require('./helpers.cjs');

const TOKEN_TIMEOUT_MS = 10_000;

let tokenClient;
function client() {
  tokenClient ??= createExternalClient({ timeout: TOKEN_TIMEOUT_MS, retry: false, paceWithRateLimit: false });
  return tokenClient;
}

/**
 * The per-call options: `tokenUrl` (where to send the grant: tests, proxies) and transport
 * settings over the token client's. The AniList helpers also take a bare AbortSignal there,
 * as the original's fifth (fourth) argument is.
 */
function tokenOptions(helper, options) {
  if (options === undefined) return {};
  if (options instanceof AbortSignal) return { signal: options };
  if (!isObject(options))
    throw new TypeError(`${helper}: options must be an object or an AbortSignal (received ${describeKind(options)}).`);
  if (options.tokenUrl !== undefined) requireNonBlankString(helper, 'options.tokenUrl', options.tokenUrl);
  return options;
}

/** Token URL overrides, like ANILINK_ANILIST_URL for the API (decisions D14): the binding names them; read per call. */
const { anilistToken, malToken } = require('./native.cjs').contract.urls;
/** Each provider's token endpoint: its default URL, the variable that overrides it, and its name in errors. */
const TOKEN_ENDPOINTS = {
  anilist: { url: ANILIST_TOKEN_URL, variable: anilistToken.variable, label: 'AniList token request' },
  mal: { url: MAL_TOKEN_URL, variable: malToken.variable, label: 'MAL token request' },
};
const NETWORK_ENDINGS = {
  [AniLinkErrorCodes.ABORTED]: 'was cancelled.',
  [AniLinkErrorCodes.TIMEOUT]: 'timed out.',
  [AniLinkErrorCodes.NETWORK]: 'failed due to a network error.',
  [AniLinkErrorCodes.CIRCUIT]: 'was refused: the circuit breaker is open.',
};

/**
 * The error a failed grant rejects with, as the original words it: an answer of the endpoint
 * becomes an AniLinkApiError "<label> failed with status N." carrying the status and body (the
 * transport's error as `cause`); a transport failure keeps its class and gets the label.
 */
function tokenError(label, error) {
  if (error instanceof AniLinkApiError && error.code !== AniLinkErrorCodes.GRAPHQL) {
    const refused = new AniLinkApiError(error.status, error.data, undefined, {
      rateLimit: error.rateLimit,
      contentType: error.contentType,
      requestId: error.requestId,
    });
    refused.message = `${label} failed with status ${error.status}.`;
    refused.cause = error;
    return refused;
  }
  if (error instanceof AniLinkError && NETWORK_ENDINGS[error.code] !== undefined) {
    error.message = `${label} ${NETWORK_ENDINGS[error.code]}`;
  }
  return error;
}

/**
 * What makes a token endpoint's 2xx answer unusable, as a sentence, or undefined when it is a
 * token response: a JSON object with a non-empty string `access_token` and, when present (not
 * null), a non-empty string `refresh_token`. Values are described by kind, never shown (D31).
 */
function tokenResponseProblem(response) {
  if (response === undefined) return 'the body is empty.';
  if (!isObject(response)) return `the body is not a JSON object (received ${describeKind(response)}).`;
  const { access_token: accessToken, refresh_token: refreshToken } = response;
  if (accessToken === undefined) return 'access_token is missing.';
  if (!isNonBlankString(accessToken))
    return `access_token must be a non-empty string (received ${describeKind(accessToken)}).`;
  if (refreshToken !== undefined && refreshToken !== null && !isNonBlankString(refreshToken))
    return `refresh_token must be a non-empty string when present (received ${describeKind(refreshToken)}).`;
  return undefined;
}

/**
 * The error of a token endpoint's answer that gives no usable token: an AniLinkAuthError (the
 * caller still has no token) naming the token request and what is wrong, never a token value.
 * @param {'anilist' | 'mal'} provider
 * @param {string} problem a sentence
 * @param {unknown} [cause]
 */
function invalidTokenResponse(provider, problem, cause) {
  const error = new AniLinkAuthError();
  error.message = `${TOKEN_ENDPOINTS[provider].label} returned an invalid token response: ${problem}`;
  if (cause !== undefined) error.cause = cause;
  return error;
}

async function postForm(provider, fields, options) {
  const endpoint = TOKEN_ENDPOINTS[provider];
  const { tokenUrl = process.env[endpoint.variable] || endpoint.url, ...transport } = options;
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) form.append(key, value);
  let response;
  try {
    response = await postTo(client(), tokenUrl, 'application/x-www-form-urlencoded', form.toString(), transport);
  } catch (error) {
    throw tokenError(endpoint.label, error);
  }
  const problem = tokenResponseProblem(response);
  if (problem !== undefined) throw invalidTokenResponse(provider, problem);
  return response;
}

/**
 * Exchange an AniList authorization code for a token (`{ access_token, token_type, expires_in, refresh_token? }`).
 * `redirectUri` may be left out (sent empty, as the original does) when the application needs none.
 */
async function getAccessToken(clientId, clientSecret, code, redirectUri, options) {
  const helper = 'getAccessToken';
  const id = aniListClientId(helper, clientId);
  requireNonBlankString(helper, 'clientSecret', clientSecret);
  requireNonBlankString(helper, 'code', code);
  if (redirectUri !== undefined) requireNonBlankString(helper, 'redirectUri', redirectUri);
  const fields = {
    grant_type: 'authorization_code',
    client_id: id,
    client_secret: clientSecret,
    redirect_uri: redirectUri ?? '',
    code,
  };
  return postForm('anilist', fields, tokenOptions(helper, options));
}

/** Trade an AniList refresh token for a new token. */
async function refreshAccessToken(clientId, clientSecret, refreshToken, options) {
  const helper = 'refreshAccessToken';
  const id = aniListClientId(helper, clientId);
  requireNonBlankString(helper, 'clientSecret', clientSecret);
  requireNonBlankString(helper, 'refreshToken', refreshToken);
  const fields = {
    grant_type: 'refresh_token',
    client_id: id,
    client_secret: clientSecret,
    refresh_token: refreshToken,
  };
  return postForm('anilist', fields, tokenOptions(helper, options));
}

function malRequest(helper, request) {
  if (!isObject(request))
    throw new TypeError(`${helper}: the argument must be an object (received ${describeKind(request)}).`);
  requireNonBlankString(helper, 'clientId', request.clientId);
  if (request.clientSecret !== undefined) requireNonBlankString(helper, 'clientSecret', request.clientSecret);
  return request;
}

/** Exchange a MyAnimeList authorization code (PKCE, plain) for a token. */
async function getMalAccessToken(request) {
  const helper = 'getMalAccessToken';
  const { clientId, clientSecret, code, codeVerifier, redirectUri, options } = malRequest(helper, request);
  requireNonBlankString(helper, 'code', code);
  requireNonBlankString(helper, 'codeVerifier', codeVerifier);
  if (redirectUri !== undefined) requireNonBlankString(helper, 'redirectUri', redirectUri);
  const fields = {
    client_id: clientId,
    client_secret: clientSecret,
    grant_type: 'authorization_code',
    code,
    code_verifier: codeVerifier,
    redirect_uri: redirectUri,
  };
  return postForm('mal', fields, tokenOptions(helper, options));
}

/** Trade a MyAnimeList refresh token for a new token. */
async function refreshMalAccessToken(request) {
  const helper = 'refreshMalAccessToken';
  const { clientId, clientSecret, refreshToken, options } = malRequest(helper, request);
  requireNonBlankString(helper, 'refreshToken', refreshToken);
  const fields = {
    client_id: clientId,
    client_secret: clientSecret,
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
  };
  return postForm('mal', fields, tokenOptions(helper, options));
}

module.exports = {
  getAccessToken,
  refreshAccessToken,
  getMalAccessToken,
  refreshMalAccessToken,
  invalidTokenResponse,
};
