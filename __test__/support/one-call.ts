/**
 * One call from a fresh Node process (`fixtures/network/one-call.mjs`), for behaviour that
 * depends on the environment a client reads: proxy variables and `NODE_EXTRA_CA_CERTS`.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface CallOutcome {
  ok: boolean;
  value?: unknown;
  name?: string;
  code?: string;
  reason?: string;
  message?: string;
}

const oneCall = join(__dirname, '..', 'fixtures', 'network', 'one-call.mjs');

/**
 * Run `fixtures/network/one-call.mjs` in a child Node process with `env` added to a copy of
 * this process's environment from which every proxy and CA variable has been removed.
 */
export function callInChild(
  env: Record<string, string>,
  args: string[],
): Promise<{ outcomes: CallOutcome[]; code: number | null; stderr: string }> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^(https?_proxy|all_proxy|no_proxy|node_extra_ca_certs)$/i.test(key)),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [oneCall, ...args], {
      cwd: join(__dirname, '..', '..'),
      env: { ...clean, ...env },
    });
    let stdout = '';
    let stderr = '';
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      try {
        resolve({ outcomes: JSON.parse(stdout) as CallOutcome[], code, stderr });
      } catch {
        reject(new Error(`the child printed no outcome (exit ${code}): ${stdout}${stderr}`));
      }
    });
  });
}
