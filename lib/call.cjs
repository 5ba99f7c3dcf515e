'use strict';
// One call through the native transport: AbortSignal bridge, hook dispatch, results and
// errors back as JavaScript values. Every transport rule (retries, pacing, breaker…) runs
// natively; this module only adapts.
//
// The native side answers through one outbox per provider client: batches of
// `[callId, kind, payload?]` messages, parsed with a single JSON.parse (see src/outbox.rs).

const native = require('./native.cjs');
const { AniLinkNetworkError, AniLinkErrorCodes, fromDescription } = require('./errors.cjs');
const { callHook, describeThrown } = require('./diagnostics.cjs');

const EVENT_HOOKS = ['onRequestStart', 'onResponse', 'onError', 'onRetry', 'onPace', 'onCircuitOpen', 'onCircuitClose'];
const WITH_EVENTS = 1;
const CANCELLABLE = 2;
const KIND_VALUE = 0;
const KIND_NOTHING = 1;
const KIND_FAILURE = 2;
const KIND_EVENT = 3;
const hasOwn = Object.prototype.hasOwnProperty;

/** Calls started and not yet settled, by id. */
const pending = new Map();
let lastCallId = 0;

function nextCallId() {
  do {
    lastCallId = lastCallId >= 0x7fffffff ? 1 : lastCallId + 1;
  } while (pending.has(lastCallId));
  return lastCallId;
}

/** A per-request option over the slot's, per key (`{...slot, ...request}`). */
function pick(slotOptions, requestOptions, key) {
  if (requestOptions !== undefined && hasOwn.call(requestOptions, key)) return requestOptions[key];
  return slotOptions[key];
}

class PendingCall {
  constructor(slot, requestOptions, signal) {
    this.slot = slot;
    this.requestOptions = requestOptions;
    this.signal = signal;
    this.exposeRaw = pick(slot.options, requestOptions, 'exposeRawAxiosError') === true;
    /** The error of the last report without a scheduled retry: the one the call rejects with. */
    this.terminal = undefined;
    this.resolve = undefined;
    this.reject = undefined;
    this.onAbort = undefined;
  }

  option(key) {
    return pick(this.slot.options, this.requestOptions, key);
  }

  event({ hook: name, ctx, error }) {
    const hook = this.option(name);
    if (typeof hook !== 'function') return;
    const route = { onHookError: this.option('onHookError'), diagnostics: this.option('diagnostics') };
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

  settled() {
    if (this.onAbort !== undefined) this.signal.removeEventListener('abort', this.onAbort);
  }
}

/** The outbox handler given to every native client. */
function deliver(batch) {
  for (const [callId, kind, payload] of JSON.parse(batch)) {
    const call = pending.get(callId);
    if (call === undefined) continue;
    if (kind === KIND_EVENT) {
      settleOnThrow(call, callId, () => call.event(payload));
      continue;
    }
    pending.delete(callId);
    call.settled();
    if (kind === KIND_VALUE) call.resolve(payload);
    else if (kind === KIND_NOTHING) call.resolve(undefined);
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
    call.reject(fromDescription({ code: AniLinkErrorCodes.UNKNOWN, message: 'The request failed.', reason: describeThrown(thrown) }));
  }
}

/**
 * Run one call.
 * @param {{ options: object }} slot the provider slot: its own options object (hooks live there)
 * @param {object | undefined} requestOptions the caller's per-request options
 * @param {(options: object | undefined, callId: number, flags: number) => string | null} start
 *   starts the native call; returns an error description (JSON text) when it fails before I/O
 * @returns {Promise<unknown>}
 */
function runCall(slot, requestOptions, start) {
  if (requestOptions === null) requestOptions = undefined;
  if (requestOptions !== undefined && typeof requestOptions !== 'object') {
    return Promise.reject(new TypeError(`options must be an object (received ${typeof requestOptions}).`));
  }
  const signal = pick(slot.options, requestOptions, 'signal');
  const cancellable = signal instanceof AbortSignal;
  if (cancellable && signal.aborted) {
    // Already aborted: nothing is sent and no state changes.
    return Promise.reject(new AniLinkNetworkError(AniLinkErrorCodes.ABORTED));
  }
  const call = new PendingCall(slot, requestOptions, signal);
  let flags = cancellable ? CANCELLABLE : 0;
  if (EVENT_HOOKS.some((name) => typeof call.option(name) === 'function')) flags |= WITH_EVENTS;
  const callId = nextCallId();
  let failedBeforeDispatch;
  try {
    failedBeforeDispatch = start(requestOptions, callId, flags);
  } catch (error) {
    return Promise.reject(fromDescription(error, call.exposeRaw));
  }
  if (failedBeforeDispatch !== null) {
    return Promise.reject(fromDescription(JSON.parse(failedBeforeDispatch), call.exposeRaw));
  }
  return new Promise((resolve, reject) => {
    call.resolve = resolve;
    call.reject = reject;
    pending.set(callId, call);
    if (cancellable) {
      call.onAbort = () => native.cancelCall(callId);
      signal.addEventListener('abort', call.onAbort, { once: true });
    }
  });
}

module.exports = { runCall, deliver };
