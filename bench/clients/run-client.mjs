// One measured client run, in its own process so that CPU time and peak RSS belong to that
// client alone:
//
//   node bench/clients/run-client.mjs <kind> <url> <concurrency> <requests> <warmup>
//
// Kinds: anilink, undici, fetch, axios (bench/clients/kinds/<kind>.mjs). After `warmup`
// untimed requests, `requests` timed ones run with `concurrency` in flight. A request's
// latency runs from the call until its body has been read and parsed. Prints one JSON object
// on stdout (the fields the Rust floor client prints too). If the kind cannot run here (the
// AniLink package not built yet), prints {"kind", "unavailable": reason} and exits with 3.
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

export const KINDS = ['anilink', 'undici', 'fetch', 'axios'];
export const EXIT_UNAVAILABLE = 3;

/** Nearest-rank percentile of ascending samples (the same rule as the Rust floor client). */
function percentile(sorted, fraction) {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil(fraction * sorted.length);
  return sorted[Math.min(Math.max(rank, 1), sorted.length) - 1];
}

/**
 * Completes `total` calls of `send` with at most `concurrency` in flight.
 * @returns {Promise<Float64Array>} each call's latency in ms, in completion order
 */
async function runPhase(send, concurrency, total) {
  const latenciesMs = new Float64Array(total);
  let started = 0;
  let finished = 0;
  async function worker() {
    while (started < total) {
      started += 1;
      const t0 = performance.now();
      await send();
      latenciesMs[finished++] = performance.now() - t0;
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  return latenciesMs;
}

function parseArgs(argv) {
  const [kind, url, ...counts] = argv;
  if (!KINDS.includes(kind) || !url || counts.length !== 3) {
    throw new Error(`usage: run-client.mjs <${KINDS.join('|')}> <url> <concurrency> <requests> <warmup>`);
  }
  const [concurrency, requests, warmup] = counts.map(Number);
  if (
    ![concurrency, requests].every((n) => Number.isInteger(n) && n >= 1) ||
    !(Number.isInteger(warmup) && warmup >= 0)
  ) {
    throw new Error(`concurrency and requests must be integers ≥ 1, warmup ≥ 0; got ${counts.join(' ')}`);
  }
  return { kind, url, concurrency, requests, warmup };
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const { kind, url, concurrency, requests, warmup } = options;
  let client;
  try {
    const { createClient } = await import(`./kinds/${kind}.mjs`);
    client = await createClient({ url, concurrency });
  } catch (error) {
    if (error.code !== 'CLIENT_UNAVAILABLE') throw error;
    process.stdout.write(`${JSON.stringify({ kind, unavailable: error.message })}\n`);
    process.exit(EXIT_UNAVAILABLE);
  }

  await runPhase(client.send, concurrency, warmup);
  const cpuBefore = process.cpuUsage();
  const t0 = performance.now();
  const latenciesMs = await runPhase(client.send, concurrency, requests);
  const elapsedMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpuBefore);

  latenciesMs.sort();
  const report = {
    kind,
    concurrency,
    requests,
    warmup,
    connectionLimit: client.connectionLimit,
    reqPerSec: (requests / elapsedMs) * 1000,
    p50Us: percentile(latenciesMs, 0.5) * 1000,
    p99Us: percentile(latenciesMs, 0.99) * 1000,
    cpuUsPerReq: (cpu.user + cpu.system) / requests,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
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
