// `npm run demo --quick` as a user runs it: a child process on the built-in simulator, whose
// output must show the resilience features at work (retries, pacing, a breaker trip and its
// recovery) and whose exit code must say the job succeeded. `--live` is never run here.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const root = join(__dirname, '..');
const demoScript = join(root, 'demo', 'demo.mjs');

interface DemoRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

async function runDemo(args: string[]): Promise<DemoRun> {
  // stdout is a pipe here, so the demo must fall back to plain progress lines.
  const child = spawn(process.execPath, [demoScript, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [exitCode] = (await once(child, 'close')) as [number | null];
  return { exitCode, stdout, stderr };
}

/** The summary table's rows, label → value (`  label | value` after the `Summary:` title). */
function summaryRows(stdout: string): Map<string, string> {
  const summary = stdout.slice(stdout.indexOf('Summary:'));
  const rows = new Map<string, string>();
  for (const match of summary.matchAll(/^ {2}(\S.*?)\s+\| (.*)$/gm)) rows.set(match[1], match[2]);
  return rows;
}

/** The first integer of a summary row (`23: 503 ×12, …` → 23). */
function leadingCount(rows: Map<string, string>, label: string): number {
  const value = rows.get(label);
  expect(value, `summary row "${label}"`).toBeDefined();
  return Number(/^\d+/.exec(value ?? '')?.[0] ?? Number.NaN);
}

describe('npm run demo -- --quick', () => {
  let run: DemoRun;
  let rows: Map<string, string>;

  beforeAll(async () => {
    run = await runDemo(['--quick']);
    rows = summaryRows(run.stdout);
  }, 30_000);

  it('exits 0 with every media fetched and nothing on stderr', () => {
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    expect(rows.get('calls')).toBe('60 of 60 fetched, 0 failed');
    expect(rows.get('failures')).toBe('0');
  });

  it('shows transport retries, the scripted 502 burst among them', () => {
    expect(leadingCount(rows, 'retries')).toBeGreaterThanOrEqual(4);
    expect(rows.get('retries')).toMatch(/\b502 ×4\b/);
    // Every retry is a request the simulator really received.
    expect(leadingCount(rows, 'attempts (server-side)')).toBeGreaterThan(60);
  });

  it('shows rate-limit pacing waits', () => {
    const pacing = rows.get('pacing') ?? '';
    expect(Number(/^(\d+) waits?/.exec(pacing)?.[1])).toBeGreaterThanOrEqual(1);
    expect(run.stdout).toMatch(/quota used up: new calls wait [\d.]+ m?s for the window to reset \(pacing\)/);
  });

  it('shows a breaker trip during the outage and its recovery, in that order', () => {
    const breaker = /^(\d+) trips?, (\d+) recover(?:y|ies)/.exec(rows.get('breaker') ?? '');
    expect(breaker, rows.get('breaker')).not.toBeNull();
    expect(Number(breaker?.[1])).toBeGreaterThanOrEqual(1);
    expect(Number(breaker?.[2])).toBe(Number(breaker?.[1]));
    const outage = run.stdout.indexOf('scripted: an outage');
    const opened = run.stdout.indexOf('breaker OPEN after');
    const closed = run.stdout.indexOf('breaker CLOSED after');
    expect(outage).toBeGreaterThan(-1);
    expect(opened).toBeGreaterThan(outage);
    expect(closed).toBeGreaterThan(opened);
  });

  it('prints plain progress lines, without terminal control codes, when stdout is not a terminal', () => {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for terminal control codes
    expect(run.stdout).not.toMatch(/[\r\x1b]/);
    expect(run.stdout).toMatch(/^ +\+\d+\.\ds {2}\d+\/60 fetched \| retries \d+ \(429s \d+\) \| paced /m);
  });
});

describe('demo arguments', () => {
  it('refuses --count without --live before starting anything', async () => {
    const run = await runDemo(['--quick', '--count', '5']);
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('--count and --concurrency apply to --live');
  });

  it('refuses unknown flags with the usage line', async () => {
    const run = await runDemo(['--fast']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/usage: npm run demo/);
  });

  it('refuses a --fleet that is not a positive number of workers, or mixed with another run', async () => {
    const zero = await runDemo(['--fleet', '0']);
    expect(zero.exitCode).toBe(2);
    expect(zero.stdout).toBe('');
    expect(zero.stderr).toContain('--fleet must be a positive integer, got "0"');
    const mixed = await runDemo(['--fleet', '4', '--quick']);
    expect(mixed.exitCode).toBe(2);
    expect(mixed.stderr).toContain('--fleet runs alone');
    const alone = await runDemo(['--degraded']);
    expect(alone.exitCode).toBe(2);
    expect(alone.stderr).toContain('--degraded applies to --fleet');
  });
});

describe('npm run demo -- --fleet 4 --degraded', () => {
  it('serves every media through headers that overstate the quota, printing the 429s and the learned limit', async () => {
    const startedAt = performance.now();
    const run = await runDemo(['--fleet', '4', '--degraded']);
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    expect(performance.now() - startedAt).toBeLessThan(40_000);
    const row = (label: string) => new RegExp(`^ {2}${label} +\\| +(.*)$`, 'm').exec(run.stdout)?.[1];
    expect(row('requests served')).toBe('120 of 120');
    expect(row('learned limit')).toMatch(/^3[01] per window \(announced 90\)$/);
    // The lie shows only when the server refuses; what the fleet had in flight then (at most
    // 4 × 8) is refused with it, and each probe above the learned limit costs one more (D39 b).
    const rateLimited = Number(row('429s received'));
    expect(rateLimited).toBeGreaterThanOrEqual(1);
    expect(rateLimited).toBeLessThanOrEqual(4 * 8 + 2);
  }, 60_000);
});
