// One measured client run, in its own process so that CPU time and peak RSS belong to that
// client alone:
//
//   node bench/clients/run-client.mjs <kind> <url> <workload> <concurrency> <amount> <warmup> [fresh]
//
// Kinds: anilink, anilink-defaults, anilink-observed, undici, fetch, axios, napi-floor,
// napi-inline (bench/clients/kinds/<kind>.mjs); `fresh` (anilink and undici): every request
// on a new connection, the handshake's cost. Workloads:
// media, custom (workload.mjs). `amount` and `warmup` are a number of requests (`8000`) or
// of seconds (`10s`): after the untimed warm-up, the timed phase keeps `concurrency` requests
// in flight, a new one starting as soon as one finishes, until the count is reached or the
// time is up (those in flight then finish and count). A request's latency runs from the call
// until its body has been read and parsed. Prints one JSON object on stdout (the fields the
// Rust reqwest client prints too); a timed phase in seconds also reports `windows`, its
// CPU µs per request second by second (how `node bench/run.mjs --warmup-probe` finds where
// a client stops warming up). If the kind cannot run here (the AniLink package not built
// yet), prints {"kind", "unavailable": reason} and exits with 3.
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { WORKLOADS } from './workload.mjs';

export const KINDS = [
  'anilink',
  'anilink-defaults',
  'anilink-observed',
  'undici',
  'fetch',
  'axios',
  'napi-floor',
  'napi-inline',
];
/** The kinds that can open a new connection for every request. */
export const FRESH_KINDS = ['anilink', 'undici'];
export const EXIT_UNAVAILABLE = 3;

const WINDOW_MS = 1_000;

/** Nearest-rank percentile of ascending samples (the same rule as the Rust reqwest client). */
function percentile(sorted, fraction) {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil(fraction * sorted.length);
  return sorted[Math.min(Math.max(rank, 1), sorted.length) - 1];
}

/** `"10s"` → `{ seconds: 10 }`, `"8000"` → `{ requests: 8000 }`; null when malformed. */
export function parseAmount(text) {
  const seconds = /^(\d+(?:\.\d+)?)s$/.exec(text);
  if (seconds) return { seconds: Number(seconds[1]) };
  return /^\d+$/.test(text) ? { requests: Number(text) } : null;
}

const isEmpty = (amount) => (amount.seconds ?? amount.requests) === 0;

/**
 * Keeps `concurrency` calls of `send` in flight for `amount`.
 * @returns {Promise<{latenciesMs: number[], windows: {cpuUsPerReq: number, requests: number}[]}>}
 *   each call's latency in completion order, and per-second CPU cost when timed by seconds
 */
async function runPhase(send, concurrency, amount) {
  const latenciesMs = [];
  const windows = [];
  const deadline = amount.seconds === undefined ? undefined : performance.now() + amount.seconds * 1000;
  let started = 0;
  const more = deadline === undefined ? () => started < amount.requests : () => performance.now() < deadline;
  let windowEnd = performance.now() + WINDOW_MS;
  let windowCpu = process.cpuUsage();
  let windowStart = 0;
  async function worker() {
    while (more()) {
      started += 1;
      const t0 = performance.now();
      await send();
      const t1 = performance.now();
      latenciesMs.push(t1 - t0);
      if (deadline !== undefined && t1 >= windowEnd) {
        const cpu = process.cpuUsage(windowCpu);
        const requests = latenciesMs.length - windowStart;
        windows.push({ requests, cpuUsPerReq: (cpu.user + cpu.system) / requests });
        windowCpu = process.cpuUsage();
        windowStart = latenciesMs.length;
        windowEnd = t1 + WINDOW_MS;
      }
    }
  }
  const workers = amount.requests === undefined ? concurrency : Math.min(concurrency, amount.requests);
  await Promise.all(Array.from({ length: workers }, worker));
  return { latenciesMs, windows };
}

function parseArgs(argv) {
  const usage = `usage: run-client.mjs <${KINDS.join('|')}> <url> <${Object.keys(WORKLOADS).join('|')}> <concurrency> <amount> <warmup> [fresh]  (amount, warmup: requests such as 8000, or seconds such as 10s; fresh: ${FRESH_KINDS.join(' and ')} only)`;
  const [kind, url, workloadName, concurrencyText, amountText, warmupText, freshText, ...rest] = argv;
  const fresh = freshText === 'fresh';
  const valid =
    KINDS.includes(kind) &&
    url &&
    WORKLOADS[workloadName] &&
    warmupText !== undefined &&
    (freshText === undefined || (fresh && FRESH_KINDS.includes(kind))) &&
    rest.length === 0;
  if (!valid) throw new Error(usage);
  const concurrency = Number(concurrencyText);
  const amount = parseAmount(amountText);
  const warmup = parseAmount(warmupText);
  if (!Number.isInteger(concurrency) || concurrency < 1 || !amount || isEmpty(amount) || !warmup) {
    throw new Error(
      `concurrency must be an integer ≥ 1, amount at least 1 request or more than 0s, warmup ≥ 0; got ${argv.slice(3).join(' ')}\n${usage}`,
    );
  }
  return { kind, url, workload: WORKLOADS[workloadName], concurrency, amount, warmup, amountText, warmupText, fresh };
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const { kind, workload, concurrency, amount, warmup } = options;
  const connections = options.fresh ? 'fresh' : 'capped';
  let client;
  try {
    const { createClient } = await import(`./kinds/${kind}.mjs`);
    client = await createClient({ url: new URL(workload.path, options.url).href, concurrency, workload, connections });
  } catch (error) {
    if (error.code !== 'CLIENT_UNAVAILABLE') throw error;
    process.stdout.write(`${JSON.stringify({ kind, unavailable: error.message })}\n`);
    process.exit(EXIT_UNAVAILABLE);
  }

  if (!isEmpty(warmup)) await runPhase(client.send, concurrency, warmup);
  const cpuBefore = process.cpuUsage();
  const t0 = performance.now();
  const { latenciesMs, windows } = await runPhase(client.send, concurrency, amount);
  const elapsedMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpuBefore);

  latenciesMs.sort((a, b) => a - b);
  const requests = latenciesMs.length;
  const report = {
    kind,
    workload: workload.name,
    concurrency,
    requests,
    amount: options.amountText,
    warmup: options.warmupText,
    connectionLimit: client.connectionLimit,
    reqPerSec: (requests / elapsedMs) * 1000,
    p50Us: percentile(latenciesMs, 0.5) * 1000,
    p99Us: percentile(latenciesMs, 0.99) * 1000,
    cpuUsPerReq: (cpu.user + cpu.system) / requests,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    windows,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  // Keep-alive sockets and native pools may hold the loop open; the measurement is done.
  process.exit(0);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    process.stderr.write(`run-client: ${error.stack ?? error}\n`);
    process.exit(1);
  });
}
