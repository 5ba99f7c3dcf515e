/**
 * What the demo counts. Everything the transport does on its own (retries, pacing, breaker
 * transitions) is learnt from its hooks, not guessed from the outside, so the numbers are the
 * ones an application would put on its own dashboard.
 */

export class JobMetrics {
  /** @param {number} total media the job must fetch */
  constructor(total) {
    this.total = total;
    this.startedAt = performance.now();
    this.fetched = 0;
    /** @type {{ id: number, reason: string }[]} */
    this.failures = [];
    /** `onRequestStart` reports: every attempt, and every circuit fast-fail too. */
    this.requestStarts = 0;
    this.retries = 0;
    /** Retries by what caused them: an HTTP status, or an error code when there was no answer. */
    this.retriesByCause = new Map();
    /** 429 answers the client saw, retried or not. */
    this.rateLimited = 0;
    this.paceWaits = 0;
    this.pacedMs = 0;
    this.breakerTrips = 0;
    this.breakerRecoveries = 0;
    /** Calls refused by the open breaker without touching the network. */
    this.fastFails = 0;
    /** Probes that found the upstream still failing (learnt by polling the transport state). */
    this.failedProbes = 0;
    /** Items the job put back in line after a call failed, by reason. */
    this.requeues = new Map();
    /** Whole calls, retries and pacing waits included. */
    this.callLatenciesMs = [];
    /** Network attempts only (`onResponse.durationMs`). */
    this.attemptLatenciesMs = [];
  }

  elapsedMs() {
    return performance.now() - this.startedAt;
  }

  /** Attempts that went to the network: a fast-fail never leaves the process. */
  attemptsSent() {
    return this.requestStarts - this.fastFails;
  }

  recordRetry(cause) {
    this.retries += 1;
    this.retriesByCause.set(cause, (this.retriesByCause.get(cause) ?? 0) + 1);
  }

  recordRequeue(reason) {
    this.requeues.set(reason, (this.requeues.get(reason) ?? 0) + 1);
  }

  totalRequeues() {
    let sum = 0;
    for (const count of this.requeues.values()) sum += count;
    return sum;
  }
}

/**
 * Nearest-rank percentile: the smallest sample with at least `p` percent of the samples at or
 * below it, so p99 of a small run is a latency that really happened. NaN without samples.
 * @param {number[]} samples
 * @param {number} p 0-100
 */
export function percentile(samples, p) {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}
