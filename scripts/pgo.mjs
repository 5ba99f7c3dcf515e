// A profile-guided (PGO) release build of the addon: build it instrumented, run the calls users
// make through it (scripts/pgo-train.mjs against scripts/pgo-server.mjs), merge the counts with
// llvm-profdata, and build again optimized with them. The addon's hot paths are spread over some
// two hundred functions, so one call misses the instruction cache thousands of times; laid out
// by the profile, a `media` call costs about 15% less CPU (docs/performance.md, "Profile-guided
// builds"). What scripts/build.mjs runs for `--pgo`.
//
// llvm-profdata must come from the LLVM that rustc was built with (`rustc -vV`): the raw
// profile's format changes between LLVM majors. Found as rustup's llvm-tools component, or as
// `llvm-profdata-<major>` (Debian's and Ubuntu's llvm-<major> package) or `llvm-profdata` of
// that major on the PATH.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTestCertificates } from '../__test__/support/test-certificates.mjs';
import { startTrainingServers } from './pgo-server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PGO_DIR = join(root, 'target', 'pgo');
/** Where a training run leaves its merged profile (the release workflow hands it to the cross builds). */
const MERGED_PROFILE = join(PGO_DIR, 'anilink.profdata');

/** The LLVM major rustc was built with, from `rustc -vV`. */
function rustcLlvmMajor() {
  const info = execFileSync('rustc', ['-vV'], { encoding: 'utf8' });
  const major = /^LLVM version: (\d+)/m.exec(info)?.[1];
  if (!major) throw new Error(`rustc -vV names no LLVM version:\n${info}`);
  return { major, host: /^host: (\S+)/m.exec(info)[1] };
}

function llvmMajorOf(command) {
  const run = spawnSync(command, ['--version'], { encoding: 'utf8' });
  if (run.error || run.status !== 0) return undefined;
  return /LLVM version (\d+)/.exec(run.stdout)?.[1];
}

/** The first of `candidates` (commands or paths) whose LLVM major is `major`. */
export function llvmProfdataFor(major, candidates) {
  return candidates.find((command) => llvmMajorOf(command) === major);
}

/**
 * What a profile-guided build runs with here: `llvmProfdata`, the one that reads what this
 * rustc's profiler writes, and `missing`, what this machine lacks for it (to install), if anything.
 */
export function pgoToolchain() {
  const { major, host } = rustcLlvmMajor();
  const sysroot = execFileSync('rustc', ['--print', 'sysroot'], { encoding: 'utf8' }).trim();
  const exe = process.platform === 'win32' ? '.exe' : '';
  const llvmProfdata = llvmProfdataFor(major, [
    join(sysroot, 'lib', 'rustlib', host, 'bin', `llvm-profdata${exe}`),
    `llvm-profdata-${major}`,
    'llvm-profdata',
  ]);
  const missing = [];
  if (!llvmProfdata) {
    missing.push(`llvm-profdata of LLVM ${major} (rustup component add llvm-tools, or the llvm-${major} package)`);
  }
  if (spawnSync('openssl', ['version']).status !== 0) missing.push('openssl (the training certificates)');
  return { llvmProfdata, missing };
}

/** The Rust flags of each stage, as one RUSTFLAGS value added to the caller's. */
function withRustFlags(env, flag) {
  const own = env.RUSTFLAGS ?? env.CARGO_BUILD_RUSTFLAGS ?? '';
  return { ...env, RUSTFLAGS: `${own} ${flag}`.trim() };
}

/**
 * A copy of the package (its JavaScript and manifest) around the instrumented binary, so the
 * clone's own root never holds an instrumented addon, whatever happens to this build.
 */
function trainingPackage() {
  const dir = join(PGO_DIR, 'package');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  cpSync(join(root, 'lib'), join(dir, 'lib'), { recursive: true });
  cpSync(join(root, 'package.json'), join(dir, 'package.json'));
  return dir;
}

