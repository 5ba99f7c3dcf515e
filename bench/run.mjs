// `npm run bench`: AniLink against undici.request, fetch, axios and a bare reqwest client, on
// one fixed workload, against a lean local server. A benchmark, not a test: it prints a
// table and writes bench/results/latest.json and latest.md. See bench/README.md.
//
//   node bench/run.mjs [--quick] [--rounds N] [--clients a,b] [--concurrency 1,32] [--no-memory]
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { EXIT_UNAVAILABLE, KINDS as NODE_KINDS } from './clients/run-client.mjs';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const REPO_DIR = join(BENCH_DIR, '..');
const TARGET_DIR = join(BENCH_DIR, 'target');
const SERVER_BIN = join(TARGET_DIR, 'release', 'bench-server');
const FLOOR_BIN = join(TARGET_DIR, 'release', 'reqwest-floor');
const CLIENT_SCRIPT = join(BENCH_DIR, 'clients', 'run-client.mjs');
const RESULTS_DIR = join(BENCH_DIR, 'results');

const FLOOR_KIND = 'reqwest';
const ALL_KINDS = [...NODE_KINDS, FLOOR_KIND];
const OURS = 'anilink';
const BASELINE = 'undici';
const METRICS = ['reqPerSec', 'p50Us', 'p99Us', 'cpuUsPerReq', 'peakRssBytes'];

/** The memory scenario: this many requests in flight at once, each held by the server. */
const MEMORY_IN_FLIGHT = 10_000;
const MEMORY_HOLD_MS = 1_000;
/** A child that takes longer than this is stuck, not slow. */
const CHILD_TIMEOUT_MS = 300_000;

/**
 * Request counts, sized so a full run stays near 5 minutes on 2 cores. Warm-up is at least 4
 * requests per connection so every socket is open and every code path warm before the timed
 * phase. `--quick` leaves fetch and axios out of the memory scenario: opening 10,000 sockets
 * takes them 5–15 s each.
 */
const PROFILES = {
  full: {
    rounds: 5,
    requestsAtOne: 3_000,
    requests: 8_000,
    warmup: 1_000,
    ceiling: { concurrency: 64, requests: 40_000, warmup: 2_000 },
    memoryRounds: 2,
    memorySkips: [],
  },
  quick: {
    rounds: 2,
    requestsAtOne: 1_000,
    requests: 2_000,
    warmup: 300,
    ceiling: { concurrency: 64, requests: 10_000, warmup: 1_000 },
    memoryRounds: 1,
    memorySkips: ['fetch', 'axios'],
  },
};

/** The issue's targets: AniLink's median per-round ratio to another client, same run. */
function targetsFor(concurrencies) {
  const targets = [];
  for (const concurrency of [32, 256]) {
    targets.push({ scenario: 'throughput', concurrency, metric: 'reqPerSec', versus: BASELINE, atLeast: 1.2 });
    targets.push({ scenario: 'throughput', concurrency, metric: 'reqPerSec', versus: 'axios', atLeast: 6 });
  }
  for (const concurrency of concurrencies) {
    targets.push({ scenario: 'throughput', concurrency, metric: 'cpuUsPerReq', versus: BASELINE, atMost: 0.8 });
    targets.push({ scenario: 'throughput', concurrency, metric: 'cpuUsPerReq', versus: FLOOR_KIND, atMost: 1.5 });
  }
  targets.push({ scenario: 'throughput', concurrency: 1, metric: 'p50Us', versus: BASELINE, atMost: 1 });
  targets.push({
    scenario: 'memory',
    concurrency: MEMORY_IN_FLIGHT,
    metric: 'peakRssBytes',
    versus: BASELINE,
    atMost: 1,
  });
  return targets;
}

function parseCli(argv) {
  const options = { quick: false, rounds: undefined, clients: ALL_KINDS, concurrencies: [1, 32, 256], memory: true };
  const list = (flag, value) => {
    if (!value) throw new Error(`${flag} needs a comma-separated list`);
    return value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    if (flag === '--quick') options.quick = true;
    else if (flag === '--no-memory') options.memory = false;
    else if (flag === '--rounds') {
      options.rounds = Number(argv[++i]);
      if (!Number.isInteger(options.rounds) || options.rounds < 1) throw new Error('--rounds needs an integer ≥ 1');
    } else if (flag === '--clients') {
      options.clients = list(flag, argv[++i]);
      const unknown = options.clients.filter((kind) => !ALL_KINDS.includes(kind));
      if (unknown.length > 0)
        throw new Error(`unknown client(s) ${unknown.join(', ')}; known: ${ALL_KINDS.join(', ')}`);
    } else if (flag === '--concurrency') {
      options.concurrencies = list(flag, argv[++i]).map(Number);
      if (!options.concurrencies.every((c) => Number.isInteger(c) && c >= 1))
        throw new Error('--concurrency needs integers ≥ 1');
    } else {
      throw new Error(
        `unknown option ${flag}\nusage: node bench/run.mjs [--quick] [--rounds N] [--clients ${ALL_KINDS.join(',')}] [--concurrency 1,32,256] [--no-memory]`,
      );
    }
  }
  const profile = PROFILES[options.quick ? 'quick' : 'full'];
  return { ...options, profile, rounds: options.rounds ?? profile.rounds };
}

