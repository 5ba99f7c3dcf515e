// `npm run bench`: AniLink against undici.request, fetch, axios, a same-work napi floor and a
// bare reqwest client, on two workloads (`media`, `custom`), against a lean local server, in
// time-bounded steady-state phases, over HTTP and over HTTPS (a test CA made for the run), with
// AniLink also at its default pool bounds; plus calls on new connections (full and resumed TLS
// handshakes), a 10,000-in-flight memory scenario and an idle scenario. A benchmark, not a
// test: it prints a report and writes bench/results/latest.json and latest.md (what goes into
// bench/RESULTS.md). See bench/README.md.
//
//   node bench/run.mjs [--plan] [--quick] [--seconds N] [--warmup-seconds N] [--rounds N] [--clients a,b]
//                      [--workload media,custom] [--concurrency 1,32] [--no-http] [--no-https] [--no-memory] [--no-idle]
//   node bench/run.mjs [options] --only new-connection,full-handshake,new-connection-http
//   node bench/run.mjs --warmup-probe [--seconds N] [--clients a,b] [--concurrency 1,32]
//   node bench/run.mjs --startup
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { dirname, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { capturedRequestFile } from './clients/kinds/napi-floor.mjs';
import { EXIT_UNAVAILABLE, FRESH_KINDS, KINDS as NODE_KINDS } from './clients/run-client.mjs';
import { WORKLOADS } from './clients/workload.mjs';
import { measureStartup, STARTUP_TARGET_MS } from './startup.mjs';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const REPO_DIR = join(BENCH_DIR, '..');
const TARGET_DIR = join(BENCH_DIR, 'target');
const SERVER_BIN = join(TARGET_DIR, 'release', 'bench-server');
const NETWORK_FLOOR_BIN = join(TARGET_DIR, 'release', 'reqwest-floor');
const CLIENT_SCRIPT = join(BENCH_DIR, 'clients', 'run-client.mjs');
const IDLE_SCRIPT = join(BENCH_DIR, 'clients', 'idle-client.mjs');
const RESULTS_DIR = join(BENCH_DIR, 'results');
/** The Rust projects run.mjs builds, into bench/target. */
const RUST_PROJECTS = ['server', 'reqwest-floor', 'napi-floor'];

/** The network-only reference: HTTP in Rust, no JSON, no V8. */
const NETWORK_FLOOR = 'reqwest';
/** The same-work floor: AniLink's bytes over hyper 1, one V8 hand-off per response. */
const SAME_WORK_FLOOR = 'napi-floor';
/**
 * The same work on the JavaScript thread alone: what the same-work floor costs above it is the
 * thread hand-off. Run where that hand-off is most of a call (1 in flight) and where the floor
 * target is (32); at 256 one thread serves both the sockets and JavaScript, and the floor's
 * two threads pull ahead (24,750 vs 18,801 req/s in one pair on the custom workload).
 */
const ONE_THREAD_FLOOR = 'napi-inline';
const ONE_THREAD_FLOOR_CONCURRENCIES = [1, 32];
const ALL_KINDS = [...NODE_KINDS, NETWORK_FLOOR];
const OURS = 'anilink';
/** AniLink at its default pool bounds, beside the capped run (issue 37). */
const OURS_AT_DEFAULTS = 'anilink-defaults';
/** Run only when named in `--clients`: AniLink with a diagnostics_channel subscriber (what one costs). */
const OPT_IN_KINDS = ['anilink-observed'];
const BASELINE = 'undici';
/** The default pool's `maxSockets`: what a run at default bounds needs at most. */
const DEFAULT_MAX_SOCKETS = 20;
/** Connections a run at default bounds may open beyond min(in flight, maxSockets) (issue 37). */
const CHURN_ALLOWANCE = 2;
/** Who runs over HTTPS, and on a new connection per call (at HANDSHAKE_CONCURRENCY in flight). */
const HTTPS_KINDS = [OURS, OURS_AT_DEFAULTS, BASELINE];
const HANDSHAKE_CONCURRENCY = 1;
/**
 * The scenarios on a new connection per call: over HTTPS against a server that resumes TLS
 * sessions (as real ones do: a client's later handshakes are resumed ones) and against one that
 * refuses to (every handshake a full one), and, for AniLink alone, over plain HTTP: what a new
 * connection costs without TLS, taken off both to compare the handshakes themselves.
 */
const HANDSHAKE_SCENARIOS = ['new-connection', 'full-handshake', 'new-connection-http'];
const TCP_ONLY_SCENARIO = 'new-connection-http';
const METRICS = ['reqPerSec', 'p50Us', 'p99Us', 'cpuUsPerReq', 'peakRssBytes'];
const ALL_WORKLOADS = Object.keys(WORKLOADS);
/** What `--only` selects from: the scenarios of a run. */
const SCENARIOS = ['throughput', 'https', ...HANDSHAKE_SCENARIOS, 'memory', 'idle'];
/**
 * Which clients run which workload, to keep the full run near 25 minutes: fetch, axios and
 * the reqwest reference only on `media`, the reference only at 32 in flight (they are there
 * for context; the targets compare with undici and the same-work floor, which run everywhere).
 */
const WORKLOAD_KINDS = {
  media: ALL_KINDS,
  custom: [OURS, OURS_AT_DEFAULTS, ...OPT_IN_KINDS, BASELINE, SAME_WORK_FLOOR, ONE_THREAD_FLOOR],
};
const NETWORK_FLOOR_CONCURRENCY = 32;

/**
 * The memory scenario: this many requests in flight at once. The server answers none until
 * all have arrived (or MEMORY_HOLD_MAX_MS has passed): with a fixed delay per response, a
 * client that opens sockets slowly got its first answers back before its last requests went
 * out, and its peak was taken with fewer in flight than the scenario's name says.
 */
const MEMORY_IN_FLIGHT = 10_000;
const MEMORY_HOLD_MAX_MS = 30_000;
/**
 * Every memory run starts with this many calls the server answers at once (`pass`), as a client
 * that has been running has made. AniLink sends one call at a time while a scope has no quota
 * reading (decision D39 a), and past AniList's degraded limit of 30 in a window one at a time
 * until an answer has proven the announced quota (D42): with fewer, its next request waited
 * the whole hold (30 s, its default timeout) and the run failed. The same for every client; not
 * timed.
 */
const MEMORY_WARMUP_CALLS = 40;
/**
 * What one memory run takes on 2 cores, for the ETA (opening 10,000 sockets; measured with
 * the machine busy, from 2 s for anilink to 18 s for undici; fetch and axios 5–15 s idle).
 */
const MEMORY_RUN_SEC = { anilink: 4, undici: 10, fetch: 15, axios: 15, reqwest: 7 };
/** The idle scenario: clients that run it, and the calls each makes before idling. */
const IDLE_KINDS = [OURS, BASELINE];
const IDLE_CALLS = 5;
/**
 * Between `ready` and the counted period: at least IDLE_SETTLE_SECONDS, then until the process
 * has been quiet (no switch on any thread) for IDLE_QUIET_SECONDS, at most
 * IDLE_SETTLE_MAX_SECONDS. Any Node process that has just been busy runs one to three more
 * garbage collections some 8 s apart (V8's memory reducer; with `--no-memory-reducer` the same
 * AniLink process stays at 0 switches): those are V8's, not the client's, so they fall in the
 * settling period, whose switches and length are reported apart. A client that wakes up more
 * often than every IDLE_QUIET_SECONDS never gets a quiet stretch and is counted after the cap.
 */
const IDLE_SETTLE_SECONDS = 10;
const IDLE_QUIET_SECONDS = 9;
const IDLE_SETTLE_MAX_SECONDS = 40;
/** A child that takes longer than this is stuck, not slow. */
const CHILD_TIMEOUT_MS = 300_000;
/** Per run, on top of its phases: starting Node, importing the client, opening connections. */
const RUN_OVERHEAD_SEC = 0.7;

/**
 * Phase lengths. The warm-up (untimed) is where undici's per-request CPU stops falling on
 * this machine: `--warmup-probe` measured it (bench/README.md, "Warm-up"). Timed phases run
 * for a fixed time, so every client gets the same; `--quick` is a smoke run of about 3 minutes
 * that leaves fetch, axios and reqwest out of the memory scenario (opening 10,000 sockets is
 * slow for them).
 */
const PROFILES = {
  full: {
    rounds: 3,
    seconds: 10,
    warmupSeconds: 6,
    ceilingSeconds: 5,
    memoryRounds: 2,
    memorySkips: [],
  },
  quick: {
    rounds: 1,
    seconds: 2,
    warmupSeconds: 1,
    ceilingSeconds: 2,
    memoryRounds: 1,
    memorySkips: ['fetch', 'axios', 'reqwest'],
  },
};
const IDLE_SECONDS = 10;
const PROBE_SECONDS = 30;

/**
 * The issues' "Done when" criteria (17, and 37 for HTTPS, handshakes and default bounds):
 * AniLink's per-round ratio to another client (or to itself in another scenario), same run.
 * `everyRound`: the bound holds in every round, not only for the median.
 */
function targetsFor({ workloads }) {
  const targets = [];
  const ratio = (workload, concurrency, metric, versus, bound, scenario = 'throughput') =>
    targets.push({ scenario, workload, concurrency, metric, versus, ...bound });
  for (const workload of workloads) {
    for (const concurrency of [1, 32, 256]) {
      const everyRound = workload === 'media' && concurrency === 1;
      ratio(workload, concurrency, 'cpuUsPerReq', BASELINE, { atMost: 0.6, everyRound });
    }
    ratio(workload, 1, 'p50Us', BASELINE, { atMost: 0.8 });
    for (const concurrency of [32, 256]) ratio(workload, concurrency, 'reqPerSec', BASELINE, { atLeast: 1.5 });
    ratio(workload, 32, 'cpuUsPerReq', SAME_WORK_FLOOR, { atMost: 1.5 });
    for (const concurrency of [1, 32]) ratio(workload, concurrency, 'cpuUsPerReq', BASELINE, { atMost: 0.4 }, 'https');
  }
  ratio('media', HANDSHAKE_CONCURRENCY, 'cpuUsPerReq', BASELINE, { atMost: 0.3 }, 'new-connection');
  targets.push({ scenario: 'handshake', metric: 'cpuUsPerReq', atMost: 0.5 });
  targets.push({ scenario: 'connections', metric: 'excessConnections', atMost: CHURN_ALLOWANCE });
  targets.push({
    scenario: 'memory',
    workload: 'media',
    concurrency: MEMORY_IN_FLIGHT,
    metric: 'peakRssBytes',
    versus: BASELINE,
    atMost: 1,
  });
  targets.push({ scenario: 'idle', metric: 'wakeUpsPerSec', atMost: 0 });
  return targets;
}

const USAGE = `usage: node bench/run.mjs [--plan] [--quick] [--seconds N] [--warmup-seconds N] [--rounds N] [--clients ${ALL_KINDS.join(',')}] [--workload ${ALL_WORKLOADS.join(',')}] [--concurrency 1,32,256] [--no-http] [--no-https] [--no-memory] [--no-idle] [--only ${SCENARIOS.join(',')}]
       node bench/run.mjs --warmup-probe [--seconds N] [--clients undici,anilink] [--concurrency 1,32,256]
       node bench/run.mjs --startup`;

function parseCli(argv) {
  const options = {
    quick: false,
    probe: false,
    startup: false,
    rounds: undefined,
    seconds: undefined,
    warmupSeconds: undefined,
    clients: undefined,
    workloads: ALL_WORKLOADS,
    concurrencies: [1, 32, 256],
    http: true,
    https: true,
    memory: true,
    idle: true,
    only: SCENARIOS,
    planOnly: false,
  };
  const list = (flag, value, known) => {
    if (!value) throw new Error(`${flag} needs a comma-separated list\n${USAGE}`);
    const items = value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
    const unknown = known ? items.filter((item) => !known.includes(item)) : [];
    if (unknown.length > 0) throw new Error(`${flag}: unknown ${unknown.join(', ')}; known: ${known.join(', ')}`);
    return items;
  };
  const number = (flag, value, min) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min) throw new Error(`${flag} needs a number ≥ ${min}\n${USAGE}`);
    return n;
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    if (flag === '--quick') options.quick = true;
    else if (flag === '--warmup-probe') options.probe = true;
    else if (flag === '--startup') options.startup = true;
    else if (flag === '--plan') options.planOnly = true;
    else if (flag === '--no-memory') options.memory = false;
    else if (flag === '--no-http') options.http = false;
    else if (flag === '--no-https') options.https = false;
    else if (flag === '--no-idle') options.idle = false;
    else if (flag === '--rounds') {
      options.rounds = number(flag, argv[++i], 1);
      if (!Number.isInteger(options.rounds)) throw new Error('--rounds needs an integer ≥ 1');
    } else if (flag === '--seconds') options.seconds = number(flag, argv[++i], 0.1);
    else if (flag === '--warmup-seconds') options.warmupSeconds = number(flag, argv[++i], 0);
    else if (flag === '--clients') options.clients = list(flag, argv[++i], ALL_KINDS);
    else if (flag === '--only') options.only = list(flag, argv[++i], SCENARIOS);
    else if (flag === '--workload') options.workloads = list(flag, argv[++i], ALL_WORKLOADS);
    else if (flag === '--concurrency') {
      options.concurrencies = list(flag, argv[++i]).map(Number);
      if (!options.concurrencies.every((c) => Number.isInteger(c) && c >= 1))
        throw new Error('--concurrency needs integers ≥ 1');
    } else throw new Error(`unknown option ${flag}\n${USAGE}`);
  }
  const profile = PROFILES[options.quick ? 'quick' : 'full'];
  const seconds = options.seconds ?? (options.probe ? PROBE_SECONDS : profile.seconds);
  return {
    ...options,
    profile,
    clients:
      options.clients ?? (options.probe ? [BASELINE, OURS] : ALL_KINDS.filter((kind) => !OPT_IN_KINDS.includes(kind))),
    rounds: options.rounds ?? profile.rounds,
    seconds,
    // A shortened phase shortens its warm-up too, unless the warm-up is given.
    warmupSeconds: options.warmupSeconds ?? Math.min(profile.warmupSeconds, seconds),
  };
}

