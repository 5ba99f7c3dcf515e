'use strict';
// `anilink-api-wrapper/otel`: OpenTelemetry spans and metrics from the diagnostics channels
// (lib/channels.cjs; docs/hooks-and-diagnostics.md, "Observability"). A call is an INTERNAL span, each attempt a CLIENT
// child following the HTTP client semantic conventions; every attribute comes from a channel
// payload, which carries no secret (the URL's userinfo is redacted natively).

const diagnosticsChannel = require('node:diagnostics_channel');
const { SpanKind, SpanStatusCode, ValueType, context: otelContext, trace } = require('@opentelemetry/api');
const { InstrumentationBase } = require('@opentelemetry/instrumentation');
const { CALL_CHANNEL, CHANNEL_NAMES } = require('../channels.cjs');
const { name: PACKAGE_NAME, version: PACKAGE_VERSION } = require('../../package.json');

const BREAKER_STATE = { closed: 0, open: 1 };

class AniLinkInstrumentation extends InstrumentationBase {
  constructor(config = {}) {
    super(`${PACKAGE_NAME}/otel`, PACKAGE_VERSION, config);
  }

  /** No module to patch: everything arrives through diagnostics channels. */
  init() {
    return undefined;
  }

  _updateMetricInstruments() {
    const meter = this.meter;
    const seconds = { unit: 's', valueType: ValueType.DOUBLE };
    this._breakerStates ??= new Map();
    this._instruments = {
      requests: meter.createCounter('anilink.client.requests', { description: 'Calls made, by outcome.' }),
      retries: meter.createCounter('anilink.client.retries', { description: 'Retries scheduled.' }),
      rateLimited: meter.createCounter('anilink.client.rate_limited', { description: 'Attempts answered 429.' }),
      attemptDuration: meter.createHistogram('http.client.request.duration', {
        description: 'Duration of each HTTP attempt.',
        ...seconds,
      }),
      admissionWait: meter.createHistogram('anilink.client.admission.wait', {
        description: 'Each pacing or quota-admission wait before an attempt.',
        ...seconds,
      }),
      pacedDuration: meter.createHistogram('anilink.client.paced.duration', {
        description: 'Total pacing and admission wait of a call.',
        ...seconds,
      }),
      breakerState: meter.createObservableGauge('anilink.client.breaker.state', {
        description: 'Circuit breaker state per host (0 closed, 1 open), as last reported.',
      }),
    };
    this._instruments.breakerState.addCallback((result) => {
      for (const [host, state] of this._breakerStates) result.observe(BREAKER_STATE[state], { 'server.address': host });
    });
  }

  enable() {
    if (this._subscriptions === undefined) this._subscriptions = this._createSubscriptions();
    if (this._enabled) return;
    this._enabled = true;
    for (const [subscribe] of this._subscriptions) subscribe();
  }

  disable() {
    if (!this._enabled) return;
    this._enabled = false;
    for (const [, unsubscribe] of this._subscriptions) unsubscribe();
  }

  /** `[subscribe, unsubscribe]` pairs, one per channel. */
  _createSubscriptions() {
    /** Open spans by call context (the object every payload of the call refers to as `call`). */
    const calls = new WeakMap();
    const tracing = diagnosticsChannel.tracingChannel(CALL_CHANNEL);
    const callHandlers = {
      start: (callContext) => this._callStarted(calls, callContext),
      // Published after `error` too: a failed call ends here, its code already in the context.
      asyncEnd: (callContext) => this._callEnded(calls, callContext),
    };
    const pair = (name, handler) => [
      () => diagnosticsChannel.subscribe(name, handler),
      () => diagnosticsChannel.unsubscribe(name, handler),
    ];
    return [
      [() => tracing.subscribe(callHandlers), () => tracing.unsubscribe(callHandlers)],
      pair(CHANNEL_NAMES.attemptStart, (message) => this._attemptStarted(calls, message)),
      pair(CHANNEL_NAMES.attemptEnd, (message) => this._attemptEnded(calls, message)),
      pair(CHANNEL_NAMES.admission, (message) => this._waited(message)),
      pair(CHANNEL_NAMES.breaker, (message) => this._breakerStates.set(message.host, message.state)),
      pair(CHANNEL_NAMES.sharedState, (message) => this._sharedState(calls, message)),
    ];
  }

