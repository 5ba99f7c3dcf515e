// Typing test: the diagnostics channel payloads (from ".") and the OpenTelemetry entry ("./otel").
import diagnosticsChannel from 'node:diagnostics_channel';
import type {
  AdmissionMessage,
  AttemptEndMessage,
  AttemptStartMessage,
  BreakerMessage,
  CallChannelContext,
  CallEvent,
  SharedStateMessage,
} from 'anilink-api-wrapper';
import { AniLinkInstrumentation } from 'anilink-api-wrapper/otel';
import type { Instrumentation } from '@opentelemetry/instrumentation';

/** Compiles only when `A` and `B` are the same type. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** The keys of `T` a value may leave out. */
type OptionalKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? K : never }[keyof T];
/** Each payload's keys, split into those it always carries and those it may leave out. */
type Shape<T> = { required: Exclude<keyof T, OptionalKeys<T>>; optional: OptionalKeys<T> };
function assertShape<T, Expected extends { required: PropertyKey; optional: PropertyKey }>(
  exact: Same<Shape<T>, Shape<{ [K in Expected['required']]: unknown } & { [K in Expected['optional']]?: unknown }>>,
): void {
  void exact;
}
type Event = 'call' | 'requestId';

assertShape<CallEvent, { required: Event; optional: never }>(true);

assertShape<
  CallChannelContext,
  {
    required:
      | 'requestId'
      | 'provider'
      | 'operation'
      | 'method'
      | 'url'
      | 'status'
      | 'code'
      | 'attempts'
      | 'retries'
      | 'pacedMs'
      | 'coalesced'
      | 'cached';
    optional: 'result' | 'error';
  }
>(true);
assertShape<AttemptStartMessage, { required: Event | 'attempt' | 'method' | 'url'; optional: 'leaderRequestId' }>(true);
assertShape<
  AttemptEndMessage,
  {
    required: Event | 'attempt' | 'method' | 'url' | 'status' | 'durationMs' | 'outcome' | 'willRetry';
    optional: 'code' | 'retryDelayMs' | 'budgetExhausted';
  }
>(true);
assertShape<AdmissionMessage, { required: Event | 'attempt' | 'url' | 'waitMs' | 'aborted'; optional: never }>(true);
assertShape<BreakerMessage, { required: Event | 'host' | 'state'; optional: 'failures' }>(true);
assertShape<SharedStateMessage, { required: Event | 'host' | 'redis' | 'state' | 'code'; optional: never }>(true);

const context = {} as CallChannelContext;
const contextFields: [string | undefined, string, string | undefined, number | undefined, string | undefined] = [
  context.requestId,
  context.operation,
  context.url,
  context.status,
  context.code,
];
const counts: [number, number, number, boolean, boolean, unknown] = [
  context.attempts,
  context.retries,
  context.pacedMs,
  context.coalesced,
  context.cached,
  context.result,
];

diagnosticsChannel.subscribe('anilink:attempt:start', (message) => {
  const start = message as AttemptStartMessage;
  const fields: [CallChannelContext, string, number, string, string, string | undefined] = [
    start.call,
    start.requestId,
    start.attempt,
    start.method,
    start.url,
    start.leaderRequestId,
  ];
  void fields;
});
diagnosticsChannel.subscribe('anilink:attempt:end', (message) => {
  const attempt = message as AttemptEndMessage;
  const call: CallChannelContext = attempt.call;
  const outcome: 'success' | 'cached' | 'retry' | 'failure' | 'abandoned' = attempt.outcome;
  const delay: number | undefined = attempt.retryDelayMs;
  const exhausted: true | undefined = attempt.budgetExhausted;
  const answer: [number | undefined, number | undefined, string | undefined, boolean] = [
    attempt.status,
    attempt.durationMs,
    attempt.code,
    attempt.willRetry,
  ];
  void [call.requestId, outcome, delay, exhausted, answer];
});
diagnosticsChannel.subscribe('anilink:admission', (message) => {
  const wait = message as AdmissionMessage;
  const fields: [number, string, number, boolean] = [wait.attempt, wait.url, wait.waitMs, wait.aborted];
  void fields;
});
diagnosticsChannel.subscribe('anilink:breaker', (message) => {
  const breaker = message as BreakerMessage;
  const state: 'open' | 'closed' = breaker.state;
  const failures: number | undefined = breaker.failures;
  void [state, failures, breaker.host];
});
diagnosticsChannel.subscribe('anilink:shared-state', (message) => {
  const change = message as SharedStateMessage;
  const state: 'fallback' | 'rejoined' = change.state;
  const code: 'SHARED_STATE_UNAVAILABLE' | 'SHARED_STATE_REJOINED' = change.code;
  void [state, code, change.host, change.redis];
});
void [contextFields, counts];

const instrumentation: Instrumentation = new AniLinkInstrumentation({ enabled: false });
instrumentation.enable();
instrumentation.disable();
