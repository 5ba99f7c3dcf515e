/**
 * What the demo prints: a timeline of notable events, a live progress line (redrawn in place
 * on a terminal, printed every few seconds when the output goes to a file or a pipe, so logs
 * stay readable) and the closing summary table.
 */
import { percentile } from './metrics.mjs';

const REFRESH_MS = 100;
/** How often a plain (non-terminal) output gets a progress line. */
const PLAIN_PROGRESS_EVERY_MS = 2_000;
const BAR_WIDTH = 20;
const CLEAR_LINE = '\r\x1b[2K';

/** `850 ms`, `4.2 s`: milliseconds under a second, seconds with one decimal above. */
export function formatDuration(ms) {
  if (!Number.isFinite(ms)) return 'n/a';
  if (ms === 0) return '0 ms';
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  return `${(ms / 1_000).toFixed(1)} s`;
}

function plural(count, singular, pluralForm = `${singular}s`) {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}

/** `429 ×7, 502 ×8`, largest first. */
function breakdown(countsByKey) {
  return [...countsByKey]
    .sort((a, b) => b[1] - a[1])
    .map(([key, count]) => `${key} ×${count}`)
    .join(', ');
}

/** @param {{ breaker: string, metrics: import('./metrics.mjs').JobMetrics }} status */
function progressText({ breaker, metrics }) {
  return [
    `${metrics.fetched}/${metrics.total} fetched`,
    `retries ${metrics.retries} (429s ${metrics.rateLimited})`,
    `paced ${metrics.paceWaits}× ${formatDuration(metrics.pacedMs)}`,
    `breaker ${breaker}`,
    `requeued ${metrics.totalRequeues()}`,
    `failed ${metrics.failures.length}`,
  ].join(' | ');
}

function progressBar(done, total) {
  const filled = total === 0 ? BAR_WIDTH : Math.round((done / total) * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`;
}

export class ProgressReporter {
  #stream;
  #interactive;
  #pollStatus;
  #startedAt;
  #timer;
  #lastPlainLineAt = 0;

  /** @param {NodeJS.WriteStream} stream the line is redrawn in place only when it is a terminal */
  constructor(stream) {
    this.#stream = stream;
    this.#interactive = stream.isTTY === true;
    this.#startedAt = performance.now();
  }

  /** @param {() => { breaker: string, metrics: import('./metrics.mjs').JobMetrics }} pollStatus read on every refresh */
  start(pollStatus) {
    this.#pollStatus = pollStatus;
    this.#timer = setInterval(() => this.#refresh(), REFRESH_MS);
  }

  /** Stop refreshing; the last status goes out as a plain line so the final state stays visible. */
  stop() {
    clearInterval(this.#timer);
    if (this.#interactive) this.#stream.write(CLEAR_LINE);
    this.#writeLine(progressText(this.#pollStatus()));
  }

  /** A timeline entry, stamped with the time since the start. */
  event(text) {
    if (this.#interactive) this.#stream.write(CLEAR_LINE);
    this.#writeLine(text);
  }

  #writeLine(text) {
    const elapsed = `+${((performance.now() - this.#startedAt) / 1_000).toFixed(1)}s`;
    this.#stream.write(`  ${elapsed.padStart(7)}  ${text}\n`);
  }

  #refresh() {
    const status = this.#pollStatus();
    if (this.#interactive) {
      const elapsed = formatDuration(performance.now() - this.#startedAt);
      const line = `  ${progressBar(status.metrics.fetched, status.metrics.total)} ${progressText(status)} | ${elapsed}`;
      // Cut to the terminal's width so the line never wraps (a wrapped line cannot be redrawn).
      const width = this.#stream.columns || Number.POSITIVE_INFINITY;
      this.#stream.write(CLEAR_LINE + line.slice(0, width - 1));
      return;
    }
    const now = performance.now();
    if (now - this.#lastPlainLineAt < PLAIN_PROGRESS_EVERY_MS) return;
    this.#lastPlainLineAt = now;
    this.#writeLine(progressText(status));
  }
}

/**
 * The rows of the closing table.
 * @param {{
 *   metrics: import('./metrics.mjs').JobMetrics,
 *   serverStats?: import('../sim/anilist-simulator.d.mts').SimulatorStats,
 *   retryBudget?: { retriesUsed: number },
 *   retryBudgetOptions: { maxRetriesPerWindow: number, windowMs: number },
 *   wallMs: number,
 * }} facts `serverStats` only when the simulator ran: the server's own count of attempts
 * @returns {[string, string][]}
 */
export function summaryRows({ metrics, serverStats, retryBudget, retryBudgetOptions, wallMs }) {
  const attempts =
    serverStats === undefined
      ? ['attempts (client-side)', `${metrics.attemptsSent()} sent`]
      : [
          'attempts (server-side)',
          `${serverStats.requests} received: ${breakdown(Object.entries(serverStats.byStatus).map(([status, count]) => [`HTTP ${status}`, count]))}`,
        ];
  const retries = metrics.retries === 0 ? '0' : `${metrics.retries}: ${breakdown(metrics.retriesByCause)}`;
  const requeued = metrics.totalRequeues() === 0 ? '0' : `${metrics.totalRequeues()}: ${breakdown(metrics.requeues)}`;
  const budgetUsed = retryBudget?.retriesUsed ?? 0;
  return [
    ['calls', `${metrics.fetched} of ${metrics.total} fetched, ${metrics.failures.length} failed`],
    attempts,
    ['retries', retries],
    ['429 answers', `${metrics.rateLimited}`],
    ['pacing', `${plural(metrics.paceWaits, 'wait')}, ${formatDuration(metrics.pacedMs)} paced (summed over calls)`],
    [
      'breaker',
      `${plural(metrics.breakerTrips, 'trip')}, ${plural(metrics.breakerRecoveries, 'recovery', 'recoveries')}, ` +
        `${plural(metrics.failedProbes, 'failed probe')}, ${plural(metrics.fastFails, 'call')} failed fast`,
    ],
    ['requeued by the job', requeued],
    [
      'retry budget',
      `${budgetUsed} of ${retryBudgetOptions.maxRetriesPerWindow} used in the current ${formatDuration(retryBudgetOptions.windowMs)} window`,
    ],
    ['failures', `${metrics.failures.length}`],
    [
      'latency per call',
      `p50 ${formatDuration(percentile(metrics.callLatenciesMs, 50))}, p99 ${formatDuration(percentile(metrics.callLatenciesMs, 99))} (retries and waits included)`,
    ],
    [
      'latency per attempt',
      `p50 ${formatDuration(percentile(metrics.attemptLatenciesMs, 50))}, p99 ${formatDuration(percentile(metrics.attemptLatenciesMs, 99))} (network only)`,
    ],
    ['wall time', formatDuration(wallMs)],
  ];
}

/** A two-column table with a title, as plain text. */
export function formatTable(title, rows) {
  const labelWidth = Math.max(...rows.map(([label]) => label.length));
  const lines = rows.map(([label, value]) => `  ${label.padEnd(labelWidth)} | ${value}`);
  const rule = `  ${'-'.repeat(Math.max(title.length, ...lines.map((line) => line.length - 2)))}`;
  return [`  ${title}`, rule, ...lines, rule].join('\n');
}
