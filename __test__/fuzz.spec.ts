// The hostile-upstream fuzzer (issue 13) on a small fixed seed set: every call settles with a
// typed code within its deadline and the child process stays up. The long mode runs 20,000
// cases: `npm run fuzz:long`.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runNode } from './support/child';

interface FuzzResult {
  cases: number;
  unsettled: number;
  untyped: number;
  uncaught: number;
  durationMs: number;
  codes: Record<string, number>;
}

const FUZZER = join(__dirname, 'fuzz', 'hostile-upstream.mjs');

describe('hostile upstream fuzzing', () => {
  it.each([1, 2])(
    'seed %i: 150 cases settle typed, in time, with the process up',
    async (seed) => {
      const run = await runNode([FUZZER, '--seed', String(seed), '--cases', '150'], 30_000);
      expect(run.signal).toBeNull();
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const line = run.stdout.split('\n').find((l) => l.startsWith('RESULT '));
      const result = JSON.parse(line!.slice('RESULT '.length)) as FuzzResult;
      expect(result).toMatchObject({ cases: 150, unsettled: 0, untyped: 0, uncaught: 0 });
      expect(Object.values(result.codes).reduce((a, b) => a + b, 0)).toBe(150);
      // The generator reaches successes, envelope failures and transport failures alike.
      expect(result.codes.resolved).toBeGreaterThan(0);
      expect(result.codes.NETWORK_ERROR).toBeGreaterThan(0);
    },
    40_000,
  );
});
