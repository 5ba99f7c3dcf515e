'use strict';
// diagnostics_channel publication (docs/hooks-and-diagnostics.md, "Observability"): the tracing channel `anilink:call`
// and the event channels below. Our requests leave through native sockets, which no APM agent
// sees; these channels are how monitoring sees them instead.
//
// Nothing is built when nobody listens: a call asks the native side for its events only when a
// channel has a subscriber as it starts (the `observed` call flag), and each payload is built
// only for a channel with subscribers. Every fact in a payload is the native side's (the URL
// comes with its userinfo redacted, no header ever crosses): this module only reshapes. What
// each event means (which hook starts an attempt, which breaker state a hook means…) is the
// binding's (`channelEvents` of the contract, src/wire/contract.rs), read once with the channels;
// so is each payload's shape (src/wire/channels.rs, whose keys `__test__/channels.spec.ts`
// holds every published payload to).

const CHANNEL_NAMES = {
  attemptStart: 'anilink:attempt:start',
  attemptEnd: 'anilink:attempt:end',
  breaker: 'anilink:breaker',
  admission: 'anilink:admission',
  sharedState: 'anilink:shared-state',
};
const CALL_CHANNEL = 'anilink:call';

/** The channels, once `node:diagnostics_channel` is loaded; null where the runtime has none. */
let channels;
/** What to do with an event message, by its `hook`; made with the channels. */
let handlers;

/** Load the channels on first use; a runtime without `node:diagnostics_channel` publishes nothing. */
function loadChannels() {
  let dc;
  try {
    dc = require('node:diagnostics_channel');
  } catch {
    return null;
  }
  const loaded = { list: [] };
  for (const [key, name] of Object.entries(CHANNEL_NAMES)) {
    loaded[key] = dc.channel(name);
    loaded.list.push(loaded[key]);
  }
  // tracingChannel arrived in Node 19.9 / 18.19; a runtime without it has no call channel.
  loaded.call = typeof dc.tracingChannel === 'function' ? dc.tracingChannel(CALL_CHANNEL) : undefined;
  if (loaded.call !== undefined) {
    const { start, end, asyncStart, asyncEnd, error } = loaded.call;
    loaded.list.push(start, end, asyncStart, asyncEnd, error);
  }
  handlers = eventHandlers();
  return loaded;
}

/**
 * The handler of each hook's events, from what the binding says they mean. Read here, not when
 * this module loads, so that the OpenTelemetry entry can take the channel names without the addon.
 */
function eventHandlers() {
  const events = require('./native.cjs').contract.channelEvents;
  const shared = events.sharedState;
  const sharedStates = new Map(shared.states.map(({ code, state }) => [code, state]));
  return new Map([
    ...events.attemptStart.map((hook) => [hook, (observation, { ctx }) => observation.attemptStarted(ctx)]),
    ...events.answer.map((hook) => [hook, (observation, { ctx, status }) => observation.answered(ctx, status)]),
    ...events.failure.map((hook) => [hook, (observation, { ctx, error }) => observation.failure(ctx, error)]),
    ...events.admission.map((hook) => [hook, (observation, { ctx }) => observation.paced(ctx)]),
    ...events.breaker.map(({ hook, state }) => [
      hook,
      (observation, { ctx }) => observation.breakerChanged(ctx, state),
    ]),
    [
      shared.hook,
      // Of the diagnostic records, only the shared-state ones are published.
      (observation, { ctx }) => {
        if (ctx.kind === shared.kind) observation.sharedStateChanged(ctx, sharedStates.get(ctx.code));
      },
    ],
  ]);
}

/** Whether any channel has a subscriber now (checked once per call, as it starts). */
function anyoneListening() {
  if (channels === undefined) channels = loadChannels();
  if (channels === null) return false;
  for (const channel of channels.list) if (channel.hasSubscribers) return true;
  return false;
}

/**
 * Write `value` to an object subscribers were given. It is theirs as much as ours: one may have
 * frozen it, deleted from it or defined a throwing setter on it, which only loses the write;
 * nothing a subscriber does to what is published changes a call's outcome.
 */
function writePublished(target, key, value) {
  try {
    Reflect.set(target, key, value);
  } catch {
    // A subscriber's accessor threw: the published copy misses this write, the call goes on.
  }
}

/**
 * The observation of one call: its tracing context, kept up to date from the call's events,
 * and the event channels' payloads. Made only while someone listens. The facade's own account
 * of the call is `state`, which nothing outside sees; `context` is its published copy.
 */
class CallObservation {
  constructor(provider, operation) {
    this.state = {
      requestId: undefined,
      provider,
      operation,
      method: undefined,
      url: undefined,
      status: undefined,
      code: undefined,
      attempts: 0,
      retries: 0,
      pacedMs: 0,
      coalesced: false,
      cached: false,
    };
    /** The `anilink:call` context; every other payload of the call refers to it as `call`. */
    this.context = { ...this.state };
    /** The attempt whose end is not published yet: its answer may still be followed by its failure. */
    this.openAttempt = undefined;
  }

  /** Record one fact of the call, in `state` and in the published context. */
  set(key, value) {
    this.state[key] = value;
    writePublished(this.context, key, value);
  }

