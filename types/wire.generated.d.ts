// Generated from the Rust declarations of src/wire/ and of the transport's option table
// (crates/transport/src/options/table.rs) by src/wire/generated.rs; do not edit.

import type {
  CircuitBreakerOptions,
  DiagnosticsMode,
  HttpMethod,
  OnCircuitCloseHandler,
  OnCircuitOpenHandler,
  OnErrorHandler,
  OnHookErrorHandler,
  OnPaceHandler,
  OnRequestStartHandler,
  OnResponseHandler,
  RateLimitCeiling,
  RetryBudget,
  RetryPolicy,
  SharedStateOptions,
} from './transport';
import type { ResponseCache } from './response-cache';

/** Every code an AniLinkError can carry. */
export type AniLinkErrorCode =
  | 'API_ERROR'
  | 'GRAPHQL_ERROR'
  | 'REST_ERROR'
  | 'NETWORK_ERROR'
  | 'TIMEOUT_ERROR'
  | 'ABORTED_ERROR'
  | 'CIRCUIT_OPEN_ERROR'
  | 'AUTH_ERROR'
  | 'VALIDATION_ERROR'
  | 'UNKNOWN_ERROR';

/** The code of a failure description: an AniLinkError's, or an invalid option's (thrown as a TypeError). */
export type WireErrorCode = AniLinkErrorCode | 'TYPE_ERROR';

/** The hooks the transport calls, by option key. */
export type HookName =
  | 'onRequestStart'
  | 'onResponse'
  | 'onError'
  | 'onRetry'
  | 'onPace'
  | 'onCircuitOpen'
  | 'onCircuitClose';

/** The `hook` of an event message that carries a diagnostic record instead of a context. */
export type DiagnosticHook = 'diagnostic';

/** The upstream's quota from `x-ratelimit-*` headers; `reset` is Unix epoch seconds. */
export interface RateLimitInfo {
  limit: number;
  remaining: number;
  reset: number;
}

/**
 * Every field of a failure that applies; absent ones are left out. Bodies, GraphQL `errors`
 * and `data` stay JSON text: the facade parses them when it builds the error.
 */
export interface ErrorDescription {
  code: WireErrorCode;
  message: string;
  status?: number;
  /** The response body, as text. */
  body?: string;
  rateLimit?: RateLimitInfo;
  contentType?: string;
  /** The envelope's `errors`, as JSON text. */
  graphqlErrors?: string;
  /** The envelope's `data`, as JSON text. */
  graphqlData?: string;
  timeoutMs?: number;
  abortedDuringPacing?: true;
  details?: readonly string[];
  /** Socket-level description of a network failure (never secrets). */
  reason?: string;
  requestId?: string;
}

/** What every hook's context carries. */
export interface RequestContext {
  /** A UUID v4 shared by every hook of one logical request and by its error. */
  requestId: string;
  url: string;
  method: HttpMethod;
  /** One-based attempt number. */
  attempt: number;
  /** Present (true) on every hook of a call that shared an identical read in flight (`coalesce`). */
  coalesced?: true;
  /** With `coalesced`: the `requestId` of the call whose request it shared. */
  leaderRequestId?: string;
}

export interface ResponseContext extends RequestContext {
  /** The network attempt only (pacing waits are reported by onPace / pacedMs). */
  durationMs: number;
  rateLimit?: RateLimitInfo;
  /** true when served by the response cache (durationMs 0); false for a cacheable read that went to the network. */
  cacheHit?: boolean;
  /** Present (true) when the response was written to the cache. */
  cacheWrite?: boolean;
  /** Total pacing wait of this request so far (stagger excluded); absent when none. */
  pacedMs?: number;
}

export interface PaceContext extends RequestContext {
  delayMs: number;
  /** Present (true) when the wait was aborted by the caller's signal. */
  aborted?: boolean;
}

export interface RequestErrorContext extends RequestContext {
  code: AniLinkErrorCode;
  status?: number;
  rateLimit?: RateLimitInfo;
  /** Present when a retry is scheduled: the wait before it. */
  nextDelayMs?: number;
  /** Total of the retry waits scheduled before this report; absent when none. */
  retryWaitMs?: number;
  retryAfterMs?: number;
  /** Terminal report only: the retry budget stopped a retry the policy wanted. */
  budgetExhausted?: boolean;
  /** Circuit fast-fails only. */
  host?: string;
}

