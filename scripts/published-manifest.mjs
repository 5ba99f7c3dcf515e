#!/usr/bin/env node
// npm's prepack and postpack hooks (`npm pack`, `npm publish`): the published package.json has
// no `prepare`. A clone needs it (its `npm install` builds the addon from source), an installed
// package must not carry it: npm names every package with install scripts on each install.
//   node scripts/published-manifest.mjs strip     prepack: set package.json aside, drop the hooks
//   node scripts/published-manifest.mjs restore   postpack: put the package.json set aside back
// npm reads package.json again after prepack, so `prepare` neither runs nor ships; the pack
// hooks go too (this script is not published), yet postpack still runs from the first reading.

import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifestPath = join(root, 'package.json');
const setAsidePath = join(root, '.package.json.prepack');

/** What npm would run when the published package is installed (`prepare`) or packed again. */
const PACK_TIME_HOOKS = ['prepare', 'prepack', 'postpack'];

const [command] = process.argv.slice(2);
if (command === 'strip') {
  if (existsSync(setAsidePath)) {
    throw new Error(
      `${setAsidePath} is left from a pack that did not finish: check it and move it back to package.json, then pack again`,
    );
  }
  const text = readFileSync(manifestPath, 'utf8');
  writeFileSync(setAsidePath, text);
  const manifest = JSON.parse(text);
  for (const hook of PACK_TIME_HOOKS) delete manifest.scripts[hook];
  // Renamed into place, so that a process reading package.json meanwhile never sees half a file.
  writeFileSync(`${setAsidePath}.stripped`, `${JSON.stringify(manifest, null, 2)}\n`);
  renameSync(`${setAsidePath}.stripped`, manifestPath);
} else if (command === 'restore') {
  if (existsSync(setAsidePath)) renameSync(setAsidePath, manifestPath);
} else {
  throw new Error(`usage: node scripts/published-manifest.mjs strip|restore (got ${command ?? 'nothing'})`);
}
