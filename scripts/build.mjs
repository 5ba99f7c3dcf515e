#!/usr/bin/env node
// Builds the addon into the package root (`anilink-api-wrapper.<platform>.node`): what
// `npm run build` (and so `npm install` in a clone) and `npm run build:debug` run.
//
// On Linux x64 with glibc it links against glibc 2.17 with napi-rs's gcc cross toolchain
// (`napi build --use-napi-cross`), so the binary loads on every glibc since 2013 (RHEL 7,
// Debian 8, Ubuntu 14.04), as the published linux-x64-gnu package does. The toolchain is an
// npm package, which we fetch and unpack ourselves (system tar and xz): the CLI's own download
// asks for a toolchain version that is not published for x86_64 (its 1.0.5; 1.0.0 is), and its
// unpacker needs `@napi-rs/lzma`, whose binary npm skips on Node 20 (engines ^22.20).
// Elsewhere it is a plain host build.
//
//   node scripts/build.mjs [--release] [--target <triple>] [other napi build flags] [-- <cargo args>]
//
// `--use-napi-cross` is added for the targets of NAPI_CROSS_TOOLCHAINS on an x64 Linux host,
// unless `-x` (cargo-zigbuild) is given. `--pgo` makes it a profile-guided build (see `build`
// below and scripts/pgo.mjs).

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { platformName } = require('../lib/platform.cjs');
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The napi-rs gcc toolchains (glibc 2.17 sysroot) for an x64 host, by target, at the newest
 * version each has on the npm registry. No armv7 toolchain is published for x64 hosts.
 */
export const NAPI_CROSS_TOOLCHAINS = {
  'x86_64-unknown-linux-gnu': '@napi-rs/cross-toolchain-x64-target-x86_64@1.0.0',
  'aarch64-unknown-linux-gnu': '@napi-rs/cross-toolchain-x64-target-aarch64@1.0.3',
};

/**
 * C flags a toolchain needs for our C dependencies: its gcc 4.8 predates `__ARM_ARCH` on
 * aarch64, which ring's assembly requires.
 */
const NAPI_CROSS_CFLAGS = { 'aarch64-unknown-linux-gnu': '-D__ARM_ARCH=8' };

/** The glibc every Linux gnu binary we build and ship links against at most. */
export const GLIBC_FLOOR = [2, 17];

/**
 * Puts the toolchain for `triple` where `napi build --use-napi-cross` looks for it
 * (`~/.napi-rs/cross-toolchain/<cli toolchain version>/<triple>`), unless it is there already.
 */
export function ensureNapiCrossToolchain(triple) {
  const spec = NAPI_CROSS_TOOLCHAINS[triple];
  if (!spec) throw new Error(`no napi-rs cross toolchain for ${triple} on this host`);
  const { version } = require('@napi-rs/cross-toolchain/package.json');
  const dest = join(homedir(), '.napi-rs', 'cross-toolchain', version, triple);
  if (existsSync(join(dest, 'package.json'))) return dest;

  const work = mkdtempSync(join(tmpdir(), 'napi-cross-'));
  try {
    console.error(`build: fetching ${spec} (about 50 MB) from the npm registry`);
    const tarball = execFileSync('npm', ['pack', spec, '--silent'], { cwd: work, encoding: 'utf8' }).trim();
    execFileSync('tar', ['xzf', tarball], { cwd: work });
    const unpacked = join(work, 'toolchain');
    mkdirSync(unpacked);
    execFileSync('tar', ['xJf', join(work, 'package', `${triple}.tar.xz`), '-C', unpacked]);
    rmSync(dest, { recursive: true, force: true });
    mkdirSync(dirname(dest), { recursive: true });
    renameSync(unpacked, dest);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return dest;
}

/** Runs `napi build` for `target` (default: this host) into `outputDir`; returns its exit code. */
export function napiBuild({
  release = false,
  target,
  outputDir = root,
  cargoArgs = [],
  extra = [],
  env: baseEnv = process.env,
  targetDir,
} = {}) {
  const triple = target ?? (platformName() === 'linux-x64-gnu' ? 'x86_64-unknown-linux-gnu' : undefined);
  const args = ['build', '--platform', '--no-js', '--dts', 'binding.d.ts', '-o', outputDir];
  if (release) args.push('--release');
  if (targetDir) args.push('--target-dir', targetDir);
  const env = { ...baseEnv };
  if (triple) {
    args.push('--target', triple);
    const zig = extra.includes('-x') || extra.includes('--cross-compile');
    if (NAPI_CROSS_TOOLCHAINS[triple] && !zig && process.platform === 'linux' && process.arch === 'x64') {
      ensureNapiCrossToolchain(triple);
      args.push('--use-napi-cross');
      const cflags = `CFLAGS_${triple.replaceAll('-', '_')}`;
      if (NAPI_CROSS_CFLAGS[triple] && !env[cflags]) env[cflags] = NAPI_CROSS_CFLAGS[triple];
    }
  }
  args.push(...extra);
  if (cargoArgs.length) args.push('--', ...cargoArgs);
  const napi = join(root, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js');
  const result = spawnSync(process.execPath, [napi, ...args], { cwd: root, env, stdio: 'inherit' });
  return result.status ?? 1;
}

/**
 * `--pgo`: a profile-guided build (scripts/pgo.mjs), failing without a matching llvm-profdata;
 * `--pgo=auto`: the same when one is found, else a plain build that says so (what `npm run
 * build` does); `--pgo=<file.profdata>`: optimized with a profile trained elsewhere (the release
 * workflow's builds for targets the build host cannot run).
 */
async function build(own, cargoArgs) {
  const pgo = own.find((arg) => arg === '--pgo' || arg.startsWith('--pgo='))?.slice('--pgo='.length);
  const targetAt = own.indexOf('--target');
  const options = {
    release: own.includes('--release'),
    target: targetAt === -1 ? undefined : own[targetAt + 1],
    cargoArgs,
    extra: own.filter(
      (arg, i) => arg !== '--release' && !arg.startsWith('--pgo') && i !== targetAt && i !== targetAt + 1,
    ),
  };
  if (pgo === undefined) return napiBuild(options);
  // Loaded only here: the training stack (the simulator's GraphQL executor) is a dev dependency.
  const { pgoToolchain, profileGuidedBuild, useProfile } = await import('./pgo.mjs');
  const stage = ({ env, targetDir, outputDir }) => napiBuild({ ...options, env, targetDir, outputDir });
  if (pgo !== '' && pgo !== 'auto') return useProfile(stage, pgo);
  const { llvmProfdata, missing } = pgoToolchain();
  if (missing.length === 0) return profileGuidedBuild(stage, llvmProfdata);
  const lacking = `a profile-guided build needs ${missing.join(' and ')}`;
  if (pgo === '') throw new Error(`--pgo: ${lacking}`);
  console.error(`build: a plain release build (${lacking}; docs/performance.md, "Profile-guided builds")`);
  return napiBuild(options);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const split = argv.indexOf('--');
  process.exitCode = await build(split === -1 ? argv : argv.slice(0, split), split === -1 ? [] : argv.slice(split + 1));
}
