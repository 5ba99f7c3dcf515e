// The published layout, checked from real tarballs: a main package without binaries whose
// per-platform binaries come as optional dependencies (napi-rs v3), installed in fresh folders
// with no Rust on PATH, offline (every dependency is a local tarball). POSIX shells and PATHs:
// on Windows the release workflow's own install and test jobs cover the layout.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const root = resolve(__dirname, '..');
const pkg = require('../package.json');
const { platformName } = require('../lib/platform.cjs');
const host = platformName();
const hostBinary = join(root, `${pkg.napi.binaryName}.${host}.node`);
const platforms = readdirSync(join(root, 'npm')).sort();

/** PATH with Node and the system tools, without cargo/rustc (no ~/.cargo/bin, no rustup). */
const pathWithoutRust = [dirname(process.execPath), '/usr/local/sbin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']
  .filter((dir) => !existsSync(join(dir, 'cargo')) || dir === dirname(process.execPath))
  .join(':');
const env = { ...process.env, PATH: pathWithoutRust, npm_config_audit: 'false', npm_config_fund: 'false' };

let work: string;
let mainTarball: string;
let mainFiles: string[];
let installable: string;
let publishedOptionalDependencies: Record<string, string>;

function npm(args: string[], cwd: string): string {
  return execFileSync('npm', args, { cwd, env, encoding: 'utf8' });
}

/** `npm pack` of each of `dirs` into `work`, in one npm run (no scripts: `prepare` would rebuild the addon). */
function pack(...dirs: string[]): { filename: string; files: string[] }[] {
  const results = JSON.parse(npm(['pack', ...dirs, '--json', '--ignore-scripts', '--pack-destination', work], work));
  return results.map((r: { filename: string; files: { path: string }[] }) => ({
    filename: join(work, r.filename),
    files: r.files.map((f) => f.path),
  }));
}

/** A fresh consumer folder with `tarball` installed by `npm install <extra>`. */
function install(name: string, tarball: string, extra: string[] = []): string {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `consumer-${name}`, private: true }));
  npm(['install', '--offline', '--no-package-lock', ...extra, tarball], dir);
  return dir;
}

function runNode(cwd: string, args: string[]) {
  return spawnSync(process.execPath, args, { cwd, env, encoding: 'utf8', timeout: 20_000 });
}

