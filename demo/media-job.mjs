/**
 * The demo's job: fetch a list of media by id through one `AniLink` client with a fixed number
 * of calls in flight, the way a batch importer would.
 *
 * The transport does the resilience work (retries, pacing, breaker); the job only does what an
 * application has to do on top: when a call still fails (the breaker refused it, or the
 * upstream kept failing through every retry) the item goes back in line after a pause, and the
 * job gives up on an item only after many tries or on a failure no wait can fix (a 404, say).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AniLink, AniLinkErrorCodes } from 'anilink-api-wrapper';
import { JobMetrics } from './metrics.mjs';
import { formatDuration } from './report.mjs';

/** Tries per item before the job gives up: each try after a fast-fail first waits out the cooldown. */
const MAX_TRIES_PER_ITEM = 20;
/** Pause before trying an item again when the transport gave no better hint. */
const REQUEUE_PAUSE_MS = 250;

const TRANSIENT_CODES = new Set([AniLinkErrorCodes.NETWORK, AniLinkErrorCodes.TIMEOUT]);

/** Whether waiting could fix this failure: lost connections, timeouts, 429s and 5xx answers. */
function isTransient(error) {
  if (TRANSIENT_CODES.has(error?.code)) return true;
  const status = error?.status;
  return status === 429 || (Number.isInteger(status) && status >= 500);
}

/** A failure in one line, without anything the request carried (no secrets can leak). */
function explain(error) {
  const status = Number.isInteger(error?.status) ? ` ${error.status}` : '';
  return `${error?.code ?? 'ERROR'}${status}: ${error?.message ?? String(error)}`;
}

export class MediaJob {
  #plan;
  #simulator;
  #timeline;
  #signal;
  #aniLink;
  #nextIndex = 0;
  #nextScriptedFailure = 0;
  /** The terminal `onError` context of each failed call, by requestId, until the job reads it. */
  #terminalContexts = new Map();
  /** When the breaker last opened (performance.now()), to report how long it stayed open. */
  #breakerOpenedAt = 0;
  /** The highest `failedProbes` the transport reported since the breaker last opened. */
  #failedProbesThisOpening = 0;
  /** The latest pacing deadline already announced on the timeline (epoch ms). */
  #announcedPaceDeadline = 0;

  /**
   * @param {{
   *   plan: import('./plans.mjs').Plan,
   *   baseUrl: string,
   *   simulator?: import('../sim/anilist-simulator.d.mts').Simulator,
   *   timeline: (text: string) => void,
   *   signal: AbortSignal,
   * }} options `simulator` is needed only for a plan with scripted failures
   */
  constructor({ plan, baseUrl, simulator, timeline, signal }) {
    this.#plan = plan;
    this.#simulator = simulator;
    this.#timeline = timeline;
    this.#signal = signal;
    this.metrics = new JobMetrics(plan.mediaIds.length);
    this.#aniLink = new AniLink({ anilist: { baseUrl, ...plan.transport, ...this.#hooks() } });
  }

