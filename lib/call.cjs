'use strict';
// One call through the native transport: AbortSignal bridge, hook dispatch, results and
// errors back as JavaScript values. Every transport rule (retries, pacing, breaker…) runs
// natively; this module only adapts.
//
// The native side answers through one outbox per provider client: batches of
// `[callId, kind, payload?]` messages, parsed with a single JSON.parse (see src/outbox.rs).
// A call that fails before dispatch throws its error description instead; that is the only
// other way a failure comes back. The message kinds, call flags and the diagnostic pseudo-hook are the binding's
// (src/wire/contract.rs), read once here.

const { addon, contract } = require('./native.cjs');
const { fromDescription, unknownFailure } = require('./errors.cjs');
const { callHook, reportDiagnostic } = require('./diagnostics.cjs');
const { reportHttpMockOnce } = require('./http-mock-detection.cjs');
const { observeCall } = require('./channels.cjs');

// This module loads with the first client, which needs the addon anyway.
const native = addon();
const { kinds: KIND, flags: FLAG, diagnosticHook: DIAGNOSTIC_HOOK } = contract;
const hasOwn = Object.prototype.hasOwnProperty;

/** Per-request keys the facade reads besides the transport options. */
const FACADE_KEYS = ['fields'];
const VALID_REQUEST_KEYS = [...native.transportOptionKeys(), ...FACADE_KEYS];
const validRequestKeys = new Set(VALID_REQUEST_KEYS);
/** Unknown keys already reported: each one is reported once per process (D33). */
const reportedUnknownKeys = new Set();

/** Calls started and not yet settled, by id. */
const pending = new Map();
let lastCallId = 0;

function nextCallId() {
  do {
    lastCallId = lastCallId >= 0x7fffffff ? 1 : lastCallId + 1;
  } while (pending.has(lastCallId));
  return lastCallId;
}

/** A per-request option over the client's, per key (`{...client.options, ...request}`). */
function pick(clientOptions, requestOptions, key) {
  if (requestOptions !== undefined && hasOwn.call(requestOptions, key)) return requestOptions[key];
  return clientOptions[key];
}

class PendingCall {
  constructor(client, requestOptions, signal, observation) {
    this.client = client;
    /** The call's diagnostics_channel observation, when someone listened as it started. */
    this.observation = observation;
    this.requestOptions = requestOptions;
    this.signal = signal;
    this.exposeRaw = pick(client.options, requestOptions, 'exposeRawAxiosError') === true;
    /** The error of the last report without a scheduled retry: the one the call rejects with. */
    this.terminal = undefined;
    this.resolve = undefined;
    this.reject = undefined;
    this.onAbort = undefined;
  }

  option(key) {
    return pick(this.client.options, this.requestOptions, key);
  }

  /** A hook event: the native side sends one only for a hook the call has (its resolved options decide). */
  event(message) {
    this.observation?.event(message);
    const { hook: name, ctx, error, unhooked } = message;
    // An observed call gets every event; the native side says which ones a hook of it takes.
    if (unhooked) return;
    const route = { onHookError: this.option('onHookError'), diagnostics: this.option('diagnostics') };
    // A native diagnostic (shared state fell back or rejoined): `ctx` is the record itself.
    if (name === DIAGNOSTIC_HOOK) {
      reportDiagnostic(ctx, undefined, route);
      return;
    }
    const hook = this.option(name);
    if (error === undefined) {
      callHook(name, hook, [ctx], route);
      return;
    }
    const failure = fromDescription(error, this.exposeRaw);
    if (ctx.nextDelayMs === undefined) this.terminal = failure;
    callHook(name, hook, [failure, ctx], route);
  }

  failure(description) {
    const terminal = this.terminal;
    if (terminal !== undefined && terminal.requestId === description.requestId && terminal.code === description.code) {
      return terminal;
    }
    return fromDescription(description, this.exposeRaw);
  }

  settled(failureCode) {
    this.observation?.settled(failureCode);
    if (this.onAbort !== undefined) this.signal.removeEventListener('abort', this.onAbort);
  }
}

/** The outbox handler given to every native client. */
function deliver(batch) {
  for (const [callId, kind, payload] of JSON.parse(batch)) {
    const call = pending.get(callId);
    if (call === undefined) continue;
    if (kind === KIND.event) {
      settleOnThrow(call, callId, () => call.event(payload));
      continue;
    }
    pending.delete(callId);
    call.settled(kind === KIND.failure ? payload.code : undefined);
    if (kind === KIND.value) call.resolve(payload);
    else if (kind === KIND.nothing) call.resolve(undefined);
    else settleOnThrow(call, callId, () => call.reject(call.failure(payload)));
  }
}