export interface CircuitOpenContext extends RequestContext {
  host: string;
  failures: number;
}

export interface CircuitCloseContext extends RequestContext {
  host: string;
}

/**
 * A diagnostic record: what "warn" mode writes and what the error `onHookError` receives
 * carries as `diagnostic` (docs/hooks-and-diagnostics.md). The binding builds the
 * shared-state ones (a message's context under the diagnostic pseudo-hook); the facade
 * builds the others with the same fields (lib/diagnostics.cjs and its callers).
 */
export interface AniLinkDiagnostic {
  source: 'anilink';
  kind: 'hook-failure' | 'state-owner' | 'token-refresh' | 'http-mock' | 'shared-state' | 'unknown-option' | 'invalid-option';
  hookName: string;
  /** `kind: 'shared-state'`: the slot fell back to its local state, or rejoined Redis. */
  code?: 'SHARED_STATE_UNAVAILABLE' | 'SHARED_STATE_REJOINED';
  requestId?: string;
  /** `kind: 'shared-state'`: the upstream host whose decision switched. */
  host?: string;
  /** `kind: 'shared-state'`: `host:port` of the Redis server (never its credentials). */
  redis?: string;
  /** `kind: 'unknown-option'`: the request option's name that was ignored. */
  option?: string;
  message: string;
}

/**
 * `{ hook, ctx, error? }`: the hook to call, its context argument, and for `onError` and
 * `onRetry` the failure (its first argument).
 */
export interface HookMessage {
  hook: HookName | DiagnosticHook;
  ctx: RequestContext | ResponseContext | PaceContext | RequestErrorContext | CircuitOpenContext | CircuitCloseContext | AniLinkDiagnostic;
  error?: ErrorDescription;
  /**
   * Observed calls only (diagnostics channels): the call has no such hook, so the facade
   * publishes the event and calls nothing.
   */
  unhooked?: true;
  /** Observed calls only: the HTTP status of the answer an `onResponse` event reports. */
  status?: number;
}

export interface CircuitStateSnapshot {
  host: string;
  consecutiveFailures: number;
  openedAt: number | null;
  probeInFlight: boolean;
  failedProbes: number;
}

export interface PaceDeadlineSnapshot {
  host: string;
  /** Epoch ms. */
  deadlineMs: number;
}

export interface RetryBudgetSnapshot {
  retriesUsed: number;
  /** Epoch ms. */
  windowEndsAt: number;
}

/** One host's retry budget window. */
export interface HostRetryBudgetSnapshot extends RetryBudgetSnapshot {
  host: string;
}

/** One host's quota-aware admission estimate (issue 15). */
export interface AdmissionSnapshot {
  host: string;
  /** The last limit the upstream reported; null before any. */
  limit: number | null;
  /** What the estimate allows in the current window; null before any limit. */
  remaining: number | null;
  /** Requests admitted and not yet settled (expired leases not counted). */
  inFlight: number;
  /** Epoch ms; null when no window is open. */
  windowEndsAt: number | null;
  /**
   * The limit a 429 the estimate did not predict taught (the headers overstate the quota): in
   * force instead of `limit`, raised by one per window without a 429; null when none is
   * (decisions D39 b).
   */
  learnedLimit: number | null;
  /** Processes that admitted requests in this scope in the last minute (with `sharedState`). */
  processes: number;
  /**
   * What this process admits per window when it must decide without Redis; null before any
   * limit (D39 c).
   */
  share: number | null;
  /**
   * Whether the upstream counted requests on this credential lately that no process of
   * this scope sent (another client: a process without `sharedState`, a script): its
   * 429s then teach no limit and `degradedLimit` holds nothing back (decisions D43).
   */
  otherClients: boolean;
  /**
   * The most requests a window served without a 429 since the headers last showed a lie:
   * past the slot's `degradedLimit`, requests go one at a time until this exceeds it (the
   * announced limit is then proven; decisions D42).
   */
  provenServed: number;
  /**
   * Where admission is decided: `'process'` (no `sharedState`), `'redis'` (the fleet's
   * state) or `'local-share'` (Redis out of reach: this process's `share` only).
   */
  decidedBy: 'process' | 'redis' | 'local-share';
}

