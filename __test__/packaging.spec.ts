// The published layout, checked from real tarballs: a main package without binaries whose
// per-platform binaries come as optional dependencies (napi-rs v3), installed in fresh folders
// with no Rust on PATH, offline (every dependency is a local tarball). POSIX shells and PATHs:
// on Windows the release workflow's own install and test jobs cover the layout.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
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
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
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

/** Runs npm; its stdout and stderr (where npm's warnings go). Throws with both when it fails. */
function npm(args: string[], cwd: string, timeout = 120_000): { stdout: string; stderr: string } {
  const run = spawnSync('npm', args, { cwd, env, encoding: 'utf8', timeout });
  if (run.status !== 0) throw new Error(`npm ${args.join(' ')} failed (${run.status}):\n${run.stdout}${run.stderr}`);
  return { stdout: run.stdout, stderr: run.stderr };
}

/**
 * `npm pack` of each of `dirs` into `work`, in one npm run. Without scripts, except for the repo
 * itself: its prepack takes the pack-time hooks out of the packed manifest (so `prepare` does not
 * rebuild the addon), as `npm publish` does.
 */
function pack(dirs: string[], { runScripts = false } = {}): { filename: string; files: string[] }[] {
  const flags = runScripts ? [] : ['--ignore-scripts'];
  const results = JSON.parse(npm(['pack', ...dirs, '--json', ...flags, '--pack-destination', work], work).stdout);
  return results.map((r: { filename: string; files: { path: string }[] }) => ({
    filename: join(work, r.filename),
    files: r.files.map((f) => f.path),
  }));
}

/** What each `install` printed, by folder name. */
const installOutput = new Map<string, string>();

/** A fresh consumer folder with `tarball` installed by `npm install <extra>`. */
function install(name: string, tarball: string, extra: string[] = []): string {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `consumer-${name}`, private: true }));
  const { stdout, stderr } = npm(['install', '--offline', '--no-package-lock', ...extra, tarball], dir);
  installOutput.set(name, stdout + stderr);
  return dir;
}

function runNode(cwd: string, args: string[]) {
  return spawnSync(process.execPath, args, { cwd, env, encoding: 'utf8', timeout: 20_000 });
}