const log = (line) => process.stderr.write(`${line}\n`);

/**
 * Builds (or refreshes: cargo does nothing when they are current) the Rust binaries and the
 * napi floor that the chosen clients need; the server always.
 */
function buildBinaries(clients) {
  const needed = {
    server: true,
    'reqwest-floor': clients.includes(NETWORK_FLOOR),
    'napi-floor': clients.includes(SAME_WORK_FLOOR) || clients.includes(ONE_THREAD_FLOOR),
  };
  for (const project of RUST_PROJECTS.filter((name) => needed[name])) {
    const manifest = join(BENCH_DIR, project, 'Cargo.toml');
    const build = spawnSync(
      'cargo',
      ['build', '--release', '--quiet', '--manifest-path', manifest, '--target-dir', TARGET_DIR],
      { cwd: REPO_DIR, stdio: 'inherit' },
    );
    if (build.error?.code === 'ENOENT' && existsSync(SERVER_BIN)) {
      log('cargo not found: using the binaries already in bench/target/release');
      return;
    }
    if (build.status !== 0)
      throw new Error(`cargo build of bench/${project} failed (${build.error?.message ?? `exit ${build.status}`})`);
  }
}

/**
 * What one full run will do: every (workload, concurrency, client) for `rounds` rounds, then
 * the memory and idle scenarios, with an estimate of how long each part takes.
 */