/**
 * A digest of what the profile depends on: the training package (the instrumented binary and
 * the JavaScript it runs under) and the training programs.
 */
function trainingKey(packageDir) {
  const hash = createHash('sha256');
  const files = readdirSync(packageDir, { recursive: true }).map((name) => join(packageDir, name));
  files.push(...['pgo-train.mjs', 'pgo-server.mjs'].map((script) => join(root, 'scripts', script)));
  for (const file of files.sort()) {
    if (statSync(file).isFile()) hash.update(file).update(readFileSync(file));
  }
  return hash.digest('hex');
}

/** Runs the training program twice: the calls on Node's own thread (the default) and on the tokio worker. */
async function train(packageDir, rawDir) {
  const certificates = makeTestCertificates('DNS:localhost');
  const servers = await startTrainingServers(certificates);
  try {
    for (const ioThread of ['', 'worker']) {
      const env = {
        ...process.env,
        LLVM_PROFILE_FILE: join(rawDir, '%p-%m.profraw'),
        NODE_EXTRA_CA_CERTS: certificates.caFile,
        ANILINK_IO_THREAD: ioThread,
      };
      const args = [join(root, 'scripts', 'pgo-train.mjs'), packageDir, servers.httpUrl, servers.httpsUrl];
      const run = await new Promise((done) => {
        const child = spawn(process.execPath, args, { env, stdio: 'inherit' });
        child.on('exit', (code, signal) => done({ code, signal }));
      });
      if (run.code !== 0) throw new Error(`the PGO training run failed (exit ${run.code ?? run.signal})`);
    }
  } finally {
    servers.close();
    certificates.remove();
  }
}

/**
 * Builds with `build({ env, targetDir, outputDir })` (scripts/build.mjs's napi build)
 * instrumented, trains, merges into MERGED_PROFILE, and builds again with the profile into the
 * package root. Returns the last build's exit code; throws when training or merging fails.
 */
export async function profileGuidedBuild(build, llvmProfdata) {
  const rawDir = join(PGO_DIR, 'raw');
  rmSync(rawDir, { recursive: true, force: true });
  mkdirSync(rawDir, { recursive: true });
  const packageDir = trainingPackage();

  console.error('build: PGO 1/3, the instrumented addon');
  const instrumented = build({
    env: withRustFlags(process.env, `-Cprofile-generate=${rawDir}`),
    targetDir: join(PGO_DIR, 'instrumented'),
    outputDir: packageDir,
  });
  if (instrumented !== 0) return instrumented;

  // The same instrumented package and training give the same profile: reusing it keeps the
  // optimized stage a no-op for cargo (it rebuilds whenever the profile file changes).
  const key = trainingKey(packageDir);
  const keyFile = `${MERGED_PROFILE}.key`;
  if (existsSync(MERGED_PROFILE) && existsSync(keyFile) && readFileSync(keyFile, 'utf8') === key) {
    console.error('build: PGO 2/3, the profile of the same binary and training is kept');
  } else {
    console.error('build: PGO 2/3, training (scripts/pgo-train.mjs)');
    await train(packageDir, rawDir);
    execFileSync(llvmProfdata, ['merge', '-o', MERGED_PROFILE, rawDir], { stdio: 'inherit' });
    writeFileSync(keyFile, key);
  }

  console.error('build: PGO 3/3, the addon optimized with the profile');
  return useProfile(build, MERGED_PROFILE);
}

/** Builds into the package root with an existing merged profile (for a cross target, one trained elsewhere). */
export function useProfile(build, file) {
  // Absolute: cargo runs rustc for each dependency in that crate's own folder.
  const profile = resolve(file);
  if (!existsSync(profile)) throw new Error(`no PGO profile at ${profile}`);
  // A profile trained for another target leaves some functions unmatched: expected, not news.
  const flags = `-Cprofile-use=${profile} -Cllvm-args=-no-pgo-warn-mismatch`;
  return build({ env: withRustFlags(process.env, flags), targetDir: join(PGO_DIR, 'optimized') });
}
