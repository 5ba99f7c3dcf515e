// The loader's own rules, read from its source and checked in fresh Node processes: every
// platform package named literally (what file tracers and bundlers follow), and the C library
// of a glibc Linux told by ldd alone, without building Node's diagnostic report (~7 ms).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const loader = readFileSync(join(root, 'lib', 'native.cjs'), 'utf8');
const platforms = readdirSync(join(root, 'npm')).sort();

/** The platforms that `require('<pkg>-<platform><suffix>')` names literally in the loader. */
function literallyRequired(suffix: string): string[] {
  const pattern = new RegExp(`require\\('${pkg.name}-([a-z0-9-]+)${suffix}'\\)`, 'g');
  return [...loader.matchAll(pattern)].map((m) => m[1]).sort();
}

describe('the native loader', () => {
  it('requires each npm/<platform> package, and only those, by its literal name', () => {
    expect(literallyRequired('')).toEqual(platforms);
    expect(literallyRequired('/package.json')).toEqual(platforms);
  });

  const ldd = (() => {
    try {
      return readFileSync('/usr/bin/ldd', 'latin1');
    } catch {
      return '';
    }
  })();
  it.runIf(ldd.includes('GNU C Library'))("on glibc, names the platform from ldd without Node's report", () => {
    const code =
      "process.report.getReport = () => { throw new Error('the report was built'); };" +
      "console.log(require('./lib/platform.cjs').platformName());";
    const run = spawnSync(process.execPath, ['-e', code], { cwd: root, encoding: 'utf8', timeout: 10_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe(`linux-${process.arch}-${process.arch === 'arm' ? 'gnueabihf' : 'gnu'}`);
  });
});