function planRun(options) {
  const { profile } = options;
  const chosen = (kinds) => kinds.filter((kind) => options.clients.includes(kind));
  const only = (scenario) => options.only.includes(scenario);
  const throughput = (options.http && only('throughput') ? options.workloads : []).flatMap((workload) =>
    options.concurrencies.map((concurrency) => ({
      scenario: 'throughput',
      workload,
      concurrency,
      kinds: chosen(WORKLOAD_KINDS[workload]).filter(
        (kind) =>
          (kind !== NETWORK_FLOOR || concurrency === NETWORK_FLOOR_CONCURRENCY) &&
          (kind !== ONE_THREAD_FLOOR || ONE_THREAD_FLOOR_CONCURRENCIES.includes(concurrency)),
      ),
    })),
  );
  const https = (options.https && only('https') ? options.workloads : []).flatMap((workload) =>
    options.concurrencies.map((concurrency) => ({
      scenario: 'https',
      workload,
      concurrency,
      kinds: chosen(HTTPS_KINDS),
    })),
  );
  const handshakes = options.https
    ? HANDSHAKE_SCENARIOS.filter(only).map((scenario) => ({
        scenario,
        workload: 'media',
        concurrency: HANDSHAKE_CONCURRENCY,
        kinds: chosen(scenario === TCP_ONLY_SCENARIO ? [OURS] : FRESH_KINDS),
      }))
    : [];
  const perRunSec = options.warmupSeconds + options.seconds + RUN_OVERHEAD_SEC;
  const runs =
    [...throughput, ...https, ...handshakes].reduce((sum, { kinds }) => sum + kinds.length, 0) * options.rounds;
  const memoryKinds =
    options.memory && only('memory')
      ? options.clients.filter(
          (kind) =>
            ![SAME_WORK_FLOOR, ONE_THREAD_FLOOR, OURS_AT_DEFAULTS, ...OPT_IN_KINDS].includes(kind) &&
            !profile.memorySkips.includes(kind),
        )
      : [];
  const memorySec = profile.memoryRounds * memoryKinds.reduce((sum, kind) => sum + MEMORY_RUN_SEC[kind], 0);
  const idleKinds = options.idle && only('idle') ? IDLE_KINDS.filter((kind) => options.clients.includes(kind)) : [];
  const idleSec = idleKinds.length > 0 ? IDLE_SETTLE_MAX_SECONDS + IDLE_SECONDS + 3 : 0;
  const ceilingSec = options.clients.includes(NETWORK_FLOOR) ? profile.ceilingSeconds + 1 + RUN_OVERHEAD_SEC : 0;
  return {
    throughput,
    https,
    handshakes,
    memoryKinds,
    idleKinds,
    etaSec: ceilingSec + runs * perRunSec + memorySec + idleSec + 5,
    describe() {
      const lines = [
        `plan: ${options.rounds} round(s); every run ${options.warmupSeconds} s warm-up + ${options.seconds} s timed, in a fresh process`,
        ...[...throughput, ...https, ...handshakes].map(
          ({ scenario, workload, concurrency, kinds }) =>
            `  ${scenario === 'throughput' ? '' : `${scenario}, `}${workload}, ${concurrency} in flight: ${kinds.join(', ') || '(no client)'}`,
        ),
        `  memory (${fmtInt(MEMORY_IN_FLIGHT)} in flight): ${memoryKinds.join(', ') || 'skipped'}`,
        `  idle (${IDLE_SETTLE_SECONDS}–${IDLE_SETTLE_MAX_SECONDS} s settling + ${IDLE_SECONDS} s counted, side by side): ${idleKinds.join(', ') || 'skipped'}`,
        `  ${runs} timed runs; ETA about ${Math.ceil(this.etaSec / 60)} min (${new Date(Date.now() + this.etaSec * 1000).toISOString().slice(11, 16)} UTC)`,
      ];
      return lines.join('\n');
    },
  };
}

/**
 * Records the exact request AniLink sends for each workload (method, path, headers in order,
 * body), by running it once against a throwaway node:http server answering the workload's
 * fixture, into the file the napi floor reads (clients/kinds/napi-floor.mjs).
 * @returns {Promise<Record<string, {requestBytes: number, sameBodyAsOthers: boolean} | {error: string}>>}
 */
async function captureAnilinkRequests(workloads) {
  const fixtures = {
    '/': readFileSync(join(BENCH_DIR, 'workload', 'media-response.json')),
    '/custom': readFileSync(join(BENCH_DIR, 'workload', 'custom-response.json')),
  };
  let last;
  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      last = {
        method: request.method,
        path: request.url,
        headers: request.rawHeaders,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const body = fixtures[new URL(request.url, 'http://x').pathname];
      response.writeHead(body ? 200 : 404, {
        'content-type': 'application/json',
        'x-ratelimit-limit': '100000',
        'x-ratelimit-remaining': '99999',
      });
      response.end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/`;
  const captured = {};
  try {
    mkdirSync(RESULTS_DIR, { recursive: true });
    for (const workload of workloads) {
      last = undefined;
      const { code, stderr, stdout } = await runChild(process.execPath, [
        CLIENT_SCRIPT,
        OURS,
        url,
        workload,
        '1',
        '1',
        '0',
      ]);
      if (code !== 0 || !last) {
        const reason = code === EXIT_UNAVAILABLE ? JSON.parse(stdout).unavailable : stderr.trim().split('\n').at(-1);
        captured[workload] = { error: `could not capture AniLink's ${workload} request: ${reason}` };
        continue;
      }
      writeFileSync(capturedRequestFile(workload), `${JSON.stringify(last, null, 2)}\n`);
      captured[workload] = {
        requestBytes: Buffer.byteLength(last.body),
        sameBodyAsOthers: last.body === WORKLOADS[workload].requestBody,
      };
    }
  } finally {
    server.close();
  }
  return captured;
}

/**
 * A certificate authority and a certificate for 127.0.0.1 it issued, made with `openssl` into a
 * temporary directory for this run: what the HTTPS server presents and the clients trust
 * (through NODE_EXTRA_CA_CERTS, which AniLink, undici and Node all read).
 */