/** Lifetime counters; they never reset. */
export interface ResponseCacheStats {
  entries: number;
  hits: number;
  misses: number;
  expirations: number;
  evictions: number;
  /** A fleet-wide cache (`shared: true`) only: always `true`. */
  shared?: true;
  /** A fleet-wide cache only: reads served from the fleet's Redis. */
  fleetHits?: number;
  /** A fleet-wide cache only: reads the fleet's Redis answered with a miss. */
  fleetMisses?: number;
}

/** `getTransportState()`'s view of one provider client (api.md §6). */
export interface TransportStateSnapshot {
  capturedAt: number;
  /**
   * `'redis'`: the lists are the fleet's state as last read; `'local-fallback'`: Redis is
   * unreachable.
   */
  sharedState: 'off' | 'redis' | 'local-fallback';
  admission: readonly AdmissionSnapshot[];
  circuit: readonly CircuitStateSnapshot[];
  paceDeadlines: readonly PaceDeadlineSnapshot[];
  /** Every host with a budget window. */
  retryBudgets: readonly HostRetryBudgetSnapshot[];
  /** The window of the slot's own endpoint host, once one exists. */
  retryBudget?: RetryBudgetSnapshot;
  /** The counters of the slot's response cache, when it has one. */
  responseCache?: ResponseCacheStats;
}

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

/**
 * What every event payload shares: the call it belongs to (the `anilink:call` context) and
 * its request.
 */
