/**
 * `npm run demo -- --fleet N`: N worker processes (each `AniLink`, 8 calls in flight) fetch one
 * job through one simulator quota, twice: sharing their per-host state through a local
 * redis-server (`sharedState`), then each on its own. The two runs are printed side by side:
 * 429s received, requests sent and served, quota used and wall time.
 *
 * `npm run demo -- --fleet N --degraded`: the same fleet, sharing state, against a simulator in
 * AniList's degraded mode (headers announce 90 per window, the server enforces 30). Past the
 * slot's `degradedLimit` (30) one request goes at a time (decisions D42), so one 429 reveals the
 * lie and teaches the fleet the real limit (D39 b); the run prints how many 429s there were and
 * the limit the fleet learned.
 */
import { startSimulator } from '../sim/anilist-simulator.mjs';
import { quotaUsed, splitIds, startFleet } from './fleet.mjs';
import { startRedisServer } from './redis-server.mjs';
import { formatDuration } from './report.mjs';

/** A few seconds per window, so both runs span several windows and stay short. */
const QUOTA = { limit: 40, windowMs: 4_000 };
const WINDOWS_OF_WORK = 4;
const IN_FLIGHT = 8;

/** Retries as the main demo's: the unshared run's 429s are retried after their Retry-After. */
const TRANSPORT = {
  retry: { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 1_000 },
  retryBudget: { maxRetriesPerWindow: 100, windowMs: 60_000 },
  paceWithRateLimit: true,
  rateLimitFloor: 1,
  timeout: 10_000,
};

/**
 * Run the job once with `size` workers and the given extra slot options.
 * @returns {Promise<{ rateLimited: number, sent: number, served: number, failed: number, quotaUsed: number, wallMs: number }>}
 */
async function runOnce(simulator, size, slot) {
  simulator.script.reset();
  const fleet = await startFleet({ size, slot: { baseUrl: simulator.url, ...TRANSPORT, ...slot } });
  try {
    const { reports, wallMs } = await fleet.run(splitIds(WINDOWS_OF_WORK * QUOTA.limit, size), IN_FLIGHT);
    const served = reports.reduce((sum, report) => sum + report.served, 0);
    const { rateLimited, requests } = simulator.stats();
    return {
      rateLimited,
      sent: requests,
      served,
      failed: reports.reduce((sum, report) => sum + report.failures.length, 0),
      quotaUsed: quotaUsed(served, wallMs, QUOTA),
      wallMs,
    };
  } finally {
    await fleet.close();
  }
}

/** Rows of label and one value per run, as aligned plain text. */
function formatComparison(headings, rows) {
  const table = [['', ...headings], ...rows];
  const widths = headings.map((_, column) => Math.max(...table.map((row) => row[column + 1].length)));
  const labelWidth = Math.max(...table.map(([label]) => label.length));
  const lines = table.map(
    ([label, ...values]) =>
      `  ${label.padEnd(labelWidth)} | ${values.map((value, column) => value.padStart(widths[column])).join(' | ')}`,
  );
  const rule = `  ${'-'.repeat(Math.max(...lines.map((line) => line.length - 2)))}`;
  return [lines[0], rule, ...lines.slice(1), rule].join('\n');
}

/**
 * @param {{ size: number, output: NodeJS.WritableStream }} options
 * @returns {Promise<number>} the exit code: 0 when the shared run lost nothing and earned no 429
 */