function makeTestCa() {
  const dir = mkdtempSync(join(os.tmpdir(), 'anilink-bench-ca-'));
  const curve = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2'];
  const openssl = (args) => {
    const run = spawnSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    if (run.status !== 0) throw new Error(`openssl ${args[0]} failed: ${run.error?.message ?? run.stderr}`);
  };
  openssl(['req', '-x509', ...curve, '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', '/CN=AniLink bench CA']);
  openssl([
    'req',
    '-x509',
    ...curve,
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-keyout',
    'server.key',
    '-out',
    'server.pem',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-addext',
    'basicConstraints=CA:FALSE',
  ]);
  return {
    caFile: join(dir, 'ca.pem'),
    serverArgs: ['--tls-cert', join(dir, 'server.pem'), '--tls-key', join(dir, 'server.key')],
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Starts bench-server with stdin as its control channel (closing stdin stops it, so it dies
 * with this process), and returns its URL and a way to read its counters. With TLS arguments
 * its URL is an https one.
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
  const scheme = extraArgs.includes('--tls-cert') ? 'https' : 'http';
  return {
    url: `${scheme}://127.0.0.1:${listening[1]}/`,
    /** @returns {Promise<{connections: number, requests: number, cpuUs: number, peakRssBytes: number, tlsHandshakes: number, tlsResumed: number}>} */
    async stats() {
      const answer = nextLine();
      child.stdin.write('stats\n');
      return JSON.parse((await answer).replace(/^stats /, ''));
    },
    /** Lets the next `count` requests through the server's hold at once, uncounted. */
    async pass(count) {
      const answer = nextLine();
      child.stdin.write(`pass ${count}\n`);
      if ((await answer) !== `pass ${count}`) throw new Error('bench-server did not acknowledge pass');
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
 * `amount` and `warmup` are run-client's: a request count (`"10000"`) or seconds (`"10s"`).
 * `fresh`: a new connection for every request.
 * @returns {Promise<object>} the client's report plus `connectionsOpened`, `serverCpuUsPerReq`,
 *   `serverLoad` and, over TLS, `resumedShare` (of the handshakes the server completed); or
 *   `{ unavailable }` / `{ error }`
 */
async function measure(server, { kind, workload, concurrency, amount, warmup, fresh = false }) {
  const phases = [String(concurrency), amount, warmup, ...(fresh ? ['fresh'] : [])];
  const [command, args] =
    kind === NETWORK_FLOOR
      ? [NETWORK_FLOOR_BIN, [new URL(WORKLOADS[workload].path, server.url).href, ...phases]]
      : [process.execPath, [CLIENT_SCRIPT, kind, server.url, workload, ...phases]];
  const before = await server.stats();
  const stealBefore = machineTicks();
  const { code, stdout, stderr } = await runChild(command, args);
  const stealAfter = machineTicks();
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
  const handshakes = after.tlsHandshakes - before.tlsHandshakes;
  return {
    ...report,
    connectionsOpened: after.connections - before.connections,
    resumedShare: handshakes > 0 ? (after.tlsResumed - before.tlsResumed) / handshakes : null,
    serverCpuUsPerReq,
    // The share of one core the server needed to keep up with this client's rate.
    serverLoad: serverCpuUsPerReq === null ? null : (serverCpuUsPerReq * report.reqPerSec) / 1e6,
    stealShare: stealShare(stealBefore, stealAfter),
  };
}

/**
 * The machine's CPU ticks so far, all and stolen (the first line of /proc/stat; steal is the
 * eighth field): time the hypervisor ran other guests while this one wanted the CPU. Null
 * where there is no /proc/stat.
 */
function machineTicks() {
  let line;
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  } catch {
    return null;
  }
  const ticks = line.split(/\s+/).slice(1).map(Number);
  return { total: ticks.reduce((sum, t) => sum + t, 0), steal: ticks[7] ?? 0 };
}

/** The share of the machine's CPU time stolen between two `machineTicks` readings. */
function stealShare(before, after) {
  if (!before || !after || after.total <= before.total) return null;
  return (after.steal - before.steal) / (after.total - before.total);
}

const rotate = (items, by) => items.map((_, i) => items[(i + by) % items.length]);

/**
 * Round `round`'s client order (from 0): the others rotated by one each round, and undici right
 * after AniLink in the first, third… round, right before it in the others. The targets are per-round ratios of
 * AniLink to undici: run back to back, both see the same minute of the machine (its load
 * drifts over minutes, and a plain rotation put them up to five runs apart).
 */
function roundOrder(kinds, round) {
  if (!kinds.includes(OURS) || !kinds.includes(BASELINE)) return rotate(kinds, round);
  const order = rotate(
    kinds.filter((kind) => kind !== BASELINE),
    round,
  );
  order.splice(order.indexOf(OURS) + (round % 2 === 0 ? 1 : 0), 0, BASELINE);
  return order;
}

/** Median, min and max of `values` (null when empty). */
function spread(values) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  return { median, min: sorted[0], max: sorted.at(-1) };
}

/**
 * Runs every client `rounds` times, rotating the order each round, each in a fresh process.
 * Clients found unavailable are recorded in `unavailable` and skipped from then on.
 */
async function runRounds({
  server,
  scenario,
  workload,
  concurrency,
  kinds,
  rounds,
  amount,
  warmup,
  unavailable,
  beforeEach,
  onlyRound,
}) {
  const runs = [];
  const fresh = HANDSHAKE_SCENARIOS.includes(scenario);
  const roundsToRun = onlyRound === undefined ? [...Array(rounds).keys()] : [onlyRound];
  for (const round of roundsToRun) {
    for (const kind of roundOrder(kinds, round)) {
      if (unavailable[kind]) continue;
      await beforeEach?.();
      const result = await measure(server, { kind, workload, concurrency, amount, warmup, fresh });
      if (result.unavailable) {
        unavailable[kind] = result.unavailable;
        log(`  ${kind}: unavailable, skipped for the rest of the run: ${result.unavailable}`);
        continue;
      }
      runs.push({ scenario, workload, concurrency, round, kind, ...result });
      const label = `${scenario} ${workload} ${concurrency} in flight, round ${round + 1}/${rounds}, ${kind}`;
      log(
        result.error
          ? `  ${label}: FAILED ${result.error}`
          : `  ${label}: ${fmtInt(result.reqPerSec)} req/s, p50 ${fmtInt(result.p50Us)} µs, CPU ${result.cpuUsPerReq.toFixed(1)} µs/req`,
      );
    }
  }
  return runs;
}

/** Context switches (voluntary + involuntary) summed over every thread of process `pid`. */
function contextSwitches(pid) {
  let total = 0;
  let threads = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let status;
    try {
      status = readFileSync(`/proc/${pid}/task/${task}/status`, 'utf8');
    } catch {
      continue; // the thread ended between the listing and the read
    }
    threads += 1;
    for (const match of status.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm)) total += Number(match[1]);
  }
  return { total, threads };
}

/** User + system CPU time of process `pid` so far, in ms (from /proc/<pid>/stat, clock ticks). */
function processCpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of stat(5), 12 and 13 after the command name.
  const ticks = Number(fields[11]) + Number(fields[12]);
  const ticksPerSecond = 100; // USER_HZ, 100 on every Linux this runs on
  return (ticks * 1000) / ticksPerSecond;
}

/** Wait as IDLE_SETTLE_SECONDS and IDLE_QUIET_SECONDS say; returns the seconds waited. */
async function settleUntilQuiet(pid) {
  let lastSwitches = contextSwitches(pid).total;
  let quietSeconds = 0;
  for (let second = 1; second <= IDLE_SETTLE_MAX_SECONDS; second += 1) {
    await sleep(1000);
    const switches = contextSwitches(pid).total;
    quietSeconds = switches === lastSwitches ? quietSeconds + 1 : 0;
    lastSwitches = switches;
    if (second >= IDLE_SETTLE_SECONDS && quietSeconds >= IDLE_QUIET_SECONDS) return second;
  }
  return IDLE_SETTLE_MAX_SECONDS;
}

/**
 * The idle scenario for one client: it makes a few calls, reports `ready`, and from then on
 * does nothing; this process counts its threads' context switches over `seconds`. Every time a
 * sleeping thread wakes up and sleeps again it makes one voluntary switch, so switches per
 * second bound the process's wake-ups from above.
 */