const log = (line) => process.stderr.write(`${line}\n`);

/** Builds (or refreshes: cargo does nothing when they are current) the two Rust binaries. */
function buildBinaries() {
  for (const project of ['server', 'reqwest-floor']) {
    const manifest = join(BENCH_DIR, project, 'Cargo.toml');
    const build = spawnSync(
      'cargo',
      ['build', '--release', '--quiet', '--manifest-path', manifest, '--target-dir', TARGET_DIR],
      {
        cwd: REPO_DIR,
        stdio: 'inherit',
      },
    );
    if (build.error?.code === 'ENOENT' && existsSync(SERVER_BIN) && existsSync(FLOOR_BIN)) {
      log('cargo not found: using the binaries already in bench/target/release');
      return;
    }
    if (build.status !== 0)
      throw new Error(`cargo build of bench/${project} failed (${build.error?.message ?? `exit ${build.status}`})`);
  }
}

/**
 * Starts bench-server with stdin as its control channel (closing stdin stops it, so it dies
 * with this process), and returns its URL and a way to read its counters.
 */
async function startServer(extraArgs = []) {
  const child = spawn(SERVER_BIN, ['--control-stdin', ...extraArgs], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const waiting = [];
  let failure;
  const fail = (error) => {
    failure = error;
    for (const { reject } of waiting.splice(0)) reject(error);
  };
  child.on('error', fail);
  child.on('exit', (code, signal) => fail(new Error(`bench-server exited (${signal ?? `code ${code}`})`)));
  lines.on('line', (line) => waiting.shift()?.resolve(line));
  const nextLine = () =>
    failure ? Promise.reject(failure) : new Promise((resolve, reject) => waiting.push({ resolve, reject }));

  const listening = /^listening (\d+)$/.exec(await nextLine());
  if (!listening) throw new Error('bench-server did not announce its port');
  return {
    url: `http://127.0.0.1:${listening[1]}/`,
    /** @returns {Promise<{connections: number, requests: number, cpuUs: number, peakRssBytes: number}>} */
    async stats() {
      const answer = nextLine();
      child.stdin.write('stats\n');
      return JSON.parse((await answer).replace(/^stats /, ''));
    },
    stop() {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      child.removeAllListeners('exit');
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin.end();
      return exited;
    },
  };
}

/** Runs a child to completion, returning its exit code and output. */
function runChild(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      stderr += `\nkilled after ${CHILD_TIMEOUT_MS / 1000} s`;
      child.kill('SIGKILL');
    }, CHILD_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: `${stderr}${error.message}` });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * One client run in a fresh process, with the server's own cost over the same period.
 * @returns {Promise<object>} the client's report plus `connectionsOpened`, `serverCpuUsPerReq`
 *   and `serverLoad`; or `{ unavailable }` / `{ error }`
 */
async function measure(server, kind, concurrency, requests, warmup) {
  const counts = [concurrency, requests, warmup].map(String);
  const [command, args] =
    kind === FLOOR_KIND
      ? [FLOOR_BIN, [server.url, ...counts]]
      : [process.execPath, [CLIENT_SCRIPT, kind, server.url, ...counts]];
  const before = await server.stats();
  const { code, stdout, stderr } = await runChild(command, args);
  const after = await server.stats();
  let report;
  try {
    report = JSON.parse(stdout.trim().split('\n').at(-1));
  } catch {
    report = undefined;
  }
  if (code === EXIT_UNAVAILABLE && report?.unavailable) return { unavailable: report.unavailable };
  if (code !== 0 || !report) return { error: (stderr.trim() || `exit code ${code}`).split('\n').slice(-5).join('\n') };
  const served = after.requests - before.requests;
  const serverCpuUsPerReq = served > 0 ? (after.cpuUs - before.cpuUs) / served : null;
  return {
    ...report,
    connectionsOpened: after.connections - before.connections,
    serverCpuUsPerReq,
    // The share of one core the server needed to keep up with this client's rate.
    serverLoad: serverCpuUsPerReq === null ? null : (serverCpuUsPerReq * report.reqPerSec) / 1e6,
  };
}

