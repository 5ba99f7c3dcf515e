// The differential conformance suite (issue 35) on a seeded subset: table rows and generated
// ones, each served raw to node:http and to AniLink, with no difference but the declared ones
// (docs/pools.md, "HTTP/1.1 on the wire"). The whole table and 5,000 generated rows:
// `npm run conformance:long`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIFFERENCES, ROWS } from './conformance/responses.mjs';
import { runNode } from './support/child';

interface ConformanceResult {
  rows: number;
  agreed: number;
  deliberate: Record<string, number>;
  undeclared: unknown[];
  slowRefusals: unknown[];
  maxRefusalMs: number;
}

const RUNNER = join(__dirname, 'conformance', 'differential.mjs');

describe('HTTP/1.1 against node:http, response by response', () => {
  it('seed 1: 60 table rows and 100 generated ones agree, or differ as declared; refusals settle within 100 ms', async () => {
    const run = await runNode(
      [RUNNER, '--seed', '1', '--rows', '60', '--families', '100', '--concurrency', '6'],
      40_000,
    );
    expect(run.stderr).toBe('');
    const line = run.stdout.split('\n').find((l) => l.startsWith('RESULT '));
    const result = JSON.parse(line!.slice('RESULT '.length)) as ConformanceResult;
    expect(result.undeclared).toEqual([]);
    expect(result.slowRefusals).toEqual([]);
    expect(result.rows).toBe(160);
    expect(run.code).toBe(0);
  }, 45_000);

  it('every declared difference has a row, and docs/pools.md lists it with its reason', () => {
    const page = readFileSync(join(__dirname, '..', 'docs', 'pools.md'), 'utf8');
    // The table's rows as their cells (the formatter pads them).
    const listed = page
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) =>
        line
          .split('|')
          .slice(1, -1)
          .map((cell) => cell.trim()),
      );
    for (const [key, difference] of Object.entries(DIFFERENCES)) {
      expect(
        ROWS.some((row) => row.differs === key),
        key,
      ).toBe(true);
      expect(listed, key).toContainEqual([`\`${key}\``, difference.node, difference.anilink, difference.reason]);
    }
  });
});
