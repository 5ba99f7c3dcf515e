'use strict';
// Automatic token refresh (api.md §11), opt-in per slot: with `refreshToken` and `clientId`
// (AniList also `clientSecret`), a call that fails for want of a valid token (AUTH_ERROR, an
// HTTP 401, or a GraphQL entry with status 401) triggers one refresh grant, shared by every
// call failing meanwhile (a call that started before a grant completed just retries with its
// token); the new token is used by every later call of the slot, and the failed call is
// replayed once. A second 401 rejects as usual.

const { refreshAccessToken, refreshMalAccessToken } = require('./on-demand.cjs');
const { callHook, reportDiagnostic } = require('./diagnostics.cjs');

const nonBlank = (value) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

/** Whether a failure asks for a new token. */
function needsNewToken(error) {
  return error?.code === 'AUTH_ERROR' || error?.status === 401;
}

/**
 * The refresher of one slot, or undefined when the slot does not opt in.
 * @param {'anilist' | 'mal'} provider
 * @param {{ options: object, native: { setToken(token: string): void } }} slot
 */
function createRefresher(provider, slot) {
  const options = slot.options;
  let refreshToken = nonBlank(options.refreshToken);
  const clientId = nonBlank(options.clientId);
  const clientSecret = nonBlank(options.clientSecret);
  if (!refreshToken || !clientId || (provider === 'anilist' && !clientSecret)) return undefined;
  const route = { onHookError: options.onHookError, diagnostics: options.diagnostics };
  const hookName = provider === 'anilist' ? 'aniListTokenRefresh' : 'malTokenRefresh';
  let pending;
  /** Bumped by every successful grant: a call started before it just retries with the new token. */
  let generation = 0;

  /** Give the slot the new access token; one its header cannot carry fails the grant as an invalid response. */
  const useToken = (accessToken) => {
    try {
      slot.native.setToken(accessToken);
    } catch (cause) {
      const problem = `its access_token cannot be sent: ${cause?.message ?? String(cause)}`;
      throw require('./oauth.cjs').invalidTokenResponse(provider, problem, cause);
    }
  };

  const grant = async () => {
    try {
      const response =
        provider === 'anilist'
          ? await refreshAccessToken(clientId, clientSecret, refreshToken)
          : await refreshMalAccessToken({ clientId, clientSecret, refreshToken });
      // The exchange resolves only a usable token response (oauth.cjs); the slot takes it only
      // when its transport can send it, and keeps both tokens otherwise.
      useToken(response.access_token);
      // A response without a new refresh token keeps the old one.
      const effective = { ...response, refresh_token: response.refresh_token ?? refreshToken };
      refreshToken = effective.refresh_token;
      generation += 1;
      if (typeof options.onTokenRefresh === 'function')
        callHook('onTokenRefresh', options.onTokenRefresh, [effective], route);
    } catch (error) {
      if (typeof options.onTokenRefreshError === 'function') {
        callHook('onTokenRefreshError', options.onTokenRefreshError, [error], route);
      }
      const message = `The ${provider === 'anilist' ? 'AniList' : 'MyAnimeList'} token refresh failed: ${error?.message ?? String(error)}`;
      reportDiagnostic({ source: 'anilink', kind: 'token-refresh', hookName, message }, error, route);
      throw error;
    }
  };

  return {
    /** Run `call`; when it fails for want of a token, refresh (once for all waiting calls) and run it again. */
    async run(call) {
      const startedWith = generation;
      try {
        return await call();
      } catch (error) {
        if (!needsNewToken(error)) throw error;
        if (generation === startedWith) {
          pending ??= grant().finally(() => {
            pending = undefined;
          });
          await pending;
        }
        return call();
      }
    },
  };
}

module.exports = { createRefresher };