describe.runIf(process.platform !== 'win32')('packaging', () => {
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'anilink-packaging-'));
    [{ filename: mainTarball, files: mainFiles }] = pack(root);

    // The release workflow's publish job, minus the registry: the published files plus npm/,
    // the binaries moved into npm/<platform>/ by `napi artifacts` (the host's real one, the
    // others placeholders), then `napi prepublish`, which lists the platform packages in
    // `optionalDependencies`. Those then point at local tarballs instead of the registry.
    const project = join(work, 'project');
    mkdirSync(join(project, 'artifacts'), { recursive: true });
    execFileSync('tar', ['xzf', mainTarball, '-C', project, '--strip-components=1']);
    cpSync(join(root, 'npm'), join(project, 'npm'), { recursive: true });
    for (const platform of platforms) {
      const artifact = join(project, 'artifacts', `${pkg.napi.binaryName}.${platform}.node`);
      if (platform === host) copyFileSync(hostBinary, artifact);
      else writeFileSync(artifact, 'placeholder');
    }
    const napi = (args: string[]) =>
      execFileSync(
        process.execPath,
        [join(root, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js'), ...args, '--cwd', project],
        {
          stdio: 'ignore',
        },
      );
    napi(['artifacts', '--output-dir', 'artifacts', '--npm-dir', 'npm']);
    napi(['prepublish', '-t', 'npm', '--no-gh-release', '--skip-optional-publish']);
    rmSync(join(project, 'artifacts'), { recursive: true });
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
    publishedOptionalDependencies = manifest.optionalDependencies;
    const names = Object.keys(manifest.optionalDependencies);
    const tarballs = pack(...names.map((name) => join(project, 'npm', name.slice(pkg.name.length + 1))));
    const optionalDependencies = Object.fromEntries(names.map((name, i) => [name, `file:${tarballs[i].filename}`]));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ ...manifest, optionalDependencies }, null, 2));
    let installableFiles: string[];
    [{ filename: installable, files: installableFiles }] = pack(project);
    expect(installableFiles.filter((f) => f.endsWith('.node'))).toEqual([]);
  }, 300_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  describe('the main tarball', () => {
    it('ships no binary, the typings for both module systems, the licence and the loader', () => {
      expect(mainFiles.filter((f) => f.endsWith('.node'))).toEqual([]);
      for (const file of ['LICENSE', 'README.md', 'package.json', 'lib/native.cjs', 'lib/platform.cjs']) {
        expect(mainFiles).toContain(file);
      }
      for (const entry of ['index', 'anilist', 'mal']) {
        expect(mainFiles).toContain(`${entry}.d.ts`);
        expect(mainFiles).toContain(`${entry}.d.mts`);
      }
      expect(mainFiles.some((f) => f.startsWith('src/') || f.startsWith('crates/') || f.startsWith('npm/'))).toBe(
        false,
      );
    });

    it('napi prepublish lists every platform package at this version as an optional dependency', () => {
      expect(publishedOptionalDependencies).toEqual(
        Object.fromEntries(platforms.map((platform) => [`${pkg.name}-${platform}`, pkg.version])),
      );
    });

    it('publint reports nothing', async () => {
      const { publint } = await import('publint');
      const { formatMessage } = await import('publint/utils');
      const tarball = readFileSync(mainTarball);
      const { messages, pkg: manifest } = await publint({
        pack: { tarball: tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.byteLength) },
        level: 'suggestion',
        strict: true,
      });
      expect(messages.map((m) => formatMessage(m, manifest))).toEqual([]);
    });

    it('@arethetypeswrong finds no problem under node10, node16 (CJS and ESM) and bundler', async () => {
      const { checkPackage, createPackageFromTarballData } = await import('@arethetypeswrong/core');
      const result = await checkPackage(createPackageFromTarballData(new Uint8Array(readFileSync(mainTarball))));
      expect('problems' in result ? result.problems : result).toEqual([]);
    });
  });

  describe('installed from tarballs in a fresh folder, no Rust on PATH', () => {
    it('has no cargo on the PATH the installs use', () => {
      expect(spawnSync('sh', ['-c', 'command -v cargo rustc'], { env, encoding: 'utf8' }).stdout).toBe('');
    });

    it(`picks this platform's package (${host}) and serves a call with import and require`, () => {
      const dir = install('host', installable);
      const installed = readdirSync(join(dir, 'node_modules')).filter((n) => n.startsWith(`${pkg.name}-`));
      expect(installed).toEqual([`${pkg.name}-${host}`]);
      copyFileSync(join(root, 'scripts', 'smoke.mjs'), join(dir, 'smoke.mjs'));
      const run = runNode(dir, ['smoke.mjs']);
      expect(run.stderr).toBe('');
      expect(JSON.parse(run.stdout)).toMatchObject({ sameClass: true, title: 'Cowboy Bebop' });
    });

    it('npm install --os=darwin --cpu=arm64 picks the darwin-arm64 package, and only it', () => {
      const dir = install('darwin-arm64', installable, ['--os=darwin', '--cpu=arm64']);
      const installed = readdirSync(join(dir, 'node_modules')).filter((n) => n.startsWith(`${pkg.name}-`));
      expect(installed).toEqual([`${pkg.name}-darwin-arm64`]);
    });

    it('with the binary missing, the error names the platform, the package and the fix', () => {
      const dir = install('omitted', installable, ['--omit=optional']);
      expect(existsSync(join(dir, 'node_modules', `${pkg.name}-${host}`))).toBe(false);
      for (const code of ["require('anilink-api-wrapper')", "import('anilink-api-wrapper')"]) {
        const run = runNode(dir, ['-e', code]);
        expect(run.status).toBe(1);
        expect(run.stderr).toContain(
          `no native binary for this platform (${host}: ${process.platform} ${process.arch}`,
        );
        expect(run.stderr).toContain(`optional dependency ${pkg.name}-${host}@${pkg.version}, which is not installed`);
        expect(run.stderr).toContain(`npm install ${pkg.name}-${host}@${pkg.version}`);
        expect(run.stderr).not.toContain('npm has a bug');
      }
    });

    it('a platform without a prebuilt package gets the prebuilt list and the way to build from source', () => {
      const dir = install('freebsd', installable, ['--omit=optional']);
      const code = "Object.defineProperty(process, 'platform', { value: 'freebsd' }); require('anilink-api-wrapper')";
      const run = runNode(dir, ['-e', code]);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(
        `no native binary for this platform (freebsd-${process.arch}: freebsd ${process.arch}`,
      );
      expect(run.stderr).toContain(
        `No prebuilt binary is published for freebsd-${process.arch} (prebuilt: ${Object.keys(
          publishedOptionalDependencies,
        )
          .map((n) => n.slice(pkg.name.length + 1))
          .join(', ')})`,
      );
      expect(run.stderr).toContain('build it from source with Rust');
      // A source checkout (it has Cargo.toml) without a build is told to build.
      writeFileSync(join(dir, 'node_modules', pkg.name, 'Cargo.toml'), '');
      const checkout = runNode(dir, ['-e', "require('anilink-api-wrapper')"]);
      expect(checkout.stderr).toContain(`This is a source checkout without a build: run \`npm run build\``);
    });

    it("a binary the system cannot load is reported with the dynamic loader's own message", () => {
      const dir = install('unloadable', installable);
      const binary = join(dir, 'node_modules', `${pkg.name}-${host}`, `${pkg.napi.binaryName}.${host}.node`);
      writeFileSync(binary, 'not a shared object');
      const run = runNode(dir, ['-e', "require('anilink-api-wrapper')"]);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`the native binary in ${pkg.name}-${host} could not be loaded on this platform`);
      expect(run.stderr).toContain(binary);
      expect(run.stderr.includes('Linux gnu builds need glibc 2.17 or later')).toBe(process.platform === 'linux');
    });

    it('a platform package of another version is refused with the version to install', () => {
      const dir = install('mismatch', installable);
      const manifestPath = join(dir, 'node_modules', `${pkg.name}-${host}`, 'package.json');
      writeFileSync(
        manifestPath,
        JSON.stringify({ ...JSON.parse(readFileSync(manifestPath, 'utf8')), version: '0.0.1' }),
      );
      const run = runNode(dir, ['-e', "require('anilink-api-wrapper')"]);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`${pkg.name}-${host}@0.0.1 is installed, but this is ${pkg.name}@${pkg.version}`);
      expect(run.stderr).toContain(`Fix: npm install ${pkg.name}-${host}@${pkg.version}`);
    });
  });

  describe('platform packages', () => {
    it('one per napi target, each named as the loader names its platform', () => {
      expect(platforms).toHaveLength(pkg.napi.targets.length);
      for (const platform of platforms) {
        const manifest = require(join(root, 'npm', platform, 'package.json'));
        const libc = manifest.libc?.[0] === 'musl' ? 'musl' : 'gnu';
        expect(platformName(manifest.os[0], manifest.cpu[0], libc)).toBe(platform);
        expect(manifest).toMatchObject({
          name: `${pkg.name}-${platform}`,
          version: pkg.version,
          main: `${pkg.napi.binaryName}.${platform}.node`,
          files: [`${pkg.napi.binaryName}.${platform}.node`],
          license: pkg.license,
          repository: pkg.repository,
        });
      }
      expect(platforms).toEqual(
        expect.arrayContaining([
          'darwin-arm64',
          'darwin-x64',
          'linux-arm-gnueabihf',
          'linux-arm64-gnu',
          'linux-arm64-musl',
          'linux-x64-gnu',
          'linux-x64-musl',
          'win32-arm64-msvc',
          'win32-x64-msvc',
        ]),
      );
    });
  });
});