async function measureIdle(server, kind, seconds) {
  const child = spawn(process.execPath, [IDLE_SCRIPT, kind, server.url, String(IDLE_CALLS)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('close', resolve));
  try {
    const ready = await Promise.race([
      new Promise((resolve) =>
        createInterface({ input: child.stdout }).once('line', (line) => resolve(line === 'ready')),
      ),
      exited.then(() => false),
      // Unreferenced: once the race is decided this timer must not keep the benchmark alive.
      sleep(CHILD_TIMEOUT_MS, false, { ref: false }),
    ]);
    if (!ready) return { kind, error: (stderr.trim() || 'never became ready').split('\n').slice(-3).join('\n') };
    const settling = contextSwitches(child.pid);
    const settleSeconds = await settleUntilQuiet(child.pid);
    const before = contextSwitches(child.pid);
    const cpuBefore = processCpuMs(child.pid);
    await sleep(seconds * 1000);
    const after = contextSwitches(child.pid);
    const cpuAfter = processCpuMs(child.pid);
    return {
      scenario: 'idle',
      kind,
      seconds,
      threads: after.threads,
      settleSeconds,
      settleContextSwitches: before.total - settling.total,
      contextSwitches: after.total - before.total,
      wakeUpsPerSec: (after.total - before.total) / seconds,
      idleCpuMs: cpuAfter - cpuBefore,
    };
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

/**
 * `--warmup-probe`: each client once per concurrency, no warm-up, one long timed phase, and
 * its CPU µs/req second by second. A client is warm from the first second whose next three
 * seconds have a median within 10% of the median of the phase's second half (a median, so
 * that one second disturbed by another process on the machine does not count).
 */
async function warmupProbe(options) {
  const server = await startServer();
  const probes = [];
  const { seconds } = options;
  try {
    for (const concurrency of options.concurrencies) {
      for (const kind of options.clients) {
        log(`warm-up probe: ${kind}, ${concurrency} in flight, ${seconds} s…`);
        const run = await measure(server, { kind, workload: 'media', concurrency, amount: `${seconds}s`, warmup: '0' });
        if (run.error || run.unavailable) {
          log(`  ${run.error ?? run.unavailable}`);
          continue;
        }
        const costs = run.windows.map((w) => w.cpuUsPerReq);
        const steady = spread(costs.slice(Math.floor(costs.length / 2))).median;
        let warmAfter = 0;
        while (warmAfter < costs.length && spread(costs.slice(warmAfter, warmAfter + 3)).median > steady * 1.1)
          warmAfter += 1;
        probes.push({ kind, concurrency, steadyCpuUsPerReq: steady, warmAfterSec: warmAfter, windows: costs });
        log(
          `  steady ${steady.toFixed(1)} µs/req, warm after ${warmAfter} s: ${costs.map((c) => c.toFixed(0)).join(' ')}`,
        );
      }
    }
  } finally {
    await server.stop();
  }
  const markdown = [
    `# Warm-up probe (${new Date().toISOString()})`,
    '',
    `${machineLine(machineInfo())} Media workload, no warm-up, one ${seconds} s phase per client; CPU µs per request in each second.`,
    '',
    markdownTable(
      ['client', 'in flight', 'steady µs/req', 'warm after s', 'per second'],
      probes.map((p) => [
        p.kind,
        p.concurrency,
        p.steadyCpuUsPerReq.toFixed(1),
        p.warmAfterSec,
        p.windows.map((c) => c.toFixed(0)).join(' '),
      ]),
    ),
  ].join('\n');
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, 'warmup-probe.json'), `${JSON.stringify(probes, null, 2)}\n`);
  writeFileSync(join(RESULTS_DIR, 'warmup-probe.md'), `${markdown}\n`);
  process.stdout.write(`\n${markdown}\n`);
}

/** `--startup`: the start-up rows of bench/startup.mjs, printed and written beside the other results. */
function startupReport() {
  log('start-up: packing and installing the tarballs, then fresh processes per row…');
  const rows = measureStartup(REPO_DIR);
  const ms = (n) => n.toFixed(1);
  const markdown = [
    `# Start-up (${new Date().toISOString()})`,
    '',
    `${machineLine(machineInfo())} Milliseconds spent in \`require\`/\`import\` of the package in a fresh process, warm file cache; target ≤ ${STARTUP_TARGET_MS} ms for ours.`,
    '',
    markdownTable(
      ['package', 'loaded with', 'median ms', 'min–max ms', 'median CPU ms'],
      rows.map((r) => [r.subject, r.how, ms(r.medianMs), `${ms(r.minMs)}–${ms(r.maxMs)}`, ms(r.medianCpuMs)]),
    ),
  ].join('\n');
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, 'startup.json'), `${JSON.stringify(rows, null, 2)}\n`);
  writeFileSync(join(RESULTS_DIR, 'startup.md'), `${markdown}\n`);
  process.stdout.write(`\n${markdown}\n`);
}

/** Per-round ratios `kind / versus` of one metric (rounds where both ran), as a spread. */
function ratioSpread(runs, { scenario, workload, concurrency }, kind, versus, metric) {
  const ok = runs.filter(
    (run) => run.scenario === scenario && run.workload === workload && run.concurrency === concurrency && !run.error,
  );
  const ratios = [];
  for (const run of ok.filter((r) => r.kind === kind)) {
    const base = ok.find((r) => r.kind === versus && r.round === run.round);
    if (base && base[metric] > 0) ratios.push(run[metric] / base[metric]);
  }
  return spread(ratios);
}