const rotate = (items, by) => items.map((_, i) => items[(i + by) % items.length]);

function median(values) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * Runs every client `rounds` times, rotating the order each round, each in a fresh process.
 * Clients found unavailable are recorded in `unavailable` and skipped from then on.
 */
async function runRounds({ server, scenario, concurrency, kinds, rounds, requests, warmup, unavailable }) {
  const runs = [];
  for (let round = 0; round < rounds; round += 1) {
    for (const kind of rotate(kinds, round)) {
      if (unavailable[kind]) continue;
      const result = await measure(server, kind, concurrency, requests, warmup);
      if (result.unavailable) {
        unavailable[kind] = result.unavailable;
        log(`  ${kind}: unavailable, skipped for the rest of the run: ${result.unavailable}`);
        continue;
      }
      runs.push({ scenario, concurrency, round, kind, ...result });
      const label = `${scenario} ${concurrency} in flight, round ${round + 1}/${rounds}, ${kind}`;
      log(
        result.error
          ? `  ${label}: FAILED ${result.error}`
          : `  ${label}: ${fmtInt(result.reqPerSec)} req/s, p50 ${fmtInt(result.p50Us)} µs, CPU ${result.cpuUsPerReq.toFixed(1)} µs/req`,
      );
    }
  }
  return runs;
}

/** Median of the per-round ratios `kind / versus` of one metric (rounds where both ran). */
function medianRatio(runs, scenario, concurrency, kind, versus, metric) {
  const ok = runs.filter((run) => run.scenario === scenario && run.concurrency === concurrency && !run.error);
  const ratios = [];
  for (const run of ok.filter((r) => r.kind === kind)) {
    const base = ok.find((r) => r.kind === versus && r.round === run.round);
    if (base && base[metric] > 0) ratios.push(run[metric] / base[metric]);
  }
  return median(ratios);
}

