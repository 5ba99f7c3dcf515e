// The payloads of the diagnostics channels (docs/hooks-and-diagnostics.md, "Observability"). Every URL has its userinfo
// redacted; no header, token or secret is in any payload.

/** The context of the tracing channel `anilink:call`, filled as the call runs. */
export interface CallChannelContext {
  /** Set with the first attempt. */
  requestId: string | undefined;
  /** `anilist`, `mal`, or `external` (token endpoints). */
  provider: string;
  /** The catalog key (`query.media`, `anime.details`…), `custom`, or `post`. */
  operation: string;
  /** Set with the first attempt. */
  method: string | undefined;
  /** Set with the first attempt; userinfo redacted. */
  url: string | undefined;
  /** The last HTTP status answered, if any. */
  status: number | undefined;
  /** The error code of a failed call (`AniLinkErrorCodes`). */
  code: string | undefined;
  attempts: number;
  retries: number;
  /** Total pacing and quota-admission wait, ms. */
  pacedMs: number;
  coalesced: boolean;
  /** Served by the response cache. */
  cached: boolean;
  /** Set by the tracing channel: the resolved value (`asyncStart`/`asyncEnd`). */
  result?: unknown;
  /** Set by the tracing channel: the rejection (`error`, `asyncStart`, `asyncEnd`). */
  error?: unknown;
}

/** What every event payload shares: the call it belongs to (the `anilink:call` context) and its request. */
interface CallEvent {
  call: CallChannelContext;
  requestId: string;
}

/** `anilink:attempt:start` */
export interface AttemptStartMessage extends CallEvent {
  /** One-based. */
  attempt: number;
  method: string;
  url: string;
  /** A coalesced call: the request it shares. */
  leaderRequestId?: string;
}

/** `anilink:attempt:end` */
export interface AttemptEndMessage extends CallEvent {
  attempt: number;
  method: string;
  url: string;
  status: number | undefined;
  /** The network attempt only; absent when it failed before an answer. */
  durationMs: number | undefined;
  /** `abandoned`: a coalesced follower whose leader went away without an outcome; it starts over. */
  outcome: 'success' | 'cached' | 'retry' | 'failure' | 'abandoned';
  /** The error code of a failed attempt. */
  code?: string;
  willRetry: boolean;
  /** The wait before the next attempt. */
  retryDelayMs?: number;
  budgetExhausted?: true;
}

/** `anilink:admission`: a pacing or quota-admission wait before an attempt. */
export interface AdmissionMessage extends CallEvent {
  attempt: number;
  url: string;
  waitMs: number;
  /** The call was aborted during the wait (`waitMs` is what elapsed). */
  aborted: boolean;
}

/** `anilink:breaker`: a host's circuit opened or closed. */
export interface BreakerMessage extends CallEvent {
  host: string;
  state: 'open' | 'closed';
  /** Consecutive failures that opened it. */
  failures?: number;
}

/** `anilink:shared-state`: the slot's shared state fell back to local decisions, or rejoined Redis. */
export interface SharedStateMessage extends CallEvent {
  host: string;
  /** `host:port` of the Redis server. */
  redis: string;
  state: 'fallback' | 'rejoined';
  code: 'SHARED_STATE_UNAVAILABLE' | 'SHARED_STATE_REJOINED';
}