/** Per (scenario, workload, concurrency, client): spreads over rounds and of the ratios to undici. */
function summarize(runs) {
  const groups = new Map();
  for (const run of runs.filter((r) => !r.error && r.scenario !== 'idle')) {
    const key = `${run.scenario}|${run.workload}|${run.concurrency}|${run.kind}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(run);
  }
  return [...groups.values()].map((group) => {
    const { scenario, workload, concurrency, kind, connectionLimit } = group[0];
    const values = {};
    const ratioToBaseline = {};
    for (const metric of [
      ...METRICS,
      'connectionsOpened',
      'resumedShare',
      'serverCpuUsPerReq',
      'serverLoad',
      'stealShare',
    ])
      values[metric] = spread(group.map((run) => run[metric]).filter((v) => typeof v === 'number'));
    for (const metric of METRICS) ratioToBaseline[metric] = ratioSpread(runs, group[0], kind, BASELINE, metric);
    return { scenario, workload, concurrency, kind, connectionLimit, rounds: group.length, values, ratioToBaseline };
  });
}

/**
 * The connections a run at default bounds opened beyond min(in flight, maxSockets), worst run
 * first (warm-up included: every run is a fresh process).
 */
function excessConnections(runs) {
  return runs
    .filter((run) => run.kind === OURS_AT_DEFAULTS && !run.error && typeof run.connectionsOpened === 'number')
    .map((run) => ({
      run,
      excess: run.connectionsOpened - Math.min(run.concurrency, DEFAULT_MAX_SOCKETS),
    }))
    .sort((a, b) => b.excess - a.excess);
}

/**
 * AniLink's resumed TLS handshake over its full one, per round: the CPU of a call on a new
 * connection over HTTPS (resumed, or full) less that of one over plain HTTP, as a spread.
 */
function handshakeRatioSpread(runs) {
  const cpuOf = (scenario, round) =>
    runs.find((run) => run.scenario === scenario && run.kind === OURS && run.round === round && !run.error)
      ?.cpuUsPerReq;
  const ratios = [];
  for (const tcp of runs.filter((run) => run.scenario === TCP_ONLY_SCENARIO && run.kind === OURS && !run.error)) {
    const resumed = cpuOf('new-connection', tcp.round);
    const full = cpuOf('full-handshake', tcp.round);
    if (resumed !== undefined && full > tcp.cpuUsPerReq)
      ratios.push((resumed - tcp.cpuUsPerReq) / (full - tcp.cpuUsPerReq));
  }
  return spread(ratios);
}

function evaluateTargets(targets, runs, unavailable) {
  return targets.map((target) => {
    const bound = target.atLeast ?? target.atMost;
    if (target.scenario === 'connections') {
      const [worst] = excessConnections(runs);
      return {
        ...target,
        description: `connections opened at default bounds ≤ min(in flight, ${DEFAULT_MAX_SOCKETS}) + ${bound}, every run (HTTP and HTTPS)`,
        measured: worst
          ? `+${worst.excess} at worst (${worst.run.scenario === 'https' ? 'HTTPS ' : ''}${worst.run.workload}, ${worst.run.concurrency} in flight: ${worst.run.connectionsOpened})`
          : '–',
        status: worst ? (worst.excess <= bound ? 'yes' : 'no') : 'not measured',
      };
    }
    if (target.scenario === 'idle') {
      const ours = runs.find((run) => run.scenario === 'idle' && run.kind === OURS && !run.error);
      const theirs = runs.find((run) => run.scenario === 'idle' && run.kind === BASELINE && !run.error);
      return {
        ...target,
        description: `idle process: ${bound} wake-ups/s (${IDLE_SECONDS} s, all threads, after settling)`,
        measured: ours
          ? `${ours.wakeUpsPerSec.toFixed(1)}/s (undici ${theirs ? `${theirs.wakeUpsPerSec.toFixed(1)}/s` : '–'})`
          : '–',
        status: ours ? (ours.wakeUpsPerSec <= bound ? 'yes' : 'no') : 'not measured',
      };
    }
    const ratio =
      target.scenario === 'handshake'
        ? handshakeRatioSpread(runs)
        : ratioSpread(runs, target, OURS, target.versus, target.metric);
    const description = describeRatioTarget(target, bound);
    // The median, or with `everyRound` the worst round.
    const judged = ratio && (target.everyRound ? (target.atLeast ? ratio.min : ratio.max) : ratio.median);
    let status;
    if (ratio !== null) status = (target.atLeast ? judged >= bound : judged <= bound) ? 'yes' : 'no';
    else
      status = `not measured${unavailable[OURS] ? ' (anilink unavailable)' : unavailable[target.versus] ? ` (${target.versus} unavailable)` : ''}`;
    return { ...target, description, ratio, measured: fmtRatioSpread(ratio), status };
  });
}

function describeRatioTarget(target, bound) {
  const relation = `${target.atLeast ? '≥' : '≤'} ${bound} ×`;
  const inFlight = `${target.concurrency} in flight`;
  switch (target.scenario) {
    case 'memory':
      return `${METRIC_LABELS[target.metric]} ${relation} ${target.versus}, with ${fmtInt(target.concurrency)} in flight`;
    case 'https':
      return `HTTPS: ${METRIC_LABELS[target.metric]} ${relation} ${target.versus}, ${target.workload}, ${inFlight}`;
    case 'new-connection':
      return `HTTPS, a new connection per call: ${METRIC_LABELS[target.metric]} ${relation} ${target.versus}`;
    case 'handshake':
      return `a resumed TLS handshake's CPU ${relation} a full one's (a call on a new connection over HTTPS, less one over HTTP)`;
    default:
      return `${METRIC_LABELS[target.metric]} ${relation} ${target.versus}, ${target.workload}, ${inFlight}${target.everyRound ? ', every round' : ''}`;
  }
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
const fmtMiB = (bytes) => (bytes / 2 ** 20).toFixed(1);
const fmtTenth = (value) => value.toFixed(1);
const fmtPercent = (share) => `${Math.round(share * 100)}%`;
const fmtStealPercent = (share) => `${(share * 100).toFixed(1)}%`;
/** `median [min–max]`, or the single value of one round. */
function fmtSpread(stats, format = fmtInt) {
  if (!stats) return '–';
  if (stats.min === stats.max) return format(stats.median);
  return `${format(stats.median)} [${format(stats.min)}–${format(stats.max)}]`;
}
const fmtRatioSpread = (stats) => (stats ? `×${fmtSpread(stats, (r) => r.toFixed(2))}` : '–');

function markdownTable(header, rows) {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
}

const clientLabel = (kind) => (kind === OURS ? `**${kind}**` : kind);

function machineInfo() {
  return {
    cpuModel: os.cpus()[0]?.model ?? 'unknown CPU',
    cores: os.availableParallelism(),
    platform: `${os.type()} ${os.release()}`,
    node: process.version,
    undici: packageVersion('undici'),
    axios: packageVersion('axios'),
  };
}

const machineLine = (machine) =>
  `${machine.cpuModel}, ${machine.cores} cores, ${machine.platform}; Node ${machine.node}, undici ${machine.undici}, axios ${machine.axios}.`;

function renderWorkload(out, result, workload, scenario) {
  const rows = result.summary.filter((row) => row.scenario === scenario && row.workload === workload);
  if (rows.length === 0) return;
  const captured = result.captured[workload];
  const spec = result.workloads[workload];
  out.push(`#### Workload \`${workload}\`${scenario === 'https' ? ' over HTTPS' : ''}`, '');
  out.push(
    `${workload === 'media' ? 'AniLink calls `query.media({ id: 1 })`' : 'AniLink calls `anilist.custom(query, { id: 1 })` with a five-field query'}` +
      `${captured?.requestBytes ? ` (a ${fmtInt(captured.requestBytes)}-byte request, which the napi floor replays)` : ''}; ` +
      `undici${workload === 'media' ? ', fetch and axios POST' : ' POSTs'} ${captured?.sameBodyAsOthers ? 'the same' : `a ${fmtInt(spec.requestBytes)}-byte`} body. ` +
      `The server answers ${fmtInt(spec.responseBytes)} bytes of JSON; every client parses it and checks the Media object.`,
    '',
  );
  out.push(
    markdownTable(
      [
        'client',
        'in flight',
        'req/s',
        'p50 µs',
        'p99 µs',
        'CPU µs/req',
        'peak RSS MiB',
        'conns',
        'server load',
        'steal',
      ],
      rows.map(({ kind, concurrency, values: v }) => [
        clientLabel(kind),
        concurrency,
        fmtSpread(v.reqPerSec),
        fmtSpread(v.p50Us),
        fmtSpread(v.p99Us),
        fmtSpread(v.cpuUsPerReq, fmtTenth),
        fmtSpread(v.peakRssBytes, fmtMiB),
        v.connectionsOpened ? fmtInt(v.connectionsOpened.median) : '–',
        v.serverLoad ? fmtPercent(v.serverLoad.median) : '–',
        fmtSpread(v.stealShare, fmtStealPercent),
      ]),
    ),
    '',
    `Ratio to undici.request in the same round (median [min–max] over rounds; req/s: higher is better, the rest: lower):`,
    '',
    markdownTable(
      ['client', 'in flight', 'req/s', 'p50', 'p99', 'CPU/req', 'peak RSS'],
      rows
        .filter((row) => row.kind !== BASELINE)
        .map(({ kind, concurrency, ratioToBaseline: r }) => [
          clientLabel(kind),
          concurrency,
          ...METRICS.map((metric) => fmtRatioSpread(r[metric])),
        ]),
    ),
    '',
  );
}

function renderMarkdown(result) {
  const { machine, options, ceiling, summary, targets, unavailable, failures } = result;
  const out = [];
  // Headings start at level 3: the report is pasted as is into bench/RESULTS.md.
  out.push(`### Latest run (${result.generatedAt})`, '');
  out.push(
    `${machineLine(machine)} ${options.rounds} round(s)${options.quick ? ' (--quick)' : ''}; every run in a fresh process: ` +
      `${options.warmupSeconds} s warm-up, then ${options.seconds} s timed; client order rotated each round, undici run right before or after AniLink. ` +
      'Cells are median [min–max] over rounds; ratios are computed per round, then summarized the same way.',
    '',
  );
  out.push('#### Server ceiling', '');
  if (ceiling.skipped) out.push(`Not measured: ${ceiling.skipped}.`, '');
  else if (ceiling.error) out.push(`Probe failed: ${ceiling.error}`, '');
  else {
    out.push(
      `bench-server (one thread) against the reqwest client with ${ceiling.concurrency} in flight: **${fmtInt(ceiling.reqPerSec)} req/s**, ` +
        `the server using ${ceiling.serverCpuUsPerReq.toFixed(1)} µs CPU per request (${fmtPercent(ceiling.serverLoad)} of one core). ` +
        `At that cost one core serves about **${fmtInt(1e6 / ceiling.serverCpuUsPerReq)} req/s**. ` +
        '"server load" is the share of one core the server needed for each client: below 100% the server was not the bottleneck. ' +
        '"steal" is the share of the machine\'s CPU time the hypervisor gave to other guests during the run (/proc/stat): where it is above a few percent, other guests were busy and that run\'s CPU and latency figures carry their noise.',
      '',
    );
  }
  out.push(
    "Floors: **napi-floor** is the same-work floor (AniLink's own request bytes over hyper 1 and the same runtime, one threadsafe-function call per response, JSON.parse and the check in JavaScript): " +
      "the least an addon with a worker thread must do. **napi-inline** does the same work on the JavaScript thread alone (libuv watches the runtime's reactor; answers are direct calls; Linux only, at 1 and 32 in flight): " +
      'what napi-floor costs above it is the hand-off between the JavaScript thread and the worker. **reqwest** is the network-only reference (HTTP in Rust, the 730-byte query, no JSON, no V8). ' +
      'Connections: anilink and undici are capped at one socket per request in flight, the others keep uncapped pools, which open at most as many; ' +
      `**anilink-defaults** is AniLink at its default pool bounds (maxSockets ${DEFAULT_MAX_SOCKETS}, maxFreeSockets 5), as users run it. "conns" is what the server accepted per run, warm-up included.`,
    '',
  );
  for (const workload of options.workloads) renderWorkload(out, result, workload, 'throughput');
  if (summary.some((row) => row.scenario === 'https')) {
    out.push(
      '### HTTPS',
      '',
      'The same server over TLS (rustls; a certificate from a CA made for the run, trusted through NODE_EXTRA_CA_CERTS), kept-alive connections. ' +
        `**anilink-defaults** is AniLink at its default pool bounds (maxSockets ${DEFAULT_MAX_SOCKETS}, maxFreeSockets 5), as users run it; its "conns" column is the connections it opened, which issue 37 bounds by min(in flight, ${DEFAULT_MAX_SOCKETS}) + ${CHURN_ALLOWANCE}.`,
      '',
    );
    for (const workload of options.workloads) renderWorkload(out, result, workload, 'https');
  }
  const handshakeRows = summary.filter((row) => HANDSHAKE_SCENARIOS.includes(row.scenario));
  if (handshakeRows.length > 0) {
    out.push(
      `#### A new connection per call (HTTPS, \`media\`, ${HANDSHAKE_CONCURRENCY} in flight)`,
      '',
      'Every call opens a connection and the TLS handshake with it (AniLink with `maxFreeSockets: 0`, undici with `reset: true`). ' +
        '"resumed" is the share of the handshakes the server saw resume a session: the server of `new-connection` keeps sessions and sends TLS 1.3 tickets as real ones do, the one of `full-handshake` refuses resumption (it still issues tickets, and forgets them). ' +
        '`new-connection-http` is the same call over plain HTTP: what a new connection costs without TLS.',
      '',
      markdownTable(
        ['scenario', 'client', 'req/s', 'p50 µs', 'CPU µs/req', 'resumed', 'conns'],
        handshakeRows.map(({ scenario, kind, values: v }) => [
          scenario,
          clientLabel(kind),
          fmtSpread(v.reqPerSec),
          fmtSpread(v.p50Us),
          fmtSpread(v.cpuUsPerReq, fmtTenth),
          v.resumedShare ? fmtPercent(v.resumedShare.median) : '–',
          v.connectionsOpened ? fmtInt(v.connectionsOpened.median) : '–',
        ]),
      ),
      '',
    );
  }
  const memoryRows = summary.filter((row) => row.scenario === 'memory');
  if (memoryRows.length > 0) {
    out.push(
      `#### Memory: ${fmtInt(MEMORY_IN_FLIGHT)} requests in flight (the server answers none until all ${fmtInt(MEMORY_IN_FLIGHT)} have arrived)`,
      '',
      `Each client may open ${fmtInt(MEMORY_IN_FLIGHT)} sockets, makes ${MEMORY_WARMUP_CALLS} untimed \`media\` calls the server answers at once (AniLink's first call in a scope waits for its answer, D39 a, and its calls past AniList's degraded 30 for a window go one at a time until an answer proves the announced quota, D42), then fires every \`media\` request at once.`,
      '',
      markdownTable(
        ['client', 'peak RSS MiB', '× undici', 'conns', 'all done in ms', 'CPU µs/req'],
        memoryRows.map(({ kind, values: v, ratioToBaseline: r }) => [
          clientLabel(kind),
          fmtSpread(v.peakRssBytes, fmtMiB),
          fmtRatioSpread(r.peakRssBytes),
          fmtInt(v.connectionsOpened?.median),
          fmtSpread(
            v.reqPerSec && {
              median: MEMORY_IN_FLIGHT / v.reqPerSec.median,
              min: MEMORY_IN_FLIGHT / v.reqPerSec.max,
              max: MEMORY_IN_FLIGHT / v.reqPerSec.min,
            },
            (s) => fmtInt(s * 1000),
          ),
          fmtSpread(v.cpuUsPerReq, fmtTenth),
        ]),
      ),
      '',
    );
  }
  const idleRuns = result.runs.filter((run) => run.scenario === 'idle');
  if (idleRuns.length > 0) {
    out.push(
      `#### Idle: wake-ups of a client with nothing to do`,
      '',
      `Each client makes ${IDLE_CALLS} \`media\` calls, keeps its connections, then idles: it settles for at least ${IDLE_SETTLE_SECONDS} s and until it has been quiet for ${IDLE_QUIET_SECONDS} s, at most ${IDLE_SETTLE_MAX_SECONDS} s (V8's memory reducer runs one to three more GCs in every Node process, some 8 s apart, after it was last busy), ` +
        `then context switches of all its threads (/proc/<pid>/task/*/status) are counted over ${IDLE_SECONDS} s. A thread that wakes up and sleeps again switches once, so switches per second bound the wake-ups from above.`,
      '',
      markdownTable(
        [
          'client',
          'wake-ups/s',
          `switches in ${IDLE_SECONDS} s`,
          'threads',
          'CPU ms in those s',
          'settled for',
          'switches while settling',
        ],
        idleRuns.map((run) =>
          run.error
            ? [clientLabel(run.kind), `FAILED ${run.error.replaceAll('\n', ' ')}`, '', '', '', '', '']
            : [
                clientLabel(run.kind),
                run.wakeUpsPerSec.toFixed(1),
                run.contextSwitches,
                run.threads,
                fmtInt(run.idleCpuMs),
                `${run.settleSeconds} s`,
                run.settleContextSwitches,
              ],
        ),
      ),
      '',
    );
  }
  out.push('#### Targets (issues 17 and 37, same run)', '');
  out.push(
    markdownTable(
      ['target', 'measured median [min–max]', 'met'],
      targets.map((t) => [t.description, t.measured, t.status]),
    ),
    '',
  );
  for (const capture of Object.values(result.captured)) if (capture.error) out.push(`- ${capture.error}`);
  for (const [kind, reason] of Object.entries(unavailable)) out.push(`- ${kind} not measured: ${reason}`);
  for (const failure of failures)
    out.push(
      `- FAILED ${failure.scenario} ${failure.workload} ${failure.concurrency} in flight, round ${failure.round + 1}, ${failure.kind}: ${failure.error.replaceAll('\n', ' ')}`,
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
  const plan = planRun(options);
  if (options.startup) return startupReport();
  if (!options.probe) log(plan.describe());
  if (options.planOnly) return;
  log('building the benchmark binaries (cargo build --release, bench/target)…');
  buildBinaries(options.clients);
  if (options.probe) return warmupProbe(options);

  const replaysAnilink = options.clients.includes(SAME_WORK_FLOOR) || options.clients.includes(ONE_THREAD_FLOOR);
  const captured = replaysAnilink ? await captureAnilinkRequests(options.workloads) : {};
  for (const [workload, capture] of Object.entries(captured))
    log(capture.error ?? `captured AniLink's ${workload} request: ${capture.requestBytes} bytes`);

  const unavailable = {};
  const runs = [];
  const amount = `${options.seconds}s`;
  const warmup = `${options.warmupSeconds}s`;
  const server = await startServer();
  const runAll = async (onServer, parts) => {
    for (const { scenario, workload, concurrency, kinds } of parts) {
      log(`${scenario}, ${workload}, ${concurrency} in flight: ${options.rounds} round(s)…`);
      runs.push(
        ...(await runRounds({
          server: onServer,
          scenario,
          workload,
          concurrency,
          kinds,
          rounds: options.rounds,
          amount,
          warmup,
          unavailable,
        })),
      );
    }
  };
  let ceiling = { skipped: `the ${NETWORK_FLOOR} client, which probes it, was not chosen` };
  try {
    if (options.clients.includes(NETWORK_FLOOR)) {
      log(`server ceiling: reqwest client, 64 in flight, ${profile.ceilingSeconds} s…`);
      ceiling = await measure(server, {
        kind: NETWORK_FLOOR,
        workload: 'media',
        concurrency: 64,
        amount: `${profile.ceilingSeconds}s`,
        warmup: '1s',
      });
      if (!ceiling.error)
        log(
          `  ${fmtInt(ceiling.reqPerSec)} req/s; server ${ceiling.serverCpuUsPerReq.toFixed(1)} µs CPU/req, one core ≈ ${fmtInt(1e6 / ceiling.serverCpuUsPerReq)} req/s`,
        );
    }
    await runAll(server, plan.throughput);
    if (plan.idleKinds.length > 0) {
      // Wake-ups do not depend on CPU load, so the idle clients are measured side by side.
      log(
        `idle: ${plan.idleKinds.join(', ')} side by side, ${IDLE_SETTLE_SECONDS}–${IDLE_SETTLE_MAX_SECONDS} s settling + ${IDLE_SECONDS} s counted…`,
      );
      const idle = await Promise.all(plan.idleKinds.map((kind) => measureIdle(server, kind, IDLE_SECONDS)));
      for (const run of idle)
        log(
          run.error
            ? `  ${run.kind}: FAILED ${run.error}`
            : `  ${run.kind}: ${run.wakeUpsPerSec.toFixed(1)} wake-ups/s`,
        );
      runs.push(...idle.map((run) => ({ scenario: 'idle', ...run })));
    }
    if (plan.https.length + plan.handshakes.length > 0) {
      const ca = makeTestCa();
      // Inherited by every client process from here on.
      process.env.NODE_EXTRA_CA_CERTS = ca.caFile;
      const resuming = await startServer(ca.serverArgs);
      const fullOnly = await startServer([...ca.serverArgs, '--tls-no-resumption']);
      try {
        await runAll(resuming, plan.https);
        // The handshake target subtracts one scenario's CPU from the others' in the same round,
        // so a round runs all three back to back (rotated), on the same minute of the machine.
        const handshakeServer = {
          'new-connection': resuming,
          'full-handshake': fullOnly,
          [TCP_ONLY_SCENARIO]: server,
        };
        for (let round = 0; round < options.rounds && plan.handshakes.length > 0; round += 1) {
          log(`handshakes, round ${round + 1}/${options.rounds}…`);
          for (const { scenario, workload, concurrency, kinds } of rotate(plan.handshakes, round)) {
            runs.push(
              ...(await runRounds({
                server: handshakeServer[scenario],
                scenario,
                workload,
                concurrency,
                kinds,
                rounds: options.rounds,
                onlyRound: round,
                amount,
                warmup,
                unavailable,
              })),
            );
          }
        }
      } finally {
        await Promise.all([resuming.stop(), fullOnly.stop()]);
        delete process.env.NODE_EXTRA_CA_CERTS;
        ca.remove();
      }
    }
  } finally {
    await server.stop();
  }

  if (plan.memoryKinds.length > 0) {
    const holdingServer = await startServer([
      '--hold-ms',
      String(MEMORY_HOLD_MAX_MS),
      '--release-at',
      String(MEMORY_IN_FLIGHT),
    ]);
    try {
      log(
        `memory, ${fmtInt(MEMORY_IN_FLIGHT)} in flight, the server answering once all have arrived: ${profile.memoryRounds} round(s)…`,
      );
      runs.push(
        ...(await runRounds({
          server: holdingServer,
          scenario: 'memory',
          workload: 'media',
          concurrency: MEMORY_IN_FLIGHT,
          kinds: plan.memoryKinds,
          rounds: profile.memoryRounds,
          amount: String(MEMORY_IN_FLIGHT),
          warmup: String(MEMORY_WARMUP_CALLS),
          unavailable,
          beforeEach: () => holdingServer.pass(MEMORY_WARMUP_CALLS),
        })),
      );
    } finally {
      await holdingServer.stop();
    }
  }

  const result = {
    generatedAt: new Date().toISOString(),
    durationSec: Math.round((Date.now() - startedAt) / 1000),
    etaSec: plan.etaSec,
    machine: machineInfo(),
    options: {
      quick: options.quick,
      rounds: options.rounds,
      seconds: options.seconds,
      warmupSeconds: options.warmupSeconds,
      memoryRounds: plan.memoryKinds.length > 0 ? profile.memoryRounds : 0,
      clients: options.clients,
      workloads: options.workloads,
      concurrencies: options.concurrencies,
      http: options.http,
      https: options.https,
    },
    workloads: Object.fromEntries(
      options.workloads.map((workload) => [
        workload,
        {
          requestBytes: Buffer.byteLength(WORKLOADS[workload].requestBody),
          responseBytes: readFileSync(join(BENCH_DIR, 'workload', `${workload}-response.json`)).length,
        },
      ]),
    ),
    captured,
    ceiling: { concurrency: 64, ...ceiling },
    summary: summarize(runs),
    targets: evaluateTargets(targetsFor(options), runs, unavailable),
    unavailable,
    // Idle failures are reported in their own table.
    failures: runs.filter((run) => run.error && run.scenario !== 'idle'),
    runs,
  };
  const markdown = renderMarkdown(result);
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, 'latest.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(RESULTS_DIR, 'latest.md'), markdown);
  process.stdout.write(`\n${markdown}\n`);
  log(
    `written ${relative(process.cwd(), join(RESULTS_DIR, 'latest.json'))} and latest.md in ${result.durationSec} s (estimated ${plan.etaSec} s)`,
  );
}

main().catch((error) => {
  log(`bench: ${error.stack ?? error}`);
  process.exitCode = 1;
});