/**
 * Handle one message so that nothing it throws can reach the batch: the rest of the batch is
 * still delivered, and the call (if still pending) rejects with UNKNOWN_ERROR instead of hanging.
 */
function settleOnThrow(call, callId, handle) {
  try {
    handle();
  } catch (thrown) {
    pending.delete(callId);
    call.settled();
    call.reject(unknownFailure(thrown));
  }
}

/**
 * Run one call.
 * @param {{ options: object }} client a provider client (or an external one): its options (hooks live there)
 * @param {object | undefined} requestOptions the caller's per-request options
 * @param {(options: object | undefined, callId: number, flags: number) => void} start
 *   starts the native call; throws an error description when it fails before I/O
 * @param {string} operation the catalog key, `custom`, or what an external client does (for the channels)
 * @returns {Promise<unknown>}
 */
function runCall(client, givenOptions, start, operation) {
  let requestOptions;
  try {
    requestOptions = readRequestOptions(client, givenOptions);
  } catch (error) {
    return Promise.reject(error);
  }
  const signal = pick(client.options, requestOptions, 'signal');
  const cancellable = signal instanceof AbortSignal;
  const observation = observeCall(client.provider, operation);
  const call = new PendingCall(client, requestOptions, signal, observation);
  reportHttpMockOnce(call);
  let flags = cancellable ? FLAG.cancellable : 0;
  if (observation !== undefined) flags |= FLAG.observed;
  // Already aborted (D22): the call starts cancelled, runs its hooks and settles natively,
  // sending nothing (or as a pacing abort while its host has a pacing deadline).
  if (cancellable && signal.aborted) flags |= FLAG.alreadyAborted;
  const startCall = () => dispatch(call, requestOptions, start, flags);
  return observation === undefined ? startCall() : observation.trace(startCall);
}

/** Start the native call; its promise settles from the outbox (see deliver). */
function dispatch(call, requestOptions, start, flags) {
  const signal = call.signal;
  const cancellable = flags & FLAG.cancellable;
  const callId = nextCallId();
  try {
    start(requestOptions, callId, flags);
  } catch (description) {
    const failure = fromDescription(description, call.exposeRaw);
    call.observation?.settled(failure.code);
    return Promise.reject(failure);
  }
  return new Promise((resolve, reject) => {
    call.resolve = resolve;
    call.reject = reject;
    pending.set(callId, call);
    if (cancellable && !signal.aborted) {
      call.onAbort = () => native.cancelCall(callId);
      signal.addEventListener('abort', call.onAbort, { once: true });
    }
  });
}

/**
 * The per-request options as a plain copy, read once: every later read (the facade's and the
 * native layer's) sees the same values and none can run a getter or a Proxy trap again. A read
 * that throws is a TypeError naming the key, with the thrown value as `cause`; an unknown key is
 * reported once through the diagnostics channel and ignored (decisions D33).
 */
function readRequestOptions(client, given) {
  if (given === undefined || given === null) return undefined;
  if (typeof given !== 'object') throw new TypeError(`options must be an object (received ${typeof given}).`);
  let keys;
  try {
    keys = Object.keys(given);
  } catch (thrown) {
    throw new TypeError('options could not be read: a Proxy trap threw (the thrown value is the cause).', {
      cause: thrown,
    });
  }
  const copy = {};
  for (const key of keys) {
    try {
      copy[key] = given[key];
    } catch (thrown) {
      throw new TypeError(
        `options.${key} could not be read: a getter or Proxy threw (the thrown value is the cause).`,
        { cause: thrown },
      );
    }
    if (!validRequestKeys.has(key) && !reportedUnknownKeys.has(key)) {
      reportedUnknownKeys.add(key);
      reportUnknownKey(client, copy, key);
    }
  }
  return copy;
}

function reportUnknownKey(client, requestOptions, key) {
  const record = {
    source: 'anilink',
    kind: 'unknown-option',
    hookName: 'options',
    option: key,
    message: `Unknown request option "${key}" was ignored. Valid keys are: ${VALID_REQUEST_KEYS.join(', ')}.`,
  };
  const route = {
    onHookError: pick(client.options, requestOptions, 'onHookError'),
    diagnostics: pick(client.options, requestOptions, 'diagnostics'),
  };
  reportDiagnostic(record, undefined, route);
}

module.exports = { runCall, deliver };
