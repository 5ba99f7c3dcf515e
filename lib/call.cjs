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
const { guardedCopy } = require('./helpers.cjs');

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
    if (this.onAbort === undefined) return;
    try {
      this.signal.removeEventListener('abort', this.onAbort);
    } catch {
      // A signal that refuses: its listener is `once` and cancels a call that no longer exists.
    }
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
  let flags;
  try {
    flags = signalFlags(signal);
  } catch (error) {
    return Promise.reject(error);
  }
  const observation = observeCall(client.provider, operation);
  const call = new PendingCall(client, requestOptions, signal, observation);
  reportHttpMockOnce(call);
  if (observation !== undefined) flags |= FLAG.observed;
  const startCall = () => dispatch(call, requestOptions, start, flags);
  return observation === undefined ? startCall() : observation.trace(startCall);
}

/**
 * The call flags an `AbortSignal` gives: cancellable, and already aborted (D22: the call starts
 * cancelled, runs its hooks and settles natively, sending nothing). Any other value is left to
 * the native options check, which rejects it. A signal whose `aborted` cannot be read (a
 * throwing getter, an object that only inherits from AbortSignal) is a TypeError (D33).
 */
function signalFlags(signal) {
  let isSignal = false;
  try {
    isSignal = signal instanceof AbortSignal;
  } catch {
    // A revoked Proxy: the native options check reports it as unreadable.
  }
  if (!isSignal) return 0;
  try {
    return signal.aborted ? FLAG.cancellable | FLAG.alreadyAborted : FLAG.cancellable;
  } catch (thrown) {
    throw new TypeError(signalProblem('its `aborted` could not be read'), { cause: thrown });
  }
}

function signalProblem(what) {
  return `signal ${what}: pass an AbortSignal from an AbortController or AbortSignal.timeout() (the thrown value is the cause).`;
}

/**
 * Start the native call; its promise settles from the outbox (see deliver). The abort listener
 * goes on first, so a signal that refuses it fails the call before anything is sent.
 */
function dispatch(call, requestOptions, start, flags) {
  const callId = nextCallId();
  if (flags & FLAG.cancellable && !(flags & FLAG.alreadyAborted)) {
    const onAbort = () => native.cancelCall(callId);
    try {
      call.signal.addEventListener('abort', onAbort, { once: true });
    } catch (thrown) {
      call.observation?.settled();
      return Promise.reject(new TypeError(signalProblem('refused an abort listener'), { cause: thrown }));
    }
    call.onAbort = onAbort;
  }
  try {
    start(requestOptions, callId, flags);
  } catch (description) {
    const failure = fromDescription(description, call.exposeRaw);
    call.settled(failure.code);
    return Promise.reject(failure);
  }
  return new Promise((resolve, reject) => {
    call.resolve = resolve;
    call.reject = reject;
    pending.set(callId, call);
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
  const copy = guardedCopy(given, 'options', 'options.');
  for (const key of Object.keys(copy)) {
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
