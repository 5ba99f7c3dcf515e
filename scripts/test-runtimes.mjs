#!/usr/bin/env node
// The runtime conformance suite (issue 40): __test__/runtimes/conformance.mjs, unchanged, runs
// under Node (this one), Bun (newest 1.x) and Deno (newest 2.x), the two fetched from the npm
// registry (scripts/registry-node.mjs), each from a consumer folder that depends on this
// package, against the addon built in the package root. `node@<major>` adds a Node major from
// the registry too. Every runtime must print the expected results and exit 0 by itself within
// the time limit. Prints one line per runtime.
//
//   node scripts/test-runtimes.mjs [node|node@<major>|bun|deno ...]   (default: node bun deno)

import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { makeTestCertificates } from '../__test__/support/test-certificates.mjs';
import { startRedisServer } from '../demo/redis-server.mjs';
import { registryBun, registryDeno, registryNode } from './registry-node.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const EXIT_LIMIT_MS = 30_000;

/** How each runtime runs a module. Deno needs its permissions named: ffi loads the addon. */
const RUNTIMES = {
  node: () => [process.execPath],
  bun: () => [registryBun()],
  deno: () => [registryDeno(), 'run', '--no-lock', '--allow-env', '--allow-read', '--allow-net', '--allow-ffi'],
};

const ANILINK_ERROR = { isAniLinkError: true, isNetworkError: false, isApiError: false, isGraphQLError: false };
const EXPECTED = {
  baseUrl: { ok: 1 },
  environmentUrl: { ok: 2 },
  networkError: {
    name: 'AniLinkNetworkError',
    code: 'NETWORK_ERROR',
    ...ANILINK_ERROR,
    isNetworkError: true,
    isValidationError: false,
  },
  // An errors array whose status is 404 is an HTTP-class failure (decisions D29).
  graphqlError: {
    name: 'AniLinkApiError',
    code: 'API_ERROR',
    ...ANILINK_ERROR,
    isApiError: true,
    isValidationError: false,
  },
  validationError: {
    name: 'AniLinkValidationError',
    code: 'VALIDATION_ERROR',
    ...ANILINK_ERROR,
    isValidationError: true,
  },
  validationSentNothing: true,
  retryAfter: { ok: 3, waitedForRetryAfter: true },
  pacing: { ids: [4, 4, 4], thirdWaited: true },
  hooks: ['onRequestStart', 'onResponse', 'onRequestStart', 'onResponse', 'onError'],
  breaker: { codes: ['API_ERROR', 'API_ERROR', 'CIRCUIT_OPEN_ERROR'], requests: 2 },
  abort: {
    name: 'AniLinkNetworkError',
    code: 'ABORTED_ERROR',
    ...ANILINK_ERROR,
    isNetworkError: true,
    isValidationError: false,
    promptly: true,
  },
  pools: { beforeTeardown: { ok: 6 }, afterTeardown: { ok: 6 }, connectionsOpened: 2 },
  testing: { scripted: { ok: 7 }, assertDone: 'passed' },
  simulator: { ok: 21, requests: 1 },
  sharedState: { first: 'API_ERROR', second: 'CIRCUIT_OPEN_ERROR', requests: 1, mode: 'redis' },
  proxy: { ok: 9, proxied: 1 },
  tls: { outcomes: ['NETWORK_ERROR', 10, 10, 10, 'NETWORK_ERROR'], warnings: 1 },
  ownServer: { ok: 8 },
  httpMock: { ok: 11, diagnostics: [['httpMockDetection', 'http-mock']] },
};

/**
 * A folder of its own that depends on this package, as a consumer project would: outside the
 * package (Deno would otherwise take the package's own manifest for the consumer's).
 */
function consumerFolder() {
  const folder = mkdtempSync(join(tmpdir(), 'anilink-runtime-conformance-'));
  mkdirSync(join(folder, 'node_modules'));
  symlinkSync(root, join(folder, 'node_modules', 'anilink-api-wrapper'), 'dir');
  const manifest = {
    name: 'conformance-consumer',
    private: true,
    type: 'module',
    dependencies: { 'anilink-api-wrapper': '*' },
  };
  writeFileSync(join(folder, 'package.json'), JSON.stringify(manifest));
  copyFileSync(join(root, '__test__', 'runtimes', 'conformance.mjs'), join(folder, 'conformance.mjs'));
  return folder;
}

function run(name, command, folder, redis, certificates) {
  const [binary, ...args] = command;
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(binary, [...args, 'conformance.mjs'], {
      cwd: folder,
      env: {
        ...process.env,
        CONFORMANCE_REDIS_URL: redis.url,
        CONFORMANCE_KEY_PREFIX: `conformance-${name.replace('@', '-')}`,
        CONFORMANCE_TLS_DIR: dirname(certificates.caFile),
        NO_COLOR: '1',
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    // A process that does not end by itself is a failure of its own (pools, timers, handles).
    const killer = setTimeout(() => child.kill('SIGKILL'), EXIT_LIMIT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ name, code, signal, stdout, stderr, seconds: (Date.now() - started) / 1000 });
    });
  });
}

function verdict(result) {
  const [runtimeLine, ...rest] = result.stdout.split('\n');
  if (result.signal === 'SIGKILL') return `did not exit by itself within ${EXIT_LIMIT_MS / 1000} s`;
  if (result.code !== 0) return `exit ${result.code ?? result.signal}`;
  let printed;
  try {
    printed = JSON.parse(rest.join('\n'));
  } catch {
    return 'printed no results';
  }
  const differences = Object.keys({ ...EXPECTED, ...printed }).filter(
    (key) => !isDeepStrictEqual(printed[key], EXPECTED[key]),
  );
  result.version = runtimeLine.replace(/^runtime /, '');
  if (differences.length === 0) return 'pass';
  return differences
    .map((key) => `${key}: got ${JSON.stringify(printed[key])}, expected ${JSON.stringify(EXPECTED[key])}`)
    .join('\n    ');
}

const wanted = process.argv.slice(2);
const names = wanted.length ? wanted : Object.keys(RUNTIMES);
const commands = names.map((name) => {
  const major = name.match(/^node@(\d+)$/)?.[1];
  if (major) return [registryNode(major)];
  if (!RUNTIMES[name])
    throw new Error(`unknown runtime ${name}; known: ${Object.keys(RUNTIMES).join(', ')}, node@<major>`);
  return RUNTIMES[name]();
});
const folder = consumerFolder();
const certificates = makeTestCertificates();
const redis = await startRedisServer();
let results;
try {
  results = await Promise.all(names.map((name, i) => run(name, commands[i], folder, redis, certificates)));
} finally {
  await redis.stop();
  certificates.remove();
  rmSync(folder, { recursive: true, force: true });
}
let failed = 0;
for (const result of results) {
  const outcome = verdict(result);
  if (outcome !== 'pass') failed++;
  console.log(`${result.name} ${result.version ?? ''}: ${outcome} (${result.seconds.toFixed(1)} s)`);
  if (outcome !== 'pass' && result.stderr) console.log(result.stderr.trimEnd().replace(/^/gm, '    '));
}
process.exitCode = failed ? 1 : 0;