  /** Fetch every item; resolves when each one is fetched, given up on, or the signal aborted. */
  async run() {
    const workers = Array.from({ length: this.#plan.concurrency }, () => this.#work());
    await Promise.all(workers);
  }

  /** The retry budget's current window, from the transport's own snapshot (absent before any failure). */
  retryBudget() {
    return this.#aniLink.getTransportState().anilist.retryBudget;
  }

  /**
   * Read the transport's state for the progress line: the breaker's state, and the pacing
   * deadlines and failed probes that no hook reports. Called on every refresh of the line.
   */
  pollStatus() {
    const state = this.#aniLink.getTransportState().anilist;
    for (const { deadlineMs } of state.paceDeadlines) this.#announcePaceDeadline(deadlineMs);
    // The job talks to one host, so there is at most one breaker.
    const circuit = state.circuit[0];
    let breaker = 'closed';
    if (circuit?.probeInFlight) breaker = 'probing';
    else if (circuit !== undefined && circuit.openedAt !== null) breaker = 'OPEN';
    if (circuit !== undefined)
      this.#failedProbesThisOpening = Math.max(this.#failedProbesThisOpening, circuit.failedProbes);
    return { breaker, metrics: this.metrics };
  }

  #announcePaceDeadline(deadlineMs) {
    if (deadlineMs <= this.#announcedPaceDeadline) return;
    this.#announcedPaceDeadline = deadlineMs;
    const waitMs = deadlineMs - Date.now();
    const callsLeft = this.metrics.fetched + this.metrics.failures.length < this.metrics.total;
    if (waitMs > 0 && callsLeft)
      this.#timeline(`quota used up: new calls wait ${formatDuration(waitMs)} for the window to reset (pacing)`);
  }

  async #work() {
    const ids = this.#plan.mediaIds;
    while (this.#nextIndex < ids.length && !this.#signal.aborted) {
      const id = ids[this.#nextIndex];
      this.#nextIndex += 1;
      await this.#fetchUntilSettled(id);
    }
  }

  async #fetchUntilSettled(id) {
    const metrics = this.metrics;
    for (let tries = 1; ; tries += 1) {
      const startedAt = performance.now();
      let requeue;
      try {
        const media = await this.#aniLink.anilist.query.media({ id }, { signal: this.#signal });
        if (media?.id !== id) {
          metrics.failures.push({ id, reason: `the answer was for media ${JSON.stringify(media?.id)}` });
          return;
        }
        metrics.callLatenciesMs.push(performance.now() - startedAt);
        metrics.fetched += 1;
        this.#runDueScriptedFailures();
        return;
      } catch (error) {
        if (this.#signal.aborted) return; // interrupted: the item is simply not done
        const context = this.#terminalContexts.get(error?.requestId);
        this.#terminalContexts.delete(error?.requestId);
        requeue = this.#requeueDecision(error, context);
        if (requeue === undefined || tries >= MAX_TRIES_PER_ITEM) {
          const prefix = requeue === undefined ? '' : `gave up after ${tries} tries: `;
          metrics.failures.push({ id, reason: prefix + explain(error) });
          return;
        }
      }
      metrics.recordRequeue(requeue.reason);
      try {
        await sleep(requeue.waitMs, undefined, { signal: this.#signal });
      } catch {
        return; // interrupted while waiting
      }
    }
  }

  /** Why and how long to wait before trying again, or undefined when waiting cannot help. */
  #requeueDecision(error, context) {
    if (error?.code === AniLinkErrorCodes.CIRCUIT) {
      // retryAfterMs is absent while a probe is out: its answer comes quickly either way.
      return { reason: 'breaker open', waitMs: context?.retryAfterMs ?? REQUEUE_PAUSE_MS };
    }
    if (!isTransient(error)) return undefined;
    const reason = context?.budgetExhausted ? 'retry budget spent' : 'failed after retries';
    return { reason, waitMs: REQUEUE_PAUSE_MS };
  }

  #runDueScriptedFailures() {
    const scripted = this.#plan.scriptedFailures;
    while (
      this.#nextScriptedFailure < scripted.length &&
      this.metrics.fetched >= scripted[this.#nextScriptedFailure].afterFetched
    ) {
      const failure = scripted[this.#nextScriptedFailure];
      this.#nextScriptedFailure += 1;
      this.#timeline(`scripted: ${failure.description}`);
      failure.run(this.#simulator.script);
    }
  }

  /** The slot's hooks: they feed the metrics and the timeline. */
  #hooks() {
    const metrics = this.metrics;
    return {
      onRequestStart: () => {
        metrics.requestStarts += 1;
      },
      onResponse: (context) => {
        metrics.attemptLatenciesMs.push(context.durationMs);
      },
      onRetry: (_error, context) => {
        metrics.recordRetry(context.status ?? context.code);
        if (context.status === 429) metrics.rateLimited += 1;
      },
      onError: (_error, context) => {
        if (context.code === AniLinkErrorCodes.CIRCUIT) metrics.fastFails += 1;
        if (context.status === 429) metrics.rateLimited += 1;
        if (context.nextDelayMs === undefined) this.#terminalContexts.set(context.requestId, context);
      },
      onPace: (context) => {
        if (context.aborted) return;
        metrics.paceWaits += 1;
        metrics.pacedMs += context.delayMs;
      },
      onCircuitOpen: (context) => {
        metrics.breakerTrips += 1;
        this.#breakerOpenedAt = performance.now();
        this.#failedProbesThisOpening = 0;
        this.#timeline(
          `breaker OPEN after ${context.failures} consecutive failures: calls fail fast until a probe gets through`,
        );
      },
      onCircuitClose: () => {
        metrics.breakerRecoveries += 1;
        metrics.failedProbes += this.#failedProbesThisOpening;
        const openFor = formatDuration(performance.now() - this.#breakerOpenedAt);
        const probes = this.#failedProbesThisOpening;
        const probeNote =
          probes === 0 ? '' : ` (${probes} failed probe${probes === 1 ? '' : 's'} widened the cooldown first)`;
        this.#failedProbesThisOpening = 0;
        this.#timeline(`breaker CLOSED after ${openFor} open: the upstream answers again${probeNote}`);
      },
    };
  }
}