  _callStarted(calls, callContext) {
    const span = this.tracer.startSpan(`anilink ${callContext.operation}`, {
      kind: SpanKind.INTERNAL,
      attributes: { 'anilink.provider': callContext.provider, 'anilink.operation': callContext.operation },
    });
    calls.set(callContext, { span, parent: trace.setSpan(otelContext.active(), span), attempts: new Map() });
  }

  _callEnded(calls, callContext) {
    const call = calls.get(callContext);
    if (call === undefined) return;
    calls.delete(callContext);
    const { span } = call;
    const attributes = { 'anilink.provider': callContext.provider, 'anilink.operation': callContext.operation };
    if (callContext.code !== undefined) attributes['error.type'] = callContext.code;
    if (callContext.status !== undefined) attributes['http.response.status_code'] = callContext.status;
    span.setAttributes({
      ...attributes,
      ...httpAttributes(callContext.method, callContext.url),
      'anilink.request_id': callContext.requestId,
      'anilink.attempts': callContext.attempts,
      'anilink.retries': callContext.retries,
      'anilink.paced_ms': callContext.pacedMs,
      'anilink.cached': callContext.cached,
      'anilink.coalesced': callContext.coalesced,
    });
    if (callContext.code !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: callContext.code });
    span.end();
    this._instruments.requests.add(1, attributes);
    if (callContext.pacedMs > 0) this._instruments.pacedDuration.record(callContext.pacedMs / 1000, attributes);
  }

  _attemptStarted(calls, message) {
    const call = calls.get(message.call);
    if (call === undefined) return;
    const attributes = httpAttributes(message.method, message.url);
    if (message.attempt > 1) attributes['http.request.resend_count'] = message.attempt - 1;
    const span = this.tracer.startSpan(message.method, { kind: SpanKind.CLIENT, attributes }, call.parent);
    call.attempts.set(message.attempt, span);
  }

  _attemptEnded(calls, message) {
    const call = calls.get(message.call);
    const span = call?.attempts.get(message.attempt);
    const attributes = { 'http.request.method': message.method, ...serverAttributes(message.url) };
    if (message.status !== undefined) attributes['http.response.status_code'] = message.status;
    const errorType = message.code === undefined ? undefined : String(message.status ?? message.code);
    if (errorType !== undefined) attributes['error.type'] = errorType;
    if (span !== undefined) {
      call.attempts.delete(message.attempt);
      span.setAttributes(attributes);
      if (message.retryDelayMs !== undefined) span.setAttribute('anilink.retry_delay_ms', message.retryDelayMs);
      if (errorType !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: message.code });
      span.end();
    }
    if (message.durationMs !== undefined && message.outcome !== 'cached') {
      this._instruments.attemptDuration.record(message.durationMs / 1000, attributes);
    }
    if (message.status === 429) this._instruments.rateLimited.add(1, attributes);
    if (message.willRetry) this._instruments.retries.add(1, attributes);
  }

  _waited(message) {
    if (!message.aborted) this._instruments.admissionWait.record(message.waitMs / 1000, serverAttributes(message.url));
  }

  _sharedState(calls, message) {
    calls.get(message.call)?.span.addEvent(`anilink.shared_state.${message.state}`, { 'server.address': message.host });
  }
}

/** `server.address` and `server.port` of a URL (undefined parts left out). */
function serverAttributes(url) {
  if (typeof url !== 'string') return {};
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return {};
  }
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  return { 'server.address': parsed.hostname, 'server.port': port };
}

/** The HTTP client attributes of a request: method, full URL (userinfo already redacted), server. */
function httpAttributes(method, url) {
  const attributes = serverAttributes(url);
  if (method !== undefined) attributes['http.request.method'] = method;
  if (url !== undefined) attributes['url.full'] = url;
  return attributes;
}

module.exports = { AniLinkInstrumentation };