  /**
   * Run `startCall` (which returns the call's promise) inside the tracing channel, when it has
   * one: `tracePromise`'s sequence of events, with the result or error written to the context
   * as the rest of it is (`tracePromise` itself would reject the call when a subscriber froze it).
   */
  trace(startCall) {
    const call = channels.call;
    if (call === undefined) return startCall();
    const context = this.context;
    const { start, end, asyncStart, asyncEnd, error } = call;
    const settled = (key, value) => {
      writePublished(context, key, value);
      if (key === 'error') error.publish(context);
      asyncStart.publish(context);
      asyncEnd.publish(context);
    };
    return start.runStores(context, () => {
      try {
        return startCall().then(
          (result) => {
            settled('result', result);
            return result;
          },
          (failure) => {
            settled('error', failure);
            throw failure;
          },
        );
      } finally {
        end.publish(context);
      }
    });
  }

  /** One native event message (`{ hook, ctx, error?, status? }`, src/wire/hook_message.rs). */
  event(message) {
    handlers.get(message.hook)?.(this, message);
  }

  attemptStarted(ctx) {
    this.publishAttemptEnd();
    this.set('requestId', ctx.requestId);
    this.set('method', ctx.method);
    this.set('url', ctx.url);
    this.set('attempts', ctx.attempt);
    if (ctx.coalesced === true) this.set('coalesced', true);
    this.openAttempt = { ctx, status: undefined, durationMs: undefined };
    publish(channels.attemptStart, () => ({
      call: this.context,
      requestId: ctx.requestId,
      attempt: ctx.attempt,
      method: ctx.method,
      url: ctx.url,
      ...(ctx.coalesced === true ? { leaderRequestId: ctx.leaderRequestId } : {}),
    }));
  }

  answered(ctx, status) {
    if (status !== undefined) this.set('status', status);
    if (ctx.cacheHit === true) this.set('cached', true);
    if (this.openAttempt !== undefined) {
      this.openAttempt.answered = true;
      this.openAttempt.status = status;
      this.openAttempt.durationMs = ctx.durationMs;
      this.openAttempt.cacheHit = ctx.cacheHit;
    }
  }

  paced(ctx) {
    if (!ctx.aborted) this.set('pacedMs', this.state.pacedMs + ctx.delayMs);
    publish(channels.admission, () => ({
      call: this.context,
      requestId: ctx.requestId,
      attempt: ctx.attempt,
      url: ctx.url,
      waitMs: ctx.delayMs,
      aborted: ctx.aborted === true,
    }));
  }

  breakerChanged(ctx, state) {
    publish(channels.breaker, () => ({
      call: this.context,
      requestId: ctx.requestId,
      host: ctx.host,
      state,
      ...(ctx.failures !== undefined ? { failures: ctx.failures } : {}),
    }));
  }

  sharedStateChanged(record, state) {
    publish(channels.sharedState, () => ({
      call: this.context,
      requestId: record.requestId,
      host: record.host,
      redis: record.redis,
      state,
      code: record.code,
    }));
  }

  /** A failure report: it ends its attempt (with the retry decision), or follows a partial success. */
  failure(ctx, error) {
    const retryDelayMs = ctx.nextDelayMs;
    if (retryDelayMs !== undefined) this.set('retries', this.state.retries + 1);
    if (ctx.status !== undefined) this.set('status', ctx.status);
    const attempt = this.openAttempt ?? { ctx, status: undefined, durationMs: undefined };
    attempt.status ??= ctx.status;
    attempt.code = error?.code ?? ctx.code;
    attempt.retryDelayMs = retryDelayMs;
    attempt.budgetExhausted = ctx.budgetExhausted === true;
    this.openAttempt = attempt;
    this.publishAttemptEnd();
  }

  publishAttemptEnd() {
    const attempt = this.openAttempt;
    if (attempt === undefined) return;
    this.openAttempt = undefined;
    publish(channels.attemptEnd, () => {
      const { ctx } = attempt;
      const payload = {
        call: this.context,
        requestId: ctx.requestId,
        attempt: ctx.attempt,
        method: ctx.method,
        url: ctx.url,
        status: attempt.status,
        durationMs: attempt.durationMs,
        outcome: attemptOutcome(attempt),
        willRetry: attempt.retryDelayMs !== undefined,
      };
      if (attempt.code !== undefined) payload.code = attempt.code;
      if (attempt.retryDelayMs !== undefined) payload.retryDelayMs = attempt.retryDelayMs;
      if (attempt.budgetExhausted) payload.budgetExhausted = true;
      return payload;
    });
  }

  /** The call settles: its last attempt ends, and the context gets the outcome before `asyncStart`. */
  settled(failureCode) {
    this.publishAttemptEnd();
    if (failureCode !== undefined) this.set('code', failureCode);
  }
}

/**
 * An attempt that got neither an answer nor a failure was left for another: a coalesced
 * follower whose leader went away without an outcome, and which starts over.
 */
function attemptOutcome(attempt) {
  if (attempt.code !== undefined) return attempt.retryDelayMs !== undefined ? 'retry' : 'failure';
  if (attempt.answered !== true) return 'abandoned';
  return attempt.cacheHit === true ? 'cached' : 'success';
}

/** Publish the payload `build` makes, only if the channel has subscribers. */
function publish(channel, build) {
  if (channel.hasSubscribers) channel.publish(build());
}

/** The observation of a call starting now, or undefined when nobody listens. */
function observeCall(provider, operation) {
  return anyoneListening() ? new CallObservation(provider, operation) : undefined;
}

module.exports = { observeCall, CHANNEL_NAMES, CALL_CHANNEL };