/** Per (scenario, concurrency, client): medians over rounds and median ratios to undici. */
function summarize(runs) {
  const groups = new Map();
  for (const run of runs.filter((r) => !r.error)) {
    const key = `${run.scenario}|${run.concurrency}|${run.kind}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(run);
  }
  return [...groups.values()].map((group) => {
    const { scenario, concurrency, kind, connectionLimit } = group[0];
    const medians = {};
    const ratioToBaseline = {};
    for (const metric of [...METRICS, 'connectionsOpened', 'serverCpuUsPerReq', 'serverLoad']) {
      medians[metric] = median(group.map((run) => run[metric]).filter((v) => typeof v === 'number'));
    }
    for (const metric of METRICS)
      ratioToBaseline[metric] = medianRatio(runs, scenario, concurrency, kind, BASELINE, metric);
    return { scenario, concurrency, kind, connectionLimit, rounds: group.length, medians, ratioToBaseline };
  });
}

function evaluateTargets(targets, runs, unavailable) {
  return targets.map((target) => {
    const ratio = medianRatio(runs, target.scenario, target.concurrency, OURS, target.versus, target.metric);
    const bound = target.atLeast ?? target.atMost;
    const description = `${METRIC_LABELS[target.metric]} ${target.scenario === 'memory' ? `with ${fmtInt(target.concurrency)}` : `at ${target.concurrency}`} in flight ${target.atLeast ? '≥' : '≤'} ${bound} × ${target.versus}`;
    let status;
    if (ratio !== null) status = (target.atLeast ? ratio >= target.atLeast : ratio <= target.atMost) ? 'met' : 'missed';
    else
      status = `not measured${unavailable[OURS] ? ' (anilink unavailable)' : unavailable[target.versus] ? ` (${target.versus} unavailable)` : ''}`;
    return { ...target, description, ratio, status };
  });
}

const METRIC_LABELS = {
  reqPerSec: 'req/s',
  p50Us: 'p50 latency',
  p99Us: 'p99 latency',
  cpuUsPerReq: 'CPU per request',
  peakRssBytes: 'peak RSS',
};

function fmtInt(value) {
  return value === null || value === undefined ? '–' : Math.round(value).toLocaleString('en-US');
}
const fmtMiB = (bytes) => (bytes === null ? '–' : (bytes / 2 ** 20).toFixed(1));
const fmtRatio = (ratio) => (ratio === null ? '' : ` (×${ratio.toFixed(2)})`);
const fmtPercent = (share) => (share === null ? '–' : `${Math.round(share * 100)}%`);

function markdownTable(header, rows) {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
}

function renderMarkdown(result) {
  const { machine, options, ceiling, summary, targets, unavailable, failures } = result;
  const out = [];
  out.push(`# AniLink benchmark (${result.generatedAt})`, '');
  out.push(
    `${machine.cpuModel}, ${machine.cores} cores, ${machine.platform}; Node ${machine.node}, undici ${machine.undici}, axios ${machine.axios}. ` +
      `${options.rounds} round(s)${options.quick ? ' (--quick)' : ''}, client order rotated each round, every run in a fresh process. ` +
      'Figures are medians over rounds; (×r) is the median over rounds of the ratio to undici.request in the same round.',
    '',
  );
  out.push('## Server ceiling', '');
  if (ceiling.error) out.push(`Probe failed: ${ceiling.error}`, '');
  else {
    out.push(
      `bench-server (one thread) against the reqwest floor client with ${ceiling.concurrency} in flight: **${fmtInt(ceiling.reqPerSec)} req/s**, ` +
        `the server using ${ceiling.serverCpuUsPerReq.toFixed(1)} µs CPU per request (${fmtPercent(ceiling.serverLoad)} of one core). ` +
        `At that cost one core serves about **${fmtInt(1e6 / ceiling.serverCpuUsPerReq)} req/s**. ` +
        'The "server load" column below is the share of one core the server needed for each client: below 100% the server was not the bottleneck.',
      '',
    );
  }
  out.push('## Throughput, latency, CPU, memory', '');
  out.push(
    `Workload: POST of a ${result.workload.requestBytes}-byte GraphQL query, answered with a ${result.workload.responseBytes}-byte AniList-shaped JSON body ` +
      'and rate-limit headers; every client reads and JSON-parses the body (the reqwest floor reads it as text). ' +
      'Connection allowance: anilink and undici are capped at one socket per request in flight; fetch, axios and reqwest have uncapped keep-alive pools, ' +
      'which with that many requests in flight open at most as many sockets. "conns" is what the server accepted per run, warm-up included.',
    '',
  );
  const throughputRows = summary
    .filter((row) => row.scenario === 'throughput')
    .map(({ kind, concurrency, medians: m, ratioToBaseline: r }) => [
      kind === OURS ? `**${kind}**` : kind,
      concurrency,
      `${fmtInt(m.reqPerSec)}${fmtRatio(r.reqPerSec)}`,
      `${fmtInt(m.p50Us)}${fmtRatio(r.p50Us)}`,
      `${fmtInt(m.p99Us)}${fmtRatio(r.p99Us)}`,
      `${m.cpuUsPerReq.toFixed(1)}${fmtRatio(r.cpuUsPerReq)}`,
      `${fmtMiB(m.peakRssBytes)}${fmtRatio(r.peakRssBytes)}`,
      fmtInt(m.connectionsOpened),
      fmtPercent(m.serverLoad),
    ]);
  out.push(
    markdownTable(
      ['client', 'in flight', 'req/s', 'p50 µs', 'p99 µs', 'client CPU µs/req', 'peak RSS MiB', 'conns', 'server load'],
      throughputRows,
    ),
    '',
  );
  const memoryRows = summary
    .filter((row) => row.scenario === 'memory')
    .map(({ kind, medians: m, ratioToBaseline: r }) => [
      kind === OURS ? `**${kind}**` : kind,
      `${fmtMiB(m.peakRssBytes)}${fmtRatio(r.peakRssBytes)}`,
      fmtInt(m.connectionsOpened),
      ((MEMORY_IN_FLIGHT / m.reqPerSec) * 1000).toFixed(0),
      `${m.cpuUsPerReq.toFixed(1)}${fmtRatio(r.cpuUsPerReq)}`,
    ]);
  if (memoryRows.length > 0) {
    out.push(
      `## Memory: ${fmtInt(MEMORY_IN_FLIGHT)} requests in flight (the server holds each response ${MEMORY_HOLD_MS} ms)`,
      '',
    );
    out.push(
      `Each client may open ${fmtInt(MEMORY_IN_FLIGHT)} sockets and fires every request at once, without warm-up.`,
      '',
    );
    out.push(markdownTable(['client', 'peak RSS MiB', 'conns', `all done in ms`, 'client CPU µs/req'], memoryRows), '');
  }
  out.push('## Targets (AniLink at defaults, same run)', '');
  out.push(
    markdownTable(
      ['target', 'measured ratio', 'status'],
      targets.map((t) => [t.description, t.ratio === null ? '–' : `×${t.ratio.toFixed(2)}`, t.status]),
    ),
    '',
  );
  for (const [kind, reason] of Object.entries(unavailable)) out.push(`- ${kind} not measured: ${reason}`);
  for (const failure of failures)
    out.push(
      `- FAILED ${failure.scenario} ${failure.concurrency} in flight, round ${failure.round + 1}, ${failure.kind}: ${failure.error.replaceAll('\n', ' ')}`,
    );
  return `${out.join('\n').trimEnd()}\n`;
}

function packageVersion(name) {
  try {
    return JSON.parse(readFileSync(join(REPO_DIR, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return 'not installed';
  }
}

async function main() {
  const options = parseCli(process.argv.slice(2));
  const { profile } = options;
  const startedAt = Date.now();
  log('building the benchmark binaries (cargo build --release, bench/target)…');
  buildBinaries();

  const unavailable = {};
  const runs = [];
  const server = await startServer();
  let ceiling;
  try {
    log(`server ceiling: reqwest floor, ${profile.ceiling.concurrency} in flight…`);
    ceiling = await measure(
      server,
      FLOOR_KIND,
      profile.ceiling.concurrency,
      profile.ceiling.requests,
      profile.ceiling.warmup,
    );
    if (!ceiling.error) {
      log(
        `  ${fmtInt(ceiling.reqPerSec)} req/s; server ${ceiling.serverCpuUsPerReq.toFixed(1)} µs CPU/req, one core ≈ ${fmtInt(1e6 / ceiling.serverCpuUsPerReq)} req/s`,
      );
    }
    for (const concurrency of options.concurrencies) {
      const requests = concurrency === 1 ? profile.requestsAtOne : profile.requests;
      const warmup = Math.max(profile.warmup, 4 * concurrency);
      log(
        `throughput, ${concurrency} in flight: ${options.rounds} round(s) of ${fmtInt(requests)} requests (+${fmtInt(warmup)} warm-up)…`,
      );
      runs.push(
        ...(await runRounds({
          server,
          scenario: 'throughput',
          concurrency,
          kinds: options.clients,
          rounds: options.rounds,
          requests,
          warmup,
          unavailable,
        })),
      );
    }
  } finally {
    await server.stop();
  }

  if (options.memory) {
    const holdingServer = await startServer(['--hold-ms', String(MEMORY_HOLD_MS)]);
    try {
      log(
        `memory, ${fmtInt(MEMORY_IN_FLIGHT)} in flight, server holding each response ${MEMORY_HOLD_MS} ms: ${profile.memoryRounds} round(s)…`,
      );
      runs.push(
        ...(await runRounds({
          server: holdingServer,
          scenario: 'memory',
          concurrency: MEMORY_IN_FLIGHT,
          kinds: options.clients.filter((kind) => !profile.memorySkips.includes(kind)),
          rounds: profile.memoryRounds,
          requests: MEMORY_IN_FLIGHT,
          warmup: 0,
          unavailable,
        })),
      );
    } finally {
      await holdingServer.stop();
    }
  }

  const concurrencies = options.concurrencies;
  const result = {
    generatedAt: new Date().toISOString(),
    durationSec: Math.round((Date.now() - startedAt) / 1000),
    machine: {
      cpuModel: os.cpus()[0]?.model ?? 'unknown CPU',
      cores: os.availableParallelism(),
      platform: `${os.type()} ${os.release()}`,
      node: process.version,
      undici: packageVersion('undici'),
      axios: packageVersion('axios'),
    },
    options: {
      quick: options.quick,
      rounds: options.rounds,
      memoryRounds: options.memory ? profile.memoryRounds : 0,
      clients: options.clients,
      concurrencies,
    },
    workload: {
      requestBytes: readFileSync(join(BENCH_DIR, 'workload', 'graphql-request.json')).length,
      responseBytes: readFileSync(join(BENCH_DIR, 'workload', 'media-response.json')).length,
    },
    ceiling: { concurrency: profile.ceiling.concurrency, ...ceiling },
    summary: summarize(runs),
    targets: evaluateTargets(targetsFor(concurrencies), runs, unavailable),
    unavailable,
    failures: runs.filter((run) => run.error),
    runs,
  };
  const markdown = renderMarkdown(result);
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, 'latest.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(RESULTS_DIR, 'latest.md'), markdown);
  process.stdout.write(`\n${markdown}\n`);
  log(`written ${relative(process.cwd(), join(RESULTS_DIR, 'latest.json'))} and latest.md in ${result.durationSec} s`);
}

main().catch((error) => {
  log(`bench: ${error.stack ?? error}`);
  process.exitCode = 1;
});
