/**
 * Failures a demo or test asks the simulator to inject: a burst of 5xx answers, an outage
 * window, slow answers. They stand for the infrastructure in front of AniList failing, so
 * they are decided before the rate-limit quota and do not spend it.
 */

import { requireDuration, requireInteger } from './arguments.mjs';

export class FailureScript {
  #now;
  #burst = { remaining: 0, status: 500 };
  /** Epoch ms until which every request fails with 503. */
  #outageEndsAt = 0;
  #slow = { remaining: 0, ms: 0 };

  /** @param {() => number} now epoch milliseconds */
  constructor(now = Date.now) {
    this.#now = now;
  }

  /** The next `count` requests fail with `status` (5xx, default 500). */
  burst5xx({ count, status = 500 } = {}) {
    requireInteger('burst5xx count', count, 1);
    requireInteger('burst5xx status', status, 500, 599);
    this.#burst = { remaining: count, status };
  }

  /** Every request fails with 503 for the next `ms` milliseconds (`ms: 0` ends an outage). */
  outage({ ms } = {}) {
    requireDuration('outage ms', ms);
    this.#outageEndsAt = this.#now() + ms;
  }

  /** Delay the next `count` answers (default: all of them) by `ms` (`ms: 0` ends it). */
  slow({ ms, count = Infinity } = {}) {
    requireDuration('slow ms', ms);
    if (count !== Infinity) requireInteger('slow count', count, 1);
    this.#slow = { remaining: ms > 0 ? count : 0, ms };
  }

  clear() {
    this.#burst = { remaining: 0, status: 500 };
    this.#outageEndsAt = 0;
    this.#slow = { remaining: 0, ms: 0 };
  }

  /** The status this request must fail with, or undefined; spends one burst slot if used. */
  takeFailureStatus() {
    if (this.#now() < this.#outageEndsAt) return 503;
    if (this.#burst.remaining === 0) return undefined;
    this.#burst.remaining -= 1;
    return this.#burst.status;
  }

  /** How long to hold this answer back; spends one slow slot if used. */
  takeDelayMs() {
    if (this.#slow.remaining === 0) return 0;
    this.#slow.remaining -= 1;
    return this.#slow.ms;
  }
}
