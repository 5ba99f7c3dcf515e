'use strict';
// OAuth token exchanges (api.md §11), sent through the native transport by one token client:
// a 10-second timeout and no retries (a grant code must not be replayed), whatever any AniLink
// instance is configured with. Failures are AniLinkRestError/AniLinkNetworkError like any
// other call; secrets travel only in the request body, never in errors.

const native = require('./native.cjs');
const { runCall, deliver } = require('./call.cjs');
const {
  requireNonBlankString,
  aniListClientId,
  describeKind,
  isObject,
  ANILIST_TOKEN_URL,
  MAL_TOKEN_URL,
} = require('./helpers.cjs');

const TOKEN_TIMEOUT_MS = 10_000;
const TOKEN_OPTION_KEYS = ['tokenUrl', 'timeout', 'signal'];

let tokenSlot;
function slot() {
  if (tokenSlot === undefined) {
    const options = { timeout: TOKEN_TIMEOUT_MS, retry: false, paceWithRateLimit: false };
    tokenSlot = { options, native: native.NativeClient.create('token', options, deliver) };
  }
  return tokenSlot;
}

/** `{ tokenUrl?, timeout?, signal? }`: where to send the grant (tests, proxies) and per-call transport settings. */
function tokenOptions(helper, options) {
  if (options === undefined) return {};
  if (!isObject(options)) throw new TypeError(`${helper}: options must be an object (received ${describeKind(options)}).`);
  for (const key of Object.keys(options)) {
    if (!TOKEN_OPTION_KEYS.includes(key)) {
      throw new TypeError(`${helper}: unknown option "${key}". Valid options are: ${TOKEN_OPTION_KEYS.join(', ')}.`);
    }
  }
  if (options.tokenUrl !== undefined) requireNonBlankString(helper, 'options.tokenUrl', options.tokenUrl);
  return options;
}

/** Token URL overrides, like ANILINK_ANILIST_URL for the API (decisions D14): read per call. */
const TOKEN_URL_ENV = { [ANILIST_TOKEN_URL]: 'ANILINK_ANILIST_TOKEN_URL', [MAL_TOKEN_URL]: 'ANILINK_MAL_TOKEN_URL' };

function post(defaultUrl, contentType, body, options) {
  const { tokenUrl = process.env[TOKEN_URL_ENV[defaultUrl]] || defaultUrl, ...transport } = options;
  const client = slot();
  return runCall(client, transport, (callOptions, callId, flags) =>
    client.native.token(tokenUrl, contentType, body, callOptions, callId, flags),
  );
}

const postJson = (url, fields, options) => post(url, 'application/json', JSON.stringify(fields), options);

function postForm(url, fields, options) {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) form.append(key, value);
  return post(url, 'application/x-www-form-urlencoded', form.toString(), options);
}

/** Exchange an AniList authorization code for a token (`{ access_token, token_type, expires_in, refresh_token? }`). */
async function getAccessToken(clientId, clientSecret, code, redirectUri, options) {
  const helper = 'getAccessToken';
  const id = aniListClientId(helper, clientId);
  requireNonBlankString(helper, 'clientSecret', clientSecret);
  requireNonBlankString(helper, 'code', code);
  requireNonBlankString(helper, 'redirectUri', redirectUri);
  const fields = { grant_type: 'authorization_code', client_id: id, client_secret: clientSecret, redirect_uri: redirectUri, code };
  return postJson(ANILIST_TOKEN_URL, fields, tokenOptions(helper, options));
}

/** Trade an AniList refresh token for a new token. */
async function refreshAccessToken(clientId, clientSecret, refreshToken, options) {
  const helper = 'refreshAccessToken';
  const id = aniListClientId(helper, clientId);
  requireNonBlankString(helper, 'clientSecret', clientSecret);
  requireNonBlankString(helper, 'refreshToken', refreshToken);
  const fields = { grant_type: 'refresh_token', client_id: id, client_secret: clientSecret, refresh_token: refreshToken };
  return postJson(ANILIST_TOKEN_URL, fields, tokenOptions(helper, options));
}

function malRequest(helper, request) {
  if (!isObject(request)) throw new TypeError(`${helper}: the argument must be an object (received ${describeKind(request)}).`);
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
  return postForm(MAL_TOKEN_URL, fields, tokenOptions(helper, options));
}

/** Trade a MyAnimeList refresh token for a new token. */
async function refreshMalAccessToken(request) {
  const helper = 'refreshMalAccessToken';
  const { clientId, clientSecret, refreshToken, options } = malRequest(helper, request);
  requireNonBlankString(helper, 'refreshToken', refreshToken);
  const fields = { client_id: clientId, client_secret: clientSecret, grant_type: 'refresh_token', refresh_token: refreshToken };
  return postForm(MAL_TOKEN_URL, fields, tokenOptions(helper, options));
}

module.exports = { getAccessToken, refreshAccessToken, getMalAccessToken, refreshMalAccessToken };
