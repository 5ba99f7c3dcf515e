// The glibc floor of the built addon: on Linux x64 with glibc, `npm run build` links against
// glibc 2.17 (scripts/build.mjs), so no symbol of the binary may need a newer glibc. Read from
// the ELF's version-needs section by our own parser, cross-checked with readelf where present.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GLIBC_FLOOR } from '../scripts/build.mjs';
import { compareVersions, elfVersionNeeds, newestGlibcNeeded } from '../scripts/elf-version-needs.mjs';

const require = createRequire(import.meta.url);
const root = resolve(__dirname, '..');
const pkg = require('../package.json');
const { platformName } = require('../lib/platform.cjs');
const host = platformName();
const binaryPath = join(root, `${pkg.napi.binaryName}.${host}.node`);
const readelf = spawnSync('readelf', ['--version']).status === 0;

describe.runIf(host === 'linux-x64-gnu')(`the built ${host} addon`, () => {
  const binary = readFileSync(binaryPath);

  it(`needs glibc ${GLIBC_FLOOR.join('.')} at most`, () => {
    const newest = newestGlibcNeeded(binary);
    expect(newest.length, 'the binary needs no GLIBC_ version at all: wrong file?').toBeGreaterThan(0);
    expect(compareVersions(newest, GLIBC_FLOOR), `needs GLIBC_${newest.join('.')}`).toBeLessThanOrEqual(0);
  });

  it('needs nothing but glibc, libgcc_s and the dynamic loader', () => {
    const libraries = [...elfVersionNeeds(binary).keys()];
    expect(libraries).toContain('libc.so.6');
    for (const library of libraries) {
      expect(library).toMatch(/^(libc|libm|libdl|libpthread|librt|libgcc_s)\.so\.\d+$|^ld-linux-x86-64\.so\.2$/);
    }
  });

  it.runIf(readelf)('reads the same version needs as readelf -V', () => {
    const printed = spawnSync('readelf', ['-V', '-W', binaryPath], { encoding: 'utf8' }).stdout;
    const section = printed.slice(printed.indexOf('.gnu.version_r'));
    const expected = new Map<string, string[]>();
    let file = '';
    for (const line of section.split('\n')) {
      const entry = line.match(/File: (\S+)/);
      if (entry) {
        file = entry[1];
        expected.set(file, []);
      }
      const name = line.match(/^\s+0x[0-9a-f]+:\s+Name: (\S+)/);
      if (name) expected.get(file)!.push(name[1]);
    }
    expect(expected.size).toBeGreaterThan(0);
    expect(elfVersionNeeds(binary)).toEqual(expected);
  });
});

describe('the ELF version-needs reader', () => {
  it('rejects a file that is not ELF', () => {
    expect(() =>
      elfVersionNeeds(Buffer.from('MZ not an elf file, padded to sixty-four bytes...........'.padEnd(64))),
    ).toThrow('not an ELF file');
  });

  it('compares dotted versions numerically', () => {
    expect(compareVersions([2, 9], [2, 17])).toBeLessThan(0);
    expect(compareVersions([2, 17], [2, 17, 0])).toBe(0);
    expect(compareVersions([2, 34], [2, 17])).toBeGreaterThan(0);
  });
});
