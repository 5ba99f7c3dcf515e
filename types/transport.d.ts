// Transport options, hooks, errors' context and snapshots: the types every provider shares
// (api.md §3, §6). Options are validated at runtime too (decisions D10). What crosses the
// boundary from the native transport (hook contexts, snapshots, error codes, diagnostic
// records) and the options' typings are generated from the Rust declarations
// (wire.generated.d.ts); the option values that are JavaScript objects are declared here.

import type {
  CircuitCloseContext,
  CircuitOpenContext,
  PaceContext,
  RequestContext,
  RequestErrorContext,
  ResponseContext,
} from './wire.generated';

export type {
  AdmissionSnapshot,
  AniLinkDiagnostic,
  AniLinkErrorCode,
  CircuitCloseContext,
  CircuitOpenContext,
  CircuitStateSnapshot,
  HostRetryBudgetSnapshot,
  PaceContext,
  PaceDeadlineSnapshot,
  RateLimitInfo,
  RequestContext,
  RequestErrorContext,
  RequestOptions,
  ResponseContext,
  RetryBudgetSnapshot,
  SlotOptions,
  TransportStateSnapshot,
} from './wire.generated';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The retry policy; every knob is optional and falls back to the built-in default. */
export interface RetryPolicy {
  /** Retries after the first attempt. Default 3. */
  maxRetries: number;
  /** First backoff cap in ms; doubles per attempt. Default 250. */
  baseDelayMs: number;
  /** Largest backoff cap in ms. Default 5000. */
  maxDelayMs: number;
  /** Statuses that are retried (authoritative, 429 included only when listed). Default [429, 500, 502, 503, 504]. */
  retryOnStatus: readonly number[];
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

export type OnRequestStartHandler = (context: RequestContext) => void;
export type OnResponseHandler = (context: ResponseContext) => void;
export type OnPaceHandler = (context: PaceContext) => void;
export type OnErrorHandler = (error: import('./errors').AniLinkError, context: RequestErrorContext) => void;
export type OnCircuitOpenHandler = (context: CircuitOpenContext) => void;
export type OnCircuitCloseHandler = (context: CircuitCloseContext) => void;
export type OnHookErrorHandler = (hookName: string, error: unknown) => void;
