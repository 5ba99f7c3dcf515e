#!/usr/bin/env node
/**
 * `npm run demo`: what AniLink's resilient transport does for a real job, in one command and
 * without an AniList account. It starts the built-in AniList simulator, fetches 300 media with
 * 8 calls in flight through a small per-window quota, a scripted burst of 5xx and a short
 * outage, and shows the retries, the pacing and the circuit breaker at work.
 *
 *   npm run demo                    # the full run on the simulator (about 20-30 s)
 *   npm run demo -- --quick         # 60 media and a 1 s outage (a few seconds; used by the tests)
 *   npm run demo -- --live          # the same job against https://graphql.anilist.co (30 media)
 *   npm run demo -- --live --count 60 --concurrency 4
 *   npm run demo -- --fleet 4       # 4 worker processes on one quota, with and without Redis (about 30 s)
 *   npm run demo -- --fleet 4 --degraded  # the same fleet against a quota whose headers lie (about 15 s)
 *
 * Exit code: 0 when the job is done (on the simulator: every media fetched; live: failures are
 * listed with their reason), 1 when a simulator run lost an item or the demo itself failed,
 * 2 on bad arguments, 130 when interrupted with Ctrl-C.
 */
import { parseArgs } from 'node:util';
import { destroyCachedAgents } from 'anilink-api-wrapper';
import { startSimulator } from '../sim/anilist-simulator.mjs';
import { runDegradedFleetDemo, runFleetDemo } from './fleet-demo.mjs';
import { MediaJob } from './media-job.mjs';
import { LIVE_ANILIST_URL, livePlan, quickPlan, simulatorPlan } from './plans.mjs';
import { ProgressReporter, formatDuration, formatTable, summaryRows } from './report.mjs';

const USAGE =
  'usage: npm run demo [-- --quick | --live [--count <n>] [--concurrency <n>] | --fleet <workers> [--degraded]]';
const EXIT_INTERRUPTED = 130;

class UsageError extends Error {}

function positiveInteger(name, text) {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new UsageError(`--${name} must be a positive integer, got ${JSON.stringify(text)}`);
  return value;
}

/**
 * The plan the command line asks for; --count and --concurrency only tune the live job, and
 * --fleet asks for the fleet demo instead (`{ fleetSize, degraded }`).
 */
function planFromArguments(argv) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        quick: { type: 'boolean', default: false },
        live: { type: 'boolean', default: false },
        count: { type: 'string' },
        concurrency: { type: 'string' },
        fleet: { type: 'string' },
        degraded: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    throw new UsageError(error.message);
  }
  if (values.quick && values.live) throw new UsageError('--quick and --live exclude each other');
  if (values.fleet !== undefined) {
    if (values.quick || values.live || values.count !== undefined || values.concurrency !== undefined)
      throw new UsageError('--fleet runs alone: its job and quota are fixed');
    return { fleetSize: positiveInteger('fleet', values.fleet), degraded: values.degraded };
  }
  if (values.degraded) throw new UsageError('--degraded applies to --fleet');
  if (!values.live && (values.count !== undefined || values.concurrency !== undefined)) {
    throw new UsageError('--count and --concurrency apply to --live; the simulator runs are fixed stories');
  }
  if (values.live) {
    return livePlan({
      count: values.count === undefined ? undefined : positiveInteger('count', values.count),
      concurrency: values.concurrency === undefined ? undefined : positiveInteger('concurrency', values.concurrency),
    });
  }
  return values.quick ? quickPlan() : simulatorPlan();
}

function describeSetup(plan, baseUrl) {
  const { retry, retryBudget, circuitBreaker, rateLimitFloor } = plan.transport;
  const upstream = plan.simulatedQuota
    ? `simulator at ${baseUrl}, quota ${plan.simulatedQuota.limit} requests per ${formatDuration(plan.simulatedQuota.windowMs)} window (AniList: 90 per minute)`
    : `${baseUrl}, AniList's own quota`;
  const transport = [
    `retry up to ${retry.maxRetries}× (backoff ${retry.baseDelayMs} ms doubling, full jitter)`,
    `budget ${retryBudget.maxRetriesPerWindow} retries per ${formatDuration(retryBudget.windowMs)}`,
    `breaker after ${circuitBreaker.threshold} failures, ${formatDuration(circuitBreaker.cooldownMs)} cooldown`,
    `pacing on (waits once x-ratelimit-remaining < ${rateLimitFloor})`,
  ].join(', ');
  return [`AniLink demo: ${plan.title}`, `  upstream   ${upstream}`, `  transport  ${transport}`, ''].join('\n');
}

async function main() {
  const plan = planFromArguments(process.argv.slice(2));
  if (plan.fleetSize !== undefined) {
    const runFleet = plan.degraded ? runDegradedFleetDemo : runFleetDemo;
    return runFleet({ size: plan.fleetSize, output: process.stdout });
  }
  const simulator = plan.simulatedQuota ? await startSimulator({ quota: plan.simulatedQuota }) : undefined;
  const interrupt = new AbortController();
  const onInterrupt = () => interrupt.abort();
  process.once('SIGINT', onInterrupt);
  try {
    const baseUrl = simulator?.url ?? LIVE_ANILIST_URL;
    process.stdout.write(`${describeSetup(plan, baseUrl)}\n`);
    const reporter = new ProgressReporter(process.stdout);
    const job = new MediaJob({
      plan,
      baseUrl,
      simulator,
      timeline: (text) => reporter.event(text),
      signal: interrupt.signal,
    });
    reporter.start(() => job.pollStatus());
    try {
      await job.run();
    } finally {
      reporter.stop();
    }
    const { metrics } = job;
    const rows = summaryRows({
      metrics,
      serverStats: simulator?.stats(),
      retryBudget: job.retryBudget(),
      retryBudgetOptions: plan.transport.retryBudget,
      wallMs: metrics.elapsedMs(),
    });
    process.stdout.write(`\n${formatTable(`Summary: ${plan.title}`, rows)}\n`);
    for (const { id, reason } of metrics.failures) process.stdout.write(`  failed: media ${id}: ${reason}\n`);
    if (interrupt.signal.aborted) {
      const unfinished = metrics.total - metrics.fetched - metrics.failures.length;
      process.stdout.write(`  interrupted: ${unfinished} media not fetched\n`);
      return EXIT_INTERRUPTED;
    }
    return simulator !== undefined && metrics.failures.length > 0 ? 1 : 0;
  } finally {
    process.off('SIGINT', onInterrupt);
    await simulator?.close();
    destroyCachedAgents();
  }
}

main().then(
  (exitCode) => {
    process.exitCode = exitCode;
  },
  (error) => {
    if (error instanceof UsageError) {
      process.stderr.write(`demo: ${error.message}\n${USAGE}\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`demo failed: ${error?.stack ?? error}\n`);
    process.exitCode = 1;
  },
);
