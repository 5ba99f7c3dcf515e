// Transport options, hooks, errors' context and snapshots: the types every provider shares
// (api.md §3, §6). Options are validated at runtime too (decisions D10).

import type { ResponseCache, ResponseCacheStats } from './response-cache';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

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

/** The upstream's quota from `x-ratelimit-*` headers; `reset` is Unix epoch seconds. */
export interface RateLimitInfo {
  limit: number;
  remaining: number;
  reset: number;
}

/** The retry policy; every knob is optional and falls back to the built-in default. */
export interface RetryPolicy {
  /** Retries after the first attempt. Default 3. */
  maxRetries: number;
  /** First backoff cap in ms; doubles per attempt. Default 250. */
  baseDelayMs: number;
  /** Largest backoff cap in ms. Default 5000. */
  maxDelayMs: number;
  /** Statuses that are retried (authoritative, 429 included only when listed). Default [429, 500, 502, 503, 504]. */
  retryOnStatus: number[];
  /** Retry connection failures and timeouts. Default true. */
  retryOnNetworkError: boolean;
  /** Full jitter: each wait is uniform in [0, cap]; false waits exactly the cap. Default true. */
  jitter?: boolean;
}

/** Caps retries across all requests of a provider client, per upstream host, in fixed windows. */
export interface RetryBudget {
  /** Retries allowed per window (0 = none). */
  maxRetriesPerWindow: number;
  /** Window length in ms (> 0). */
  windowMs: number;
}

/**
 * Client-side admission ceiling (our extension): at most `maxRequests` dispatches per host in
 * any `windowMs`, with or without rate-limit headers; the stricter of it and the server's quota wins.
 */
export interface RateLimitCeiling {
  /** Integer > 0. */
  maxRequests: number;
  /** Window length in ms (> 0). */
  windowMs: number;
}

/**
 * Per-host state shared by a fleet of processes through Redis (our extension; a slot option,
 * refused per request): the admission estimate and requests in flight, the pacing deadline, the
 * retry budget's window and the circuit breaker, per provider, host and credential. When Redis
 * is unreachable or slower than `timeoutMs`, the slot falls back to its own state (one
 * `SHARED_STATE_UNAVAILABLE` diagnostic) and rejoins when it answers (`SHARED_STATE_REJOINED`).
 */
export interface SharedStateOptions {
  /**
   * `redis://[user:password@]host:port[/db]`, e.g. `"redis://127.0.0.1:6379"`; `rediss://` for TLS (verified against
   * the system trust store and `NODE_EXTRA_CA_CERTS`, as HTTPS is). `user` logs in as that ACL user.
   */
  redis: string;
  /** Prefix of every key; no `{` or `}`, at most 128 characters. Default `"anilink"`. */
  keyPrefix?: string;
  /** A Redis operation slower than this (ms, > 0) decides from local state instead. Default 100. */
  timeoutMs?: number;
  /** Longest a request in flight holds its reservation (ms, > 0), so a killed worker frees it. Default 60000. */
  leaseMs?: number;
}

/** Fast-fails after `threshold` consecutive availability failures for `cooldownMs`. */
export interface CircuitBreakerOptions {
  threshold: number;
  cooldownMs: number;
}

export type DiagnosticsMode = 'warn' | 'hook' | 'silent';

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
  /** Terminal report only: the retry budget stopped a retry the policy wanted. */
  budgetExhausted?: boolean;
  /** Circuit fast-fails only. */
  host?: string;
  retryAfterMs?: number;
}

export interface CircuitOpenContext extends RequestContext {
  host: string;
  failures: number;
}

export interface CircuitCloseContext extends RequestContext {
  host: string;
}

export interface AniLinkDiagnostic {
  source: 'anilink';
  kind: 'hook-failure' | 'state-owner' | 'token-refresh' | 'http-mock' | 'shared-state';
  hookName: string;
  requestId?: string;
  message: string;
  /** `kind: 'shared-state'`: the slot fell back to its local state, or rejoined Redis. */
  code?: 'SHARED_STATE_UNAVAILABLE' | 'SHARED_STATE_REJOINED';
  /** `kind: 'shared-state'`: the upstream host whose decision switched. */
  host?: string;
  /** `kind: 'shared-state'`: `host:port` of the Redis server (never its credentials). */
  redis?: string;
}

export type OnRequestStartHandler = (context: RequestContext) => void;
export type OnResponseHandler = (context: ResponseContext) => void;
export type OnPaceHandler = (context: PaceContext) => void;
export type OnErrorHandler = (error: import('./errors').AniLinkError, context: RequestErrorContext) => void;
export type OnCircuitOpenHandler = (context: CircuitOpenContext) => void;
export type OnCircuitCloseHandler = (context: CircuitCloseContext) => void;
export type OnHookErrorHandler = (hookName: string, error: unknown) => void;

