#!/usr/bin/env node
// Runs the vitest suite under each supported Node.js major (default 20, 22 and 24), each
// fetched from the npm registry (scripts/registry-node.mjs), against the addon already built in
// the package root. Prints one summary line per major and exits non-zero if any run failed.
//
//   node scripts/test-node-majors.mjs [major...] [-- <vitest args>]

import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { registryNode } from './registry-node.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const split = argv.indexOf('--');
const majors = (split === -1 ? argv : argv.slice(0, split)).map(Number);
const vitestArgs = split === -1 ? [] : argv.slice(split + 1);

const results = [];
for (const major of majors.length ? majors : [20, 22, 24]) {
  const node = registryNode(major);
  const started = Date.now();
  // vitest's forks start with process.execPath, so every test file runs on this Node too.
  const run = spawnSync(node, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...vitestArgs], {
    cwd: root,
    encoding: 'utf8',
    // A repeated run: the suite's one-off heavy tests (the Next.js build) ran in `npm test`.
    env: { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}`, ANILINK_REPEATED_RUN: '1' },
    maxBuffer: 256 * 1024 * 1024,
  });
  const output = `${run.stdout}${run.stderr}`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the runner's colour codes
  const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const tests = plain.match(/^\s*Tests\s+(.*)$/m)?.[1].trim() ?? 'no summary';
  const files = plain.match(/^\s*Test Files\s+(.*)$/m)?.[1].trim() ?? 'no summary';
  results.push({ version, status: run.status, tests, files, seconds: (Date.now() - started) / 1000 });
  if (run.status !== 0) process.stdout.write(plain.split('\n').slice(-80).join('\n'));
  console.log(
    `node ${version}: exit ${run.status}; files ${files}; tests ${tests}; ${results.at(-1).seconds.toFixed(0)} s`,
  );
}
console.log('\nsummary:');
for (const r of results) console.log(`  node ${r.version}: ${r.status === 0 ? 'pass' : 'FAIL'} (tests ${r.tests})`);
const count = (word) =>
  results.reduce((sum, r) => sum + Number(r.tests.match(new RegExp(`(\\d+) ${word}`))?.[1] ?? 0), 0);
console.log(`tests: ${count('passed')} passed, ${count('failed')} failed`);
process.exitCode = results.every((r) => r.status === 0) ? 0 : 1;