describe.runIf(process.platform !== 'win32')('packaging', () => {
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'anilink-packaging-'));
    [{ filename: mainTarball, files: mainFiles }] = pack([root], { runScripts: true });

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
    const tarballs = pack(names.map((name) => join(project, 'npm', name.slice(pkg.name.length + 1))));
    const optionalDependencies = Object.fromEntries(names.map((name, i) => [name, `file:${tarballs[i].filename}`]));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ ...manifest, optionalDependencies }, null, 2));
    let installableFiles: string[];
    [{ filename: installable, files: installableFiles }] = pack([project]);
    expect(installableFiles.filter((f) => f.endsWith('.node'))).toEqual([]);
  }, 300_000);

  // The Next.js app's install alone is some 350 MB.
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  }, 120_000);

  describe('the main tarball', () => {
    it('ships no binary, the typings for both module systems, the licence and the loader', () => {
      expect(mainFiles.filter((f) => f.endsWith('.node'))).toEqual([]);
      for (const file of ['LICENSE', 'README.md', 'package.json', 'lib/native.cjs', 'lib/platform.cjs']) {
        expect(mainFiles).toContain(file);
      }
      for (const entry of ['index', 'anilist', 'mal']) {
        expect(mainFiles).toContain(`types/entries/${entry}.d.ts`);
        expect(mainFiles).toContain(`types/entries/${entry}.d.mts`);
      }
      expect(mainFiles.some((f) => f.startsWith('src/') || f.startsWith('crates/') || f.startsWith('npm/'))).toBe(
        false,
      );
    });

    it('has no install or pack-time script in its manifest; the repo keeps `prepare` for its own install', () => {
      const manifest = JSON.parse(
        execFileSync('tar', ['xzf', mainTarball, '-O', 'package/package.json'], { encoding: 'utf8' }),
      );
      for (const hook of ['preinstall', 'install', 'postinstall', 'prepare', 'prepack', 'postpack']) {
        expect(manifest.scripts, hook).not.toHaveProperty(hook);
      }
      // The clone's `npm install` (README: Set up) still builds the addon; the pack put it back.
      expect(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.prepare).toBe('npm run build');
      expect(existsSync(join(root, '.package.json.prepack'))).toBe(false);
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
      expect(installOutput.get('host')).not.toMatch(/anilink|install-scripts|warn/i);
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

    it("a binary the system cannot load is reported at its first use, with the dynamic loader's own message", () => {
      const dir = install('unloadable', installable);
      const binary = join(dir, 'node_modules', `${pkg.name}-${host}`, `${pkg.napi.binaryName}.${host}.node`);
      writeFileSync(binary, 'not a shared object');
      // Loading the package finds the binary; the first client loads it (docs/platforms.md).
      expect(runNode(dir, ['-e', "require('anilink-api-wrapper')"]).status).toBe(0);
      const run = runNode(dir, ['-e', "const { AniLink } = require('anilink-api-wrapper'); new AniLink()"]);
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

  // docs/bundlers.md: each recipe bundles the same small app, then runs the output
  // from a folder of its own (with the package installed there when the recipe keeps it external).
  describe('bundled (docs/bundlers.md)', () => {
    const esbuild = join(root, 'node_modules', '.bin', 'esbuild');
    const appSource = join(__dirname, 'fixtures', 'bundlers', 'app.mjs');
    const expected = { title: 'Cowboy Bebop', networkError: true, errorName: 'AniLinkNetworkError' };
    const createRequireBanner =
      "--banner:js=import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";
    let build: string;

    beforeAll(() => {
      build = install('bundle-build', installable);
      copyFileSync(appSource, join(build, 'app.mjs'));
    });

    function bundle(cwd: string, flags: string[]) {
      return spawnSync(esbuild, ['app.mjs', '--bundle', '--platform=node', '--log-level=warning', ...flags], {
        cwd,
        env,
        encoding: 'utf8',
        timeout: 60_000,
      });
    }

    /** Copies the files `from` a build's output folder into a new folder and runs `file` there. */
    function runFromOwnFolder(name: string, from: string, file: string) {
      const dir = join(work, name);
      cpSync(from, dir, { recursive: true });
      return runNode(dir, [file]);
    }

    function expectAppRan(run: ReturnType<typeof runNode>) {
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual(expected);
    }

    it('esbuild as is stops at build time on the binary, naming the .node file', () => {
      const run = bundle(build, ['--outfile=plain/app.cjs']);
      expect(run.status).not.toBe(0);
      expect(run.stderr).toContain('No loader is configured for ".node" files');
      expect(run.stderr).toContain(`${pkg.name}-${host}`);
    });

    it('esbuild CommonJS with --loader:.node=copy runs with the binary beside the bundle', () => {
      const built = bundle(build, ['--format=cjs', '--loader:.node=copy', '--outdir=esbuild-cjs']);
      expect(built.stderr).toBe('');
      expect(readdirSync(join(build, 'esbuild-cjs')).some((f) => f.endsWith('.node'))).toBe(true);
      expectAppRan(runFromOwnFolder('run-esbuild-cjs', join(build, 'esbuild-cjs'), 'app.js'));
    });

    it('esbuild ESM with the createRequire banner and --loader:.node=copy runs', () => {
      const flags = ['--format=esm', '--loader:.node=copy', '--outdir=esbuild-esm', '--out-extension:.js=.mjs'];
      const built = bundle(build, [...flags, createRequireBanner]);
      expect(built.stderr).toBe('');
      expectAppRan(runFromOwnFolder('run-esbuild-esm', join(build, 'esbuild-esm'), 'app.mjs'));
    });

    it('esbuild and webpack with the package external run where the package is installed', async () => {
      const deploy = install('bundle-deploy', installable);
      for (const [format, out] of [
        ['cjs', 'esbuild.cjs'],
        ['esm', 'esbuild.mjs'],
      ]) {
        const external = bundle(build, [`--format=${format}`, `--external:${pkg.name}`, `--outfile=external/${out}`]);
        expect(external.stderr).toBe('');
      }
      const { default: webpack } = await import('webpack');
      const stats = await new Promise<import('webpack').Stats>((resolve, reject) =>
        webpack(
          {
            mode: 'none',
            target: 'node',
            context: build,
            entry: './app.mjs',
            output: { path: join(build, 'external'), filename: 'webpack.cjs' },
            externals: { [pkg.name]: `commonjs ${pkg.name}` },
          },
          (error, result) => (error || !result ? reject(error) : resolve(result)),
        ),
      );
      expect(stats.toJson({ all: false, errors: true, warnings: true })).toMatchObject({ errors: [], warnings: [] });
      for (const file of ['esbuild.cjs', 'esbuild.mjs', 'webpack.cjs']) {
        copyFileSync(join(build, 'external', file), join(deploy, file));
        expectAppRan(runNode(deploy, [file]));
      }
    });

    it('@vercel/nft (Next.js output tracing, Vercel) traces the binary; the traced files alone run the app', async () => {
      const { nodeFileTrace } = await import('@vercel/nft');
      const { fileList } = await nodeFileTrace([join(build, 'app.mjs')], { base: build });
      const binary = `node_modules/${pkg.name}-${host}/${pkg.napi.binaryName}.${host}.node`;
      expect([...fileList]).toContain(binary);
      const traced = join(work, 'run-traced');
      for (const file of fileList) {
        mkdirSync(dirname(join(traced, file)), { recursive: true });
        copyFileSync(join(build, file), join(traced, file));
      }
      expectAppRan(runNode(traced, ['app.mjs']));
    });

    // The README's Next.js recipe: `next build` of a small App Router app (a route handler doing
    // what app.mjs does) in a folder of its own, with Next from the npm registry at this repo's
    // versions and the package from its tarballs; then `next start` on 127.0.0.1 and one request.
    // Minutes of a 2-core machine and nothing that depends on the Node major or the I/O path, so
    // the repeated runs of the suite (.ci/run: worker mode, Node 22 and 24) leave it out.
    it.skipIf(process.env.ANILINK_REPEATED_RUN === '1')(
      'Next.js with serverExternalPackages builds, and its route handler calls through the package',
      async () => {
        const app = join(work, 'nextjs-app');
        cpSync(join(__dirname, 'fixtures', 'nextjs'), app, { recursive: true });
        const versions = ['next', 'react', 'react-dom'].map(
          (name) => `${name}@${require(`${name}/package.json`).version}`,
        );
        // --prefer-offline: npm's cache has them after this repo's install; the registry otherwise.
        npm(['install', '--prefer-offline', '--no-package-lock', installable, ...versions], app, 240_000);
        const nextEnv = { ...env, NEXT_TELEMETRY_DISABLED: '1' };
        const nextCli = join(app, 'node_modules', 'next', 'dist', 'bin', 'next');
        const build = () =>
          spawnSync(process.execPath, [nextCli, 'build'], {
            cwd: app,
            env: nextEnv,
            encoding: 'utf8',
            timeout: 240_000,
          });

        // Without the recipe the build stops on the loader's run-time require of the binary.
        const config = join(app, 'next.config.mjs');
        const recipe = readFileSync(config, 'utf8');
        writeFileSync(config, 'export default {};\n');
        const unconfigured = build();
        expect(unconfigured.status).not.toBe(0);
        expect(unconfigured.stdout + unconfigured.stderr).toContain(`${pkg.name}/lib/native.cjs`);

        writeFileSync(config, recipe);
        const built = build();
        expect(built.stderr).toBe('');
        expect(built.status).toBe(0);

        const listen = (server: Server) =>
          new Promise<number>((done) =>
            server.listen(0, '127.0.0.1', () => done((server.address() as AddressInfo).port)),
          );
        const upstream = createServer((req, res) => {
          req.resume();
          req.on('end', () => {
            res.setHeader('content-type', 'application/json');
            res.end(JSON.stringify({ data: { Media: { id: 1, title: { romaji: 'Cowboy Bebop' } } } }));
          });
        });
        const freePort = async () => {
          const probe = createServer();
          const port = await listen(probe);
          await new Promise((done) => probe.close(done));
          return port;
        };
        const upstreamPort = await listen(upstream);
        const [closedPort, nextPort] = [await freePort(), await freePort()];
        const server = spawn(process.execPath, [nextCli, 'start', '-H', '127.0.0.1', '-p', String(nextPort)], {
          cwd: app,
          env: {
            ...nextEnv,
            UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}`,
            CLOSED_URL: `http://127.0.0.1:${closedPort}`,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        try {
          let output = '';
          await new Promise<void>((ready, fail) => {
            const timer = setTimeout(() => fail(new Error(`next start was not ready in 60 s:\n${output}`)), 60_000);
            const read = (chunk: Buffer) => {
              output += chunk;
              if (output.includes('Ready')) {
                clearTimeout(timer);
                ready();
              }
            };
            server.stdout.on('data', read);
            server.stderr.on('data', read);
            server.on('exit', (code) => fail(new Error(`next start exited (${code}):\n${output}`)));
          });
          const response = await fetch(`http://127.0.0.1:${nextPort}/media`, { signal: AbortSignal.timeout(30_000) });
          expect(response.status).toBe(200);
          expect(await response.json()).toEqual(expected);
        } finally {
          if (server.exitCode === null && server.signalCode === null) {
            const exited = new Promise((done) => server.once('exit', done));
            server.kill();
            await exited;
          }
          upstream.close();
        }
      },
      600_000,
    );

    it('a bundle that cannot reach the binary says it is bundled and how to fix it', () => {
      const withoutBinary = install('bundle-build-without-binary', installable, ['--omit=optional']);
      copyFileSync(appSource, join(withoutBinary, 'app.mjs'));
      for (const [format, out] of [
        ['cjs', 'app.cjs'],
        ['esm', 'app.mjs'],
      ]) {
        const flags = [`--format=${format}`, `--outfile=unreachable-${format}/${out}`];
        expect(bundle(withoutBinary, format === 'esm' ? [...flags, createRequireBanner] : flags).status).toBe(0);
        const run = runFromOwnFolder(`run-unreachable-${format}`, join(withoutBinary, `unreachable-${format}`), out);
        expect(run.status).toBe(1);
        expect(run.stderr).toContain('This code runs from a bundle');
        expect(run.stderr).toContain(`--external:${pkg.name}`);
        expect(run.stderr).toContain(`serverExternalPackages: ['${pkg.name}']`);
        expect(run.stderr).toContain('docs/bundlers.md');
      }
    });
  });

  // Every entry under --strict in each module resolution a consumer may use, from the installed
  // package, with the declaration files checked too (skipLibCheck off).
  describe('TypeScript consumers', () => {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const consumerSource = [
      `import { AniLink, AniLinkNetworkError } from '${pkg.name}';`,
      `import { AniLink as AniListEntryClient } from '${pkg.name}/anilist';`,
      `import { malPaginate } from '${pkg.name}/mal';`,
      `import { startTestUpstream, type TestUpstream } from '${pkg.name}/testing';`,
      'const client: AniLink = new AniListEntryClient();',
      'const upstream: Promise<TestUpstream> = startTestUpstream();',
      "const isNetwork: boolean = new Error('x') instanceof AniLinkNetworkError;",
      'export { client, upstream, isNetwork, malPaginate };',
      '',
    ].join('\n');
    const modes = [
      { mode: 'node10', type: 'commonjs', module: 'commonjs', moduleResolution: 'node10' },
      { mode: 'node16 in a CommonJS package', type: 'commonjs', module: 'node16', moduleResolution: 'node16' },
      { mode: 'node16 in an ESM package', type: 'module', module: 'node16', moduleResolution: 'node16' },
      { mode: 'nodenext in a CommonJS package', type: 'commonjs', module: 'nodenext', moduleResolution: 'nodenext' },
      { mode: 'nodenext in an ESM package', type: 'module', module: 'nodenext', moduleResolution: 'nodenext' },
      { mode: 'bundler', type: 'module', module: 'esnext', moduleResolution: 'bundler' },
    ];
    let consumers: string;

    beforeAll(() => {
      consumers = install('typescript', installable);
    });

    it.each(modes)(
      'type-checks every entry under --strict with $mode',
      ({ mode, type, module, moduleResolution }) => {
        const dir = join(consumers, mode.replace(/\W+/g, '-'));
        mkdirSync(dir);
        writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'typed-consumer', private: true, type }));
        writeFileSync(join(dir, 'consumer.ts'), consumerSource);
        const compilerOptions = {
          strict: true,
          noEmit: true,
          // Declaration files are checked (TS1479 and its kin are reported in them), except
          // TypeScript's own standard library: a run takes some 4 s instead of 9.
          skipLibCheck: false,
          skipDefaultLibCheck: true,
          target: 'ES2022',
          lib: ['ES2022', 'ESNext.Disposable'],
          typeRoots: [join(root, 'node_modules', '@types')],
          types: ['node'],
          module,
          moduleResolution,
        };
        writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts'] }));
        const run = spawnSync(process.execPath, [tsc, '-p', dir], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
        expect(run.stdout + run.stderr).toBe('');
        expect(run.status).toBe(0);
      },
      60_000,
    );
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
