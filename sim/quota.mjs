/**
 * The per-minute request quota of the AniList GraphQL API, as its documentation describes it
 * (docs.anilist.co/guide/rate-limiting, read for this simulator):
 *
 * - 90 requests per minute. Every response carries `X-RateLimit-Limit` and
 *   `X-RateLimit-Remaining`.
 * - Going over earns "a 1 minute timeout": every request in that period is answered
 *   `429 Too Many Requests` with `Retry-After` (seconds to wait), `X-RateLimit-Reset` (Unix
 *   timestamp in seconds when requests are accepted again) and `X-RateLimit-Remaining: 0`,
 *   and the GraphQL body `{"data":null,"errors":[{"message":"Too Many Requests.","status":429}]}`.
 * - The page also warns that the live API is "degraded" to 30 requests per minute while the
 *   headers still say 90, and mentions an undocumented burst limiter. Both are off by default and
 *   played on request: `degrade({ enforce })` keeps announcing the limit while enforcing
 *   `enforce`, and [`BurstLimiter`] refuses requests that come too close together.
 *
 * One addition of ours: the response that spends the last request of a window also carries
 * `X-RateLimit-Reset` (the end of the window), so a pacing client can wait instead of
 * walking into the 429. A window starts with the first request after the previous one ended.
 */

import { requireDuration, requireInteger } from './arguments.mjs';

export const DEFAULT_QUOTA = Object.freeze({ limit: 90, windowMs: 60_000 });

export class RateLimitQuota {
  #limit;
  /** What the server really allows per window (degraded mode); the headers still say `#limit`. */
  #enforced;
  #windowMs;
  #now;
  /** When the current window ends (epoch ms); undefined before the first request. */
  #windowEndsAt;
  #used = 0;
  /** When the timeout earned by going over ends (epoch ms). */
  #timeoutEndsAt;

  /**
   * @param {{ limit?: number, windowMs?: number }} quota
   * @param {() => number} now epoch milliseconds; injected so tests need not wait out a window
   */
  constructor(quota = {}, now = Date.now) {
    this.#now = now;
    this.configure(quota);
  }

  /** Replace the limit and window length and start afresh. */
  configure({ limit = DEFAULT_QUOTA.limit, windowMs = DEFAULT_QUOTA.windowMs } = {}) {
    requireInteger('quota limit', limit, 1);
    requireDuration('quota windowMs', windowMs, { allowZero: false });
    this.#limit = limit;
    this.#enforced = limit;
    this.#windowMs = windowMs;
    this.#windowEndsAt = undefined;
    this.#used = 0;
    this.#timeoutEndsAt = undefined;
  }

  /**
   * Degraded mode: enforce `enforce` requests per window while the headers keep announcing the
   * limit (`enforce: 0` ends it). The response that spends the last enforced request carries
   * the window's reset, as the server knows its own window.
   */
  degrade({ enforce } = {}) {
    requireInteger('degrade enforce', enforce, 0, this.#limit);
    this.#enforced = enforce === 0 ? this.#limit : enforce;
  }

  /**
   * Spend one request of the quota.
   * @returns {{ allowed: boolean, headers: Record<string, string> }}
   */
  take() {
    const now = this.#now();
    if (this.#timeoutEndsAt !== undefined && now < this.#timeoutEndsAt) return this.#refusal(now);
    if (this.#timeoutEndsAt !== undefined || this.#windowEndsAt === undefined || now >= this.#windowEndsAt) {
      this.#timeoutEndsAt = undefined;
      this.#windowEndsAt = now + this.#windowMs;
      this.#used = 0;
    }
    if (this.#used >= this.#enforced) {
      this.#timeoutEndsAt = now + this.#windowMs;
      return this.#refusal(now);
    }
    this.#used += 1;
    const remaining = this.#limit - this.#used;
    const headers = this.#headers(remaining);
    if (this.#used === this.#enforced) headers['x-ratelimit-reset'] = String(toEpochSeconds(this.#windowEndsAt));
    return { allowed: true, headers };
  }

  /** The headers for a response that did not spend quota (an injected failure). */
  currentHeaders() {
    const now = this.#now();
    if (this.#timeoutEndsAt !== undefined && now < this.#timeoutEndsAt) return this.#headers(0);
    const windowOpen =
      this.#windowEndsAt !== undefined && now < this.#windowEndsAt && this.#timeoutEndsAt === undefined;
    return this.#headers(windowOpen ? this.#limit - this.#used : this.#limit);
  }

  #refusal(now) {
    const headers = this.#headers(0);
    headers['retry-after'] = String(Math.max(1, Math.ceil((this.#timeoutEndsAt - now) / 1000)));
    headers['x-ratelimit-reset'] = String(toEpochSeconds(this.#timeoutEndsAt));
    return { allowed: false, headers };
  }

  #headers(remaining) {
    return { 'x-ratelimit-limit': String(this.#limit), 'x-ratelimit-remaining': String(remaining) };
  }
}

/**
 * A burst limiter in front of the quota: more than `max` requests within any `perMs` are
 * refused with 429 and a `Retry-After` of `perMs` (rounded up to a second); refusals spend no
 * quota and earn no timeout. Off until configured.
 */
export class BurstLimiter {
  #now;
  #max = 0;
  #perMs = 0;
  /** Arrival instants of the requests let through within `perMs`, oldest first. */
  #arrivals = [];

  /** @param {() => number} now epoch milliseconds */
  constructor(now = Date.now) {
    this.#now = now;
  }

  /** At most `max` requests per `perMs` (`max: 0` turns it off). */
  configure({ max, perMs } = {}) {
    requireInteger('burstLimit max', max, 0);
    if (max > 0) requireDuration('burstLimit perMs', perMs, { allowZero: false });
    this.#max = max;
    this.#perMs = max > 0 ? perMs : 0;
    this.#arrivals = [];
  }

  /** The `Retry-After` (seconds) when this request is one too many, else undefined. */
  refuse() {
    if (this.#max === 0) return undefined;
    const now = this.#now();
    while (this.#arrivals.length > 0 && this.#arrivals[0] + this.#perMs <= now) this.#arrivals.shift();
    if (this.#arrivals.length >= this.#max) return Math.max(1, Math.ceil(this.#perMs / 1000));
    this.#arrivals.push(now);
    return undefined;
  }
}

/** Rounded up, so a client that waits until this second is past the deadline. */
function toEpochSeconds(epochMs) {
  return Math.ceil(epochMs / 1000);
}
