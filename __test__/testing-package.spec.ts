// What `npm pack` publishes: the testing entry and the simulator files it loads, the README and the
// docs/ pages it links to, and nothing test-only beyond them (this suite, the examples, the
// benchmarks, the demo, the Rust sources).
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const packageRoot = join(__dirname, '..');
const TEST_ONLY = [
  /^__test__\//,
  /^examples\//,
  /^bench\//,
  /^demo\//,
  /^scripts\//,
  /^crates\//,
  /^src\//,
  /^target\//,
  /jest\.config/,
  /vitest\.config/,
  /^sim\/README\.md$/,
];

let packed: string[];
beforeAll(async () => {
  // --ignore-scripts: `prepare` would rebuild the addon; the file list does not depend on it.
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: packageRoot,
    timeout: 60_000,
  });
  packed = (JSON.parse(stdout) as { files: { path: string }[] }[])[0].files.map((file) => file.path);
}, 60_000);

describe('the published file list', () => {
  it('has every target of the ./testing export', () => {
    type Conditions = string | { [condition: string]: Conditions };
    const manifest = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as {
      exports: Record<string, Conditions>;
    };
    // Every file a condition (import/require, types/default, at any depth) points at.
    const leaves = (conditions: Conditions): string[] =>
      typeof conditions === 'string' ? [conditions] : Object.values(conditions).flatMap(leaves);
    const targets = leaves(manifest.exports['./testing']).map((target) => target.replace(/^\.\//, ''));
    expect(targets).toEqual(
      expect.arrayContaining([
        'types/entries/testing.d.ts',
        'types/entries/testing.d.mts',
        'lib/testing/index.mjs',
        'lib/testing/index.cjs',
      ]),
    );
    for (const target of targets) expect(packed).toContain(target);
  });

  it('has the modules, types and simulator files the entry loads', () => {
    expect(packed).toEqual(
      expect.arrayContaining([
        'types/testing.d.ts',
        'lib/testing/scripted-server.cjs',
        'lib/testing/upstream.cjs',
        'lib/testing/simulator.cjs',
        'lib/testing/graphql-operation.cjs',
        'lib/http-mock-detection.cjs',
        'sim/anilist-simulator.mjs',
        'sim/anilist-simulator.d.mts',
        'sim/arguments.mjs',
        'sim/failure-script.mjs',
        'sim/fake-data.mjs',
        'sim/graphql-responder.mjs',
        'sim/quota.mjs',
        'data/anilist-schema.json',
      ]),
    );
  });

  it('has the README and every docs/ page its links and the error messages name', () => {
    const pages = readdirSync(join(packageRoot, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`);
    expect(pages).toEqual(expect.arrayContaining(['docs/bundlers.md', 'docs/testing.md']));
    expect(packed).toEqual(expect.arrayContaining(['README.md', ...pages]));
  });

  it('has nothing test-only', () => {
    expect(packed.filter((path) => TEST_ONLY.some((pattern) => pattern.test(path)))).toEqual([]);
  });
});