export interface CallEvent {
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
  /**
   * `abandoned`: a coalesced follower whose leader went away without an outcome; it
   * starts over.
   */
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

/**
 * `anilink:shared-state`: the slot's shared state fell back to local decisions, or rejoined
 * Redis.
 */
export interface SharedStateMessage extends CallEvent {
  host: string;
  /** `host:port` of the Redis server. */
  redis: string;
  state: 'fallback' | 'rejoined';
  code: 'SHARED_STATE_UNAVAILABLE' | 'SHARED_STATE_REJOINED';
}

/** Transport options: per slot, in the positional constructor form, or per request (merged per key). */
export interface RequestOptions {
  /**
   * Per-attempt deadline in ms covering connect, headers and body (and the redirects the attempt
   * follows); not run while waiting for a socket of a saturated pool. A finite number ≥ 0; `0`
   * disables. Default: `30000`.
   */
  timeout?: number;
  /** Cancels the request: in flight, during retry backoff and during pacing waits. An `AbortSignal`. */
  signal?: AbortSignal;
  /**
   * Attach a redacted description of the raw failure as `rawAxiosError` / `cause`. A boolean.
   * Default: `false`.
   */
  exposeRawAxiosError?: boolean;
  /**
   * `false` sends once; `true` or omitted uses the defaults (mutations and REST writes: not retried
   * unless set). A policy `{ maxRetries, baseDelayMs, maxDelayMs, retryOnStatus, retryOnNetworkError, jitter }`
   * (integer ≥ 0; finite ≥ 0; finite ≥ 0; integers 100–599; boolean; boolean) replaces the slot's
   * whole policy, its other knobs from the defaults; unknown keys are rejected. Default: the default
   * policy.
   */
  retry?: boolean | Partial<RetryPolicy>;
  /**
   * Proactive pacing and quota-aware admission from `x-ratelimit-*` headers. A boolean. Default:
   * `true`.
   */
  paceWithRateLimit?: boolean;
  /** Pace once `remaining` falls below this. An integer ≥ 0; `0` disables floor pacing. Default: `1`. */
  rateLimitFloor?: number;
  /**
   * Fast-fails a host after `threshold` consecutive availability failures, for `cooldownMs`: `{ threshold: integer ≥ 1, cooldownMs: finite ≥ 0 }`;
   * `null` turns it off. Default: off.
   */
  circuitBreaker?: CircuitBreakerOptions;
  /**
   * Caps retries across all requests of a provider client, per upstream host, in fixed windows: `{ maxRetriesPerWindow: integer ≥ 0, windowMs: finite > 0 }`.
   * Default: off.
   */
  retryBudget?: RetryBudget;
  /**
   * Hard cap on concurrent connections per host (selects a dedicated pool). An integer ≥ 0; `0`
   * means 1, as in the original. Default: `20`.
   */
  maxSockets?: number;
  /** Idle connections kept per host (selects a dedicated pool). An integer ≥ 0. Default: `5`. */
  maxFreeSockets?: number;
  /**
   * Called with the error and its context when a request fails for good (and for attempts that will
   * be retried, unless `onRetry` is set). A function.
   */
  onError?: OnErrorHandler;
  /**
   * Called with the error and its context for an attempt that will be retried (its context has
   * `nextDelayMs`), instead of `onError`. A function.
   */
  onRetry?: OnErrorHandler;
  /** Called as each attempt starts. A function. */
  onRequestStart?: OnRequestStartHandler;
  /** Called with each answer an attempt got (or the response cache served). A function. */
  onResponse?: OnResponseHandler;
  /** Called when a request waits for the rate-limit window. A function. */
  onPace?: OnPaceHandler;
  /**
   * Called with the hook's name and an error when a hook throws or rejects (the failure is ignored
   * otherwise). A function.
   */
  onHookError?: OnHookErrorHandler;
  /**
   * What happens to a diagnostic no `onHookError` takes: `"warn"` writes it with `console.warn`,
   * `"hook"` and `"silent"` stay quiet. Default: `"warn"`.
   */
  diagnostics?: DiagnosticsMode;
  /** Called when a host's circuit opens. A function. */
  onCircuitOpen?: OnCircuitOpenHandler;
  /** Called when a host's circuit closes again. A function. */
  onCircuitClose?: OnCircuitCloseHandler;
  /** Bypass the shared pacing deadline for this call. A boolean. Default: `false`. */
  ignorePaceDeadline?: boolean;
  /**
   * Resolve GraphQL envelopes that carry errors and some data (AniList). A boolean. Default:
   * `false`.
   */
  allowPartialData?: boolean;
  /**
   * Serve GETs and GraphQL queries from this cache and write successful ones back: a `ResponseCache`
   * instance; `null` turns a slot's cache off for the call.
   */
  responseCache?: ResponseCache | null;
  /**
   * Skip the cache lookup and write-back for this call (a write still invalidates). A boolean.
   * Default: `false`.
   */
  bypassResponseCache?: boolean;
  /**
   * Largest response body read, in bytes (an integer ≥ 1). A larger body fails the call with
   * `NETWORK_ERROR` (its `reason` names the limit) as soon as it passes the limit; it is not retried
   * and does not count for the circuit breaker. Default: `67108864` (64 MiB).
   */
  maxResponseBytes?: number;
  /**
   * An `http://[user:pass@]host[:port]` proxy for every request (the environment's
   * `HTTP_PROXY`/`HTTPS_PROXY`/`NO_PROXY` are then ignored), or `false` for no proxy. Unset: the
   * environment, as read when the slot was built. Default: the environment.
   */
  proxy?: string | false;
  /**
   * Client-side admission ceiling per host (our extension): at most `maxRequests` (integer ≥ 1)
   * dispatches in any `windowMs` (finite > 0), with or without rate-limit headers; the stricter of
   * it and the server's quota wins. `null` or `false` turns it off. Default: off.
   */
  rateLimit?: RateLimitCeiling | null | false;
  /**
   * Identical reads in flight at the same time (same request, credential and outcome-shaping
   * options) share one request and its answer; writes never do (our extension). A boolean. Default:
   * `false`.
   */
  coalesce?: boolean;
  /**
   * Redirects (301, 302, 303, 307, 308) followed inside one attempt, as the original's client
   * followed them; credentials are dropped when a redirect leaves the request's origin. One more
   * redirect fails the attempt with `NETWORK_ERROR`. An integer ≥ 0; `0` returns the redirect as the
   * status error it is. Default: `5`.
   */
  maxRedirects?: number;
}

/** The options of a provider slot (or of the positional form): every request option plus the slot-only ones. */
export interface SlotOptions extends RequestOptions {
  /**
   * Share per-host state with other processes through Redis (our extension): `{ redis, keyPrefix?, timeoutMs?, leaseMs? }`;
   * `false`, `null` or absent: off. A slot option, refused per request. Default: off.
   */
  sharedState?: SharedStateOptions | null | false;
  /**
   * The quota an upstream enforces while degraded, below the one its headers announce (our
   * extension). Once a window's served and in-flight requests reach it, further requests go one at a
   * time until a success reports more served in a window without a 429 (the announced limit is
   * proven, until a 429 the estimate did not predict shows the headers lie again), so a degraded
   * upstream reveals itself with one 429 instead of one per request in flight. Does nothing while
   * `rateLimitFloor` is `0` or `paceWithRateLimit` is `false`. An integer ≥ 1; `false` or `0` turns
   * it off. A slot option, refused per request. Default: AniList `30`, MAL off.
   */
  degradedLimit?: number | false;
}