export async function runFleetDemo({ size, output }) {
  const total = WINDOWS_OF_WORK * QUOTA.limit;
  const [simulator, redis] = await Promise.all([startSimulator({ quota: QUOTA }), startRedisServer()]);
  try {
    output.write(
      [
        `AniLink fleet demo: ${total} media by id, ${size} worker processes × ${IN_FLIGHT} in flight, one quota`,
        `  upstream   simulator at ${simulator.url}, quota ${QUOTA.limit} requests per ${formatDuration(QUOTA.windowMs)} window`,
        `  shared     redis-server at ${redis.url} (sharedState), then each worker on its own`,
        '',
      ].join('\n'),
    );
    output.write('  run 1: sharing state through Redis…\n');
    const shared = await runOnce(simulator, size, { sharedState: { redis: redis.url, keyPrefix: 'anilink-demo' } });
    output.write('  run 2: each worker on its own…\n\n');
    const alone = await runOnce(simulator, size, {});
    const runs = [shared, alone];
    const row = (label, format) => [label, ...runs.map(format)];
    output.write(
      `${formatComparison(
        ['shared state (Redis)', 'no shared state'],
        [
          row('429s received', (run) => String(run.rateLimited)),
          row('requests sent', (run) => String(run.sent)),
          row('requests served', (run) => `${run.served} of ${total}${run.failed > 0 ? `, ${run.failed} failed` : ''}`),
          row('quota used', (run) => `${Math.round(run.quotaUsed * 100)} %`),
          row('wall time', (run) => formatDuration(run.wallMs)),
        ],
      )}\n`,
    );
    output.write(
      "\n  Sharing, the fleet admits only what the quota has left, counting every worker's calls in flight;\n" +
        '  alone, each worker counts only its own, so together they overrun the quota: every request sent\n' +
        '  beyond it is answered 429 and has to be retried.\n',
    );
    return shared.rateLimited === 0 && shared.failed === 0 ? 0 : 1;
  } finally {
    await Promise.all([simulator.close(), redis.stop()]);
  }
}

/** AniList's degraded mode, in short windows: the headers say 90, the server allows 30. */
const DEGRADED = { announced: 90, enforced: 30, windowMs: 3_000 };
const DEGRADED_WINDOWS_OF_WORK = 4;

/**
 * @param {{ size: number, output: NodeJS.WritableStream }} options
 * @returns {Promise<number>} the exit code: 0 when every media was served and the fleet learned
 *   a limit no higher than the enforced one plus one (its probe)
 */
export async function runDegradedFleetDemo({ size, output }) {
  const total = DEGRADED_WINDOWS_OF_WORK * DEGRADED.enforced;
  const [simulator, redis] = await Promise.all([
    startSimulator({ quota: { limit: DEGRADED.announced, windowMs: DEGRADED.windowMs } }),
    startRedisServer(),
  ]);
  simulator.script.degrade({ enforce: DEGRADED.enforced });
  try {
    output.write(
      [
        `AniLink fleet demo, degraded quota: ${total} media by id, ${size} worker processes × ${IN_FLIGHT} in flight, one quota`,
        `  upstream   simulator at ${simulator.url}, headers announce ${DEGRADED.announced} per ${formatDuration(DEGRADED.windowMs)}, the server enforces ${DEGRADED.enforced} (AniList's degraded mode)`,
        `  shared     redis-server at ${redis.url} (sharedState)`,
        '',
      ].join('\n'),
    );
    const fleet = await startFleet({
      size,
      slot: { baseUrl: simulator.url, ...TRANSPORT, sharedState: { redis: redis.url, keyPrefix: 'anilink-demo' } },
    });
    let run;
    let learnedLimits;
    try {
      run = await fleet.run(splitIds(total, size), IN_FLIGHT);
      const states = await fleet.states();
      learnedLimits = states.map((state) => state.admission[0]?.learnedLimit ?? null);
    } finally {
      await fleet.close();
    }
    const served = run.reports.reduce((sum, report) => sum + report.served, 0);
    const failed = run.reports.reduce((sum, report) => sum + report.failures.length, 0);
    const { rateLimited, requests } = simulator.stats();
    const learned = learnedLimits.find((limit) => limit !== null) ?? null;
    output.write(
      `${formatComparison(
        ['shared state (Redis)'],
        [
          ['429s received', String(rateLimited)],
          ['requests sent', String(requests)],
          ['requests served', `${served} of ${total}${failed > 0 ? `, ${failed} failed` : ''}`],
          ['learned limit', learned === null ? 'none' : `${learned} per window (announced ${DEGRADED.announced})`],
          ['wall time', formatDuration(run.wallMs)],
        ],
      )}\n`,
    );
    output.write(
      '\n  The headers cannot tell the lie: it shows when the server refuses a request the quota said it\n' +
        '  had room for. Past the 30 AniList documents for its degraded mode (degradedLimit), the fleet\n' +
        '  sends one request at a time until a window proves the announced limit, so the lie costs that\n' +
        '  one request. From then on the whole fleet keeps to what the window served (kept in Redis), and\n' +
        '  tries one more after each window without a 429: one 429 each time the server still enforces less.\n',
    );
    const learnedEnough = learned !== null && learned <= DEGRADED.enforced + 1;
    return failed === 0 && served === total && learnedEnough ? 0 : 1;
  } finally {
    await Promise.all([simulator.close(), redis.stop()]);
  }
}