/** Transport options: per slot, in the positional constructor form, or per request (merged per key). */
export interface RequestOptions {
  /** Per-attempt deadline in ms covering connect, headers and body (and the redirects the attempt follows); not run while waiting for a socket of a saturated pool. Default 30000; 0 disables. */
  timeout?: number;
  /** Cancels the request: in flight, during retry backoff and during pacing waits. */
  signal?: AbortSignal;
  /** Attach a redacted description of the raw failure as `rawAxiosError` / `cause`. */
  exposeRawAxiosError?: boolean;
  /** `false` sends once; `true` or omitted uses the defaults (mutations and REST writes: not retried unless set). */
  retry?: boolean | Partial<RetryPolicy>;
  /** Proactive pacing and quota-aware admission from x-ratelimit-* headers. Default true. */
  paceWithRateLimit?: boolean;
  /** Pace once `remaining` falls below this. Default 1; 0 disables floor pacing. */
  rateLimitFloor?: number;
  circuitBreaker?: CircuitBreakerOptions;
  retryBudget?: RetryBudget;
  /** Client-side admission ceiling per host; `null` or `false` (the default) turns it off. */
  rateLimit?: RateLimitCeiling | null | false;
  /** Hard cap on concurrent connections per host (selects a dedicated pool); `0` means 1. Default 20. */
  maxSockets?: number;
  /** Idle connections kept per host (selects a dedicated pool). Default 5. */
  maxFreeSockets?: number;
  onError?: OnErrorHandler;
  onRetry?: OnErrorHandler;
  onRequestStart?: OnRequestStartHandler;
  onResponse?: OnResponseHandler;
  onPace?: OnPaceHandler;
  onHookError?: OnHookErrorHandler;
  diagnostics?: DiagnosticsMode;
  onCircuitOpen?: OnCircuitOpenHandler;
  onCircuitClose?: OnCircuitCloseHandler;
  /** Bypass the shared pacing deadline for this call. */
  ignorePaceDeadline?: boolean;
  /** Resolve GraphQL envelopes that carry errors and some data (AniList). */
  allowPartialData?: boolean;
  /** Serve GETs and GraphQL queries from this cache and write successful ones back; `null` turns a slot's cache off. */
  responseCache?: ResponseCache | null;
  /** Skip the cache lookup and write-back for this call (a write still invalidates). */
  bypassResponseCache?: boolean;
  /**
   * An `http://[user:pass@]host[:port]` proxy for every request (the environment's
   * `HTTP_PROXY`/`HTTPS_PROXY`/`NO_PROXY` are then ignored), or `false` for no proxy. Unset:
   * the environment, as read when the slot was built.
   */
  proxy?: string | false;
  /**
   * Largest response body read, in bytes (an integer ≥ 1; default 64 MiB). A larger body fails
   * the call with `NETWORK_ERROR` (its `reason` names the limit) as soon as it passes the limit;
   * it is not retried and does not count for the circuit breaker.
   */
  maxResponseBytes?: number;
  /**
   * Identical reads in flight at the same time (same request, credential and outcome-shaping
   * options) share one request and its answer; writes never do. Default false (our extension).
   */
  coalesce?: boolean;
  /**
   * Redirects (301, 302, 303, 307, 308) followed inside one attempt, as the original's client
   * followed them; credentials are dropped when a redirect leaves the request's origin. One
   * more redirect fails the attempt with `NETWORK_ERROR`. An integer ≥ 0; default 5; `0`
   * returns the redirect as the status error it is.
   */
  maxRedirects?: number;
}

/** The options of a provider slot (or of the positional form): every request option plus the slot-only ones. */
export interface SlotOptions extends RequestOptions {
  /** Share per-host state with other processes through Redis; `false`, `null` or absent: off. Slot only. */
  sharedState?: SharedStateOptions | null | false;
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

/** One host's quota-aware admission estimate. */
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
   * force instead of `limit`, raised by one per window without a 429; null when none is.
   */
  learnedLimit: number | null;
  /** Processes that admitted requests in this scope in the last minute (with `sharedState`). */
  processes: number;
  /** What this process admits per window when it must decide without Redis; null before any limit. */
  share: number | null;
  /**
   * Where admission is decided: `'process'` (no `sharedState`), `'redis'` (the fleet's state) or
   * `'local-share'` (Redis out of reach: this process's `share` only).
   */
  decidedBy: 'process' | 'redis' | 'local-share';
}

export interface TransportStateSnapshot {
  capturedAt: number;
  /** `'redis'`: the lists are the fleet's state as last read; `'local-fallback'`: Redis is unreachable. */
  sharedState: 'off' | 'redis' | 'local-fallback';
  admission: readonly AdmissionSnapshot[];
  circuit: readonly CircuitStateSnapshot[];
  /** The window of the slot's own endpoint host, once one exists. */
  retryBudget?: RetryBudgetSnapshot;
  /** Every host with a budget window. */
  retryBudgets: readonly (RetryBudgetSnapshot & { host: string })[];
  paceDeadlines: readonly PaceDeadlineSnapshot[];
  /** The counters of the slot's response cache, when it has one. */
  responseCache?: ResponseCacheStats;
}
