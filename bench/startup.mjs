// Start-up: how long `require('anilink-api-wrapper')` and `import('anilink-api-wrapper')` take in
// a fresh Node process, the package installed from its packed tarballs (the main one and this
// platform's) as a user gets it. Beside it, axios, the original package's one runtime
// dependency: the original itself is not on the npm registry this machine reaches, and a plain
// TypeScript wrapper of axios starts no faster than axios does. And an empty package: the floor
// any package starts from on this Node.
// Warm: one untimed process first (file cache), then the median of `RUNS` fresh processes.

import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

const require = createRequire(import.meta.url);
const RUNS = 9;
const FLOOR_PACKAGE = 'empty-package';
/** An empty package laid out as ours: its ESM entry loads its CommonJS entry through `createRequire`. */
const BRIDGED_FLOOR_PACKAGE = 'empty-bridged-package';
export const STARTUP_TARGET_MS = 10;
/** The third way of loading: `import` in a process whose ESM loader another import started. */
const LOADER_UP = 'import, ESM loader up';
const HOWS = ['require', 'import', LOADER_UP];

/** The repo's packed main tarball and this platform's package (with the built binary), installed offline. */
function installPacked(repoDir, work) {
  const pkg = JSON.parse(readFileSync(join(repoDir, 'package.json'), 'utf8'));
  const { platformName } = require(join(repoDir, 'lib', 'platform.cjs'));
  const host = platformName();
  const binary = `${pkg.napi.binaryName}.${host}.node`;
  if (!existsSync(join(repoDir, binary))) throw new Error(`${binary} is missing: run \`npm run build\` first`);
  const platformDir = join(work, 'platform');
  mkdirSync(platformDir);
  copyFileSync(join(repoDir, 'npm', host, 'package.json'), join(platformDir, 'package.json'));
  copyFileSync(join(repoDir, binary), join(platformDir, binary));
  const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const packed = JSON.parse(
    npm(['pack', repoDir, platformDir, '--json', '--ignore-scripts', '--pack-destination', work], work),
  );
  const consumer = join(work, 'consumer');
  mkdirSync(consumer);
  writeFileSync(join(consumer, 'package.json'), '{"name":"startup-consumer","private":true}');
  npm(
    [
      'install',
      '--offline',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      ...packed.map((p) => join(work, p.filename)),
    ],
    consumer,
  );
  writeFloorPackage(join(consumer, 'node_modules', FLOOR_PACKAGE), 'export {};\n');
  // What the same empty module costs behind our entry layout (lib/index.node.mjs): the CommonJS
  // loader's first use inside an ESM program, which Node 20 and 22 charge several ms for.
  writeFloorPackage(
    join(consumer, 'node_modules', BRIDGED_FLOOR_PACKAGE),
    "import { createRequire } from 'node:module';\nexport default createRequire(import.meta.url)('./index.cjs');\n",
  );
  return consumer;
}

/**
 * What loading any package costs this Node: one with an empty module per module system
 * (`import` gets ESM, `require` CommonJS). Node 20's ESM loader alone takes several
 * milliseconds, which no package can go below.
 */
function writeFloorPackage(dir, esmEntry) {
  mkdirSync(dir);
  const exports = { import: './index.mjs', require: './index.cjs' };
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: basename(dir), version: '1.0.0', exports }));
  writeFileSync(join(dir, 'index.mjs'), esmEntry);
  writeFileSync(join(dir, 'index.cjs'), 'module.exports = {};\n');
}

/**
 * Milliseconds one fresh process spends loading `specifier` the `how` way (`require` or
 * `import`): wall time, and CPU time, which other processes on a busy machine disturb less.
 */
function loadMs(cwd, specifier, how) {
  const load =
    how === 'require' ? `require(${JSON.stringify(specifier)})` : `await import(${JSON.stringify(specifier)})`;
  // With the ESM loader already up (an ESM program that has imported something first), the
  // timed import pays for the package alone, not for the loader's first use in the process.
  const before = how === LOADER_UP ? `await import(${JSON.stringify(FLOOR_PACKAGE)}); ` : '';
  const code =
    `${before}const t = performance.now(), c = process.cpuUsage(); ${load}; const u = process.cpuUsage(c);` +
    'console.log(JSON.stringify([performance.now() - t, (u.user + u.system) / 1000]));';
  const args = how === 'require' ? ['-e', code] : ['--input-type=module', '-e', code];
  const run = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', timeout: 30_000 });
  if (run.status !== 0) throw new Error(`${how} ${specifier} failed: ${run.stderr || run.error}`);
  return JSON.parse(run.stdout);
}

function medianOf(cwd, specifier, how) {
  loadMs(cwd, specifier, how);
  const runs = Array.from({ length: RUNS }, () => loadMs(cwd, specifier, how));
  const sorted = (i) => runs.map((r) => r[i]).sort((a, b) => a - b);
  const [wall, cpu] = [sorted(0), sorted(1)];
  return { medianMs: wall[RUNS >> 1], minMs: wall[0], maxMs: wall[RUNS - 1], medianCpuMs: cpu[RUNS >> 1] };
}

/** The start-up rows: ours from installed tarballs, an empty package (the floor), and axios from the repo's node_modules. */
export function measureStartup(repoDir) {
  const work = mkdtempSync(join(tmpdir(), 'anilink-startup-'));
  try {
    const consumer = installPacked(repoDir, work);
    const rows = [];
    for (const [subject, cwd] of [
      ['anilink-api-wrapper', consumer],
      [FLOOR_PACKAGE, consumer],
      [BRIDGED_FLOOR_PACKAGE, consumer],
      ['axios', repoDir],
    ]) {
      // axios is not installed beside the floor package, whose import starts the loader; the
      // bridged floor differs from the plain one only in how `import` reaches its module.
      const hows =
        subject === 'axios'
          ? HOWS.filter((how) => how !== LOADER_UP)
          : subject === BRIDGED_FLOOR_PACKAGE
            ? HOWS.filter((how) => how !== 'require')
            : HOWS;
      for (const how of hows) rows.push({ subject, how, runs: RUNS, ...medianOf(cwd, subject, how) });
    }
    return rows;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
