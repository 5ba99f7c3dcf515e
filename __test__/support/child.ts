/**
 * Run an ES module snippet in a child Node process with this package importable by name, for
 * cases that could crash the process: the test asserts its exit code, stdout and stderr.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface ChildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const packageRoot = join(__dirname, '..', '..');

/** Run `source` (an ES module) to completion; killed after `killAfterMs`. */
export function runModule(source: string, killAfterMs = 30_000, env = process.env): Promise<ChildRun> {
  return runNode(['--input-type=module', '-e', source], killAfterMs, env);
}

/** Run `node ...args` in the package root to completion, with `env`; killed after `killAfterMs`. */
export function runNode(args: string[], killAfterMs = 30_000, env = process.env): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: packageRoot, env });
    let stdout = '';
    let stderr = '';
    const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The JSON a child printed on its `RESULT ` line. */
export function resultOf<T>(run: ChildRun): T {
  const line = run.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (line === undefined)
    throw new Error(`the child printed no result (exit ${run.code}, ${run.signal}):\n${run.stdout}\n${run.stderr}`);
  return JSON.parse(line.slice('RESULT '.length)) as T;
}
