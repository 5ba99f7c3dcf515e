// Process lifetime (decisions D12): a pending request keeps Node alive like any pending I/O,
// and nothing else does. A child Node process makes calls against the test server running
// here, then does nothing; it must exit with code 0 as soon as its calls have settled, with
// hooks configured, keep-alive connections pooled and the server still holding them open.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { beforeEach, describe, expect, it } from 'vitest';
import { useTestServer } from './support/helpers';
import { graphqlData, type TestServer } from './support/test-server';

const packageRoot = join(__dirname, '..');
const fixture = join(__dirname, 'fixtures', 'lifetime', 'calls-then-idle.mjs');
/** How long the child may live on after its last call settled ("at once", with slack for a busy machine). */
const EXIT_BUDGET_MS = 1500;
/** Past this the child is killed and the test fails, instead of hanging the suite. */
const KILL_AFTER_MS = 15_000;

interface ChildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** ms from the child reporting its calls settled to its exit; undefined if it never reported. */
  exitAfterSettledMs?: number;
}

/** Run the fixture to completion, timing its exit from the moment it prints `SETTLED`. */
function runChild(scenario: string): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fixture, server.url, scenario], { cwd: packageRoot });
    let stdout = '';
    let stderr = '';
    let settledAt: number | undefined;
    const killer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (settledAt === undefined && stdout.includes('SETTLED')) settledAt = performance.now();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      const exitedAt = performance.now();
      clearTimeout(killer);
      resolve({
        code,
        signal,
        stdout,
        stderr,
        exitAfterSettledMs: settledAt === undefined ? undefined : exitedAt - settledAt,
      });
    });
  });
}

function settledReport(run: ChildRun): { outcomes: string[]; hookCounts: Record<string, number> } {
  const line = run.stdout.split('\n').find((l) => l.startsWith('SETTLED '));
  expect(line, `child output:\n${run.stdout}\n${run.stderr}`).toBeDefined();
  return JSON.parse(line!.slice('SETTLED '.length));
}

let server: TestServer;
useTestServer((started) => {
  server = started;
});

beforeEach(() => {
  server.handle((req) => {
    if (req.path.startsWith('/fail')) return { status: 503, body: 'down' };
    if (req.path.startsWith('/hang')) return { hang: true };
    if (req.path.startsWith('/slow')) return { delayMs: 300, body: graphqlData('Media', { id: 2 }) };
    if (req.path.startsWith('/mal')) return { body: { id: 1, title: 'Cowboy Bebop' } };
    return undefined;
  });
});

describe('a process that made calls and then does nothing', () => {
  it('exits with code 0 right after successes, failures, retries, timeouts and aborts, with hooks set', async () => {
    const run = await runChild('mixed');

    const report = settledReport(run);
    expect(report.outcomes).toEqual(['ok', 'ok', 'ok', 'API_ERROR', 'TIMEOUT_ERROR', 'ABORTED_ERROR']);
    expect(report.hookCounts.onRequestStart).toBeGreaterThanOrEqual(7);
    expect(report.hookCounts.onHookError).toBe(1);
    expect(run.signal).toBeNull();
    expect(run.code).toBe(0);
    expect(run.exitAfterSettledMs).toBeLessThan(EXIT_BUDGET_MS);
    // Its keep-alive connections were still open on the server side: they did not hold it.
    expect(server.requests.length).toBeGreaterThanOrEqual(7);
  });

  it('stays alive for a pending request, then exits once it settles', async () => {
    const run = await runChild('pending');

    // Had the pending request not kept Node alive, the top-level await would never finish.
    const report = settledReport(run);
    expect(report.outcomes).toEqual([JSON.stringify({ id: 2 })]);
    expect(run.code).toBe(0);
    expect(run.exitAfterSettledMs).toBeLessThan(EXIT_BUDGET_MS);
  });
});
