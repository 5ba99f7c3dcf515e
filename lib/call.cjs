'use strict';
// One call through the native transport: AbortSignal bridge, hook dispatch, results and
// errors back as JavaScript values. Every transport rule (retries, pacing, breaker…) runs
// natively; this module only adapts.

const native = require('./native.cjs');
const { AniLinkNetworkError, AniLinkErrorCodes, fromDescription } = require('./errors.cjs');
const { callHook } = require('./diagnostics.cjs');

const EVENT_HOOKS = ['onRequestStart', 'onResponse', 'onError', 'onRetry', 'onPace', 'onCircuitOpen', 'onCircuitClose'];
const hasOwn = Object.prototype.hasOwnProperty;

let lastCallId = 0;
/** Ids for cancellable calls; 0 is reserved for "no signal". */
function nextCallId() {
  lastCallId = lastCallId >= 0x7fffffff ? 1 : lastCallId + 1;
  return lastCallId;
}

/** A per-request option over the slot's, per key (`{...slot, ...request}`). */
function pick(slotOptions, requestOptions, key) {
  if (requestOptions !== undefined && hasOwn.call(requestOptions, key)) return requestOptions[key];
  return slotOptions[key];
}

/**
 * Run one call.
 * @param {{ options: object }} slot the provider slot: its own options object (hooks live there)
 * @param {object | undefined} requestOptions the caller's per-request options
 * @param {(options: object | undefined, callId: number, onEvent: Function | undefined) => Promise<string | null>} invoke
 *   starts the native call (validation failures are thrown synchronously)
 */
async function runCall(slot, requestOptions, invoke) {
  if (requestOptions === null) requestOptions = undefined;
  if (requestOptions !== undefined && typeof requestOptions !== 'object') {
    throw new TypeError(`options must be an object (received ${typeof requestOptions}).`);
  }
  const signal = pick(slot.options, requestOptions, 'signal');
  const cancellable = signal instanceof AbortSignal;
  if (cancellable && signal.aborted) {
    // Already aborted: nothing is sent and no state changes.
    throw new AniLinkNetworkError(AniLinkErrorCodes.ABORTED);
  }
  const exposeRaw = pick(slot.options, requestOptions, 'exposeRawAxiosError') === true;
  let terminal;
  let onEvent;
  if (EVENT_HOOKS.some((name) => typeof pick(slot.options, requestOptions, name) === 'function')) {
    const route = {
      onHookError: pick(slot.options, requestOptions, 'onHookError'),
      diagnostics: pick(slot.options, requestOptions, 'diagnostics'),
    };
    onEvent = (event) => {
      const hook = pick(slot.options, requestOptions, event.hook);
      if (typeof hook !== 'function') return;
      if (event.error === undefined) {
        callHook(event.hook, hook, [event.ctx], route);
        return;
      }
      const error = fromDescription(event.error, exposeRaw);
      // The last report without a scheduled retry is the error the call rejects with.
      if (event.ctx.nextDelayMs === undefined) terminal = error;
      callHook(event.hook, hook, [error, event.ctx], route);
    };
  }
  const callId = cancellable ? nextCallId() : 0;
  let onAbort;
  try {
    const pending = invoke(requestOptions, callId, onEvent);
    if (cancellable) {
      onAbort = () => native.cancelCall(callId);
      signal.addEventListener('abort', onAbort, { once: true });
    }
    const text = await pending;
    return text === null ? undefined : JSON.parse(text);
  } catch (failure) {
    if (terminal !== undefined && failure?.requestId === terminal.requestId && failure?.code === terminal.code) {
      throw terminal;
    }
    throw fromDescription(failure, exposeRaw);
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  }
}

module.exports = { runCall };
