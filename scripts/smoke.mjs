#!/usr/bin/env node
// One real call through the package: loads it with `import` and `require`, checks both give
// the same class, and serves `anilist.query.media({ id: 1 })` from a server on 127.0.0.1 that it
// starts itself. Prints one JSON line; exits non-zero on any failure. The package is resolved
// from where this file is: run in place it is this checkout (a self-reference); copied into a
// consumer folder it is the installed package.

import { createServer } from 'node:http';
import { createRequire } from 'node:module';

const esm = await import('anilink-api-wrapper');
const cjs = createRequire(import.meta.url)('anilink-api-wrapper');

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ data: { Media: { id: 1, title: { romaji: 'Cowboy Bebop' } } } }));
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUrl = `http://127.0.0.1:${server.address().port}`;
try {
  const client = new esm.AniLink({ anilist: { baseUrl, retry: false } });
  const media = await client.anilist.query.media({ id: 1 });
  console.log(
    JSON.stringify({
      node: process.version,
      arch: process.arch,
      sameClass: esm.AniLink === cjs.AniLink,
      title: media.title.romaji,
    }),
  );
  if (esm.AniLink !== cjs.AniLink || media.title.romaji !== 'Cowboy Bebop') process.exitCode = 1;
} finally {
  esm.destroyCachedAgents();
  server.close();
}
