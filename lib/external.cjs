'use strict';
// Native clients without credentials of their own, for POSTs to absolute URLs outside the
// provider slots: the OAuth token endpoints and the id-mapping service of mapExternalIds. They
// use the same transport as every operation (pools, timeouts, retries, hooks, breaker), only
// with their own state and options.

const { addon, contract } = require('./native.cjs');
const { runCall, deliver } = require('./call.cjs');
const { createNativeClient } = require('./slot-environment.cjs');

const { slot: SLOT } = contract;

/** Slot fields that authenticate a provider client (and observe its token refresh): the binding's slot schema. */
const CREDENTIAL_FIELDS = [SLOT.anilist.tokenField, SLOT.mal.tokenField, ...SLOT.authFields];

/** Slot fields that are credentials or endpoints of a provider, not transport settings. */
const PROVIDER_FIELDS = new Set([...CREDENTIAL_FIELDS, SLOT.baseUrlField]);

/**
 * A client that sends to any URL with the transport settings of `options` (a provider slot's
 * options may be given: its credentials and endpoint are left out).
 * @param {object} options
 */
function createExternalClient(options) {
  const transport = {};
  for (const [key, value] of Object.entries(options)) if (!PROVIDER_FIELDS.has(key)) transport[key] = value;
  const nativeClient = createNativeClient('external', transport, deliver);
  return { provider: 'external', options: transport, native: nativeClient, nativeId: nativeClient.id };
}

/**
 * POST `body` (sent as `contentType`) to `url`; resolves the parsed answer.
 * @param {{ options: object, native: object, nativeId: number }} client from createExternalClient
 * @param {object | undefined} requestOptions per-call transport options
 */
function postTo(client, url, contentType, body, requestOptions) {
  return runCall(
    client,
    requestOptions,
    (callOptions, callId, flags) =>
      addon().startPost(client.nativeId, url, contentType, body, callOptions, callId, flags),
    'post',
  );
}

module.exports = { createExternalClient, postTo, CREDENTIAL_FIELDS };
