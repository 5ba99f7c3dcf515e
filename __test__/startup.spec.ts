// Start-up (issue 40): loading the package leaves out the native binary (loaded by its first
// use) and the modules an AniLink call does not need (pagination, the OAuth token exchanges,
// mapExternalIds), and the objects exported in their place are the ones every entry and every
// client hands out. Checked in fresh Node processes, since the test process itself has loaded
// everything.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const packageRoot = join(__dirname, '..');
const ON_DEMAND = ['paginate.cjs', 'oauth.cjs', 'map-external-ids.cjs', 'external.cjs'];
/** All that loading the package loads: the client's parts wait for the first client or call. */
const AT_LOAD = [
  'anilink.cjs',
  'errors.cjs',
  'helpers.cjs',
  'index.cjs',
  'native.cjs',
  'on-demand.cjs',
  'platform.cjs',
];

/** Every module a fresh process has loaded after running `code` (CommonJS, or ESM with `esm`). */
async function modulesAfter(code: string, esm = false): Promise<string[]> {
  const report = "console.log(JSON.stringify(Object.keys(require('node:module')._cache)))";
  const script = esm
    ? `${code}; const { createRequire } = await import('node:module'); const require = createRequire(import.meta.url); ${report}`
    : `${code}; ${report}`;
  const args = esm ? ['--input-type=module', '-e', script] : ['-e', script];
  const { stdout } = await run(process.execPath, args, { cwd: packageRoot, timeout: 15_000 });
  return JSON.parse(stdout) as string[];
}

/** The lib/ modules a fresh process has loaded after running `code`. */
async function loadedAfter(code: string, esm = false): Promise<string[]> {
  const lib = `${join(packageRoot, 'lib')}/`;
  return (await modulesAfter(code, esm)).filter((file) => file.startsWith(lib)).map((file) => file.slice(lib.length));
}

/** The native binaries a fresh process has loaded after running `code`. */
async function binariesAfter(code: string, esm = false): Promise<string[]> {
  return (await modulesAfter(code, esm)).filter((file) => file.endsWith('.node'));
}

describe('start-up', () => {
  it.each([
    ['require', "require('anilink-api-wrapper')", false],
    ['import', "await import('anilink-api-wrapper')", true],
  ])('%s of the package, then a client, loads none of the on-demand modules', async (_how, load, esm) => {
    const loaded = await loadedAfter(`const { AniLink } = ${load}; new AniLink('token')`, esm as boolean);
    expect(loaded).toContain('anilink.cjs');
    for (const module of ON_DEMAND) expect(loaded).not.toContain(module);
  });

  it.each([
    ['require', "require('anilink-api-wrapper')", false],
    ['import', "await import('anilink-api-wrapper')", true],
  ])(
    '%s of the package alone loads only the entry, the loader, the errors and the helpers',
    async (_how, load, esm) => {
      const loaded = await loadedAfter(load, esm as boolean);
      expect(loaded.sort()).toEqual(AT_LOAD);
    },
  );

  it.each([
    ['require', "require('anilink-api-wrapper')", false],
    ['import', "await import('anilink-api-wrapper')", true],
    [
      'import of every entry',
      ['anilist', 'mal', 'testing', 'otel'].map((entry) => `await import('anilink-api-wrapper/${entry}')`).join('; '),
      true,
    ],
  ])('%s loads no native binary; the first client loads it', async (_how, load, esm) => {
    expect(await binariesAfter(load, esm as boolean)).toEqual([]);
    const client = esm ? `const { AniLink } = await import('anilink-api-wrapper')` : `const { AniLink } = ${load}`;
    expect(await binariesAfter(`${load}; ${client}; new AniLink()`, esm as boolean)).toHaveLength(1);
  });

  it('the exports that need no native work leave the binary unloaded', async () => {
    const code = `
      const root = require('anilink-api-wrapper');
      root.fuzzyDate({ year: 2024, month: 3, day: 5 });
      root.buildAuthorizationUrl('123', 'https://example.test/callback');
      root.snapshotTransportState({});
      if (root.AniLinkErrorCodes.NETWORK !== 'NETWORK_ERROR' || !root.MAL_API_BASE_URL.startsWith('https://'))
        throw new Error('contract not read');`;
    expect(await binariesAfter(code)).toEqual([]);
  });

  it('ResponseCache is exported before the binary loads; constructing one loads it, and it is the binding class', async () => {
    const code = `
      const { createRequire } = await import('node:module');
      const { ResponseCache, AniLink, snapshotTransportState } = await import('anilink-api-wrapper');
      const loadedBefore = Object.keys(createRequire(import.meta.url).cache).some((file) => file.endsWith('.node'));
      class Counting extends ResponseCache {
        writes = 0;
        set(...args) { this.writes++; return super.set(...args); }
      }
      const cache = new Counting({ ttlMs: 60_000 });
      cache.set('GET', 'https://example.test/a', undefined, undefined, { ok: 1 });
      // The binding takes it as a slot's cache (it throws a TypeError for anything else).
      new AniLink({ anilist: { responseCache: cache } });
      console.error(JSON.stringify({
        loadedBefore,
        isCache: cache instanceof ResponseCache,
        got: cache.get('GET', 'https://example.test/a'),
        writes: cache.writes,
        entries: snapshotTransportState({}, cache).responseCache.entries,
      }));`;
    const { stderr } = await run(process.execPath, ['--input-type=module', '-e', code], {
      cwd: packageRoot,
      timeout: 15_000,
    });
    expect(JSON.parse(stderr)).toEqual({ loadedBefore: false, isCache: true, got: { ok: 1 }, writes: 1, entries: 1 });
  });

  it('the first client and the first call load the call path; the exports stay the same, errors typed', async () => {
    const code = `
      const root = await import('anilink-api-wrapper');
      const before = Object.values(root);
      const client = new root.AniLink('token');
      const thrown = await client.anilist.custom('query { Viewer { id } }', { n: NaN }).catch((error) => error);
      if (!(thrown instanceof root.AniLinkValidationError) || thrown.code !== root.AniLinkErrorCodes.VALIDATION)
        throw new Error('not a typed validation error: ' + thrown);
      if (!Object.values(root).every((value, i) => value === before[i])) throw new Error('an export changed');`;
    const loaded = await loadedAfter(code, true);
    const callPath = [
      'call.cjs',
      'json-text.cjs',
      'slot-environment.cjs',
      'refresh.cjs',
      'watch.cjs',
      'transport-state.cjs',
    ];
    expect(loaded).toEqual(expect.arrayContaining(callPath));
  });

  it.each([
    [[], 'lib/index.node.mjs'],
    [['--conditions=module'], 'lib/index.mjs'],
  ])(
    'import with conditions %j (bundlers set `module`) loads %s, handing out the same objects',
    async (flags, entry) => {
      const code = `
      const { createRequire } = await import('node:module');
      const required = createRequire(import.meta.url)('anilink-api-wrapper');
      const imported = await import('anilink-api-wrapper');
      const same = Object.keys(required).every((name) => imported[name] === required[name]);
      console.log(JSON.stringify([import.meta.resolve('anilink-api-wrapper'), same]));`;
      const { stdout } = await run(process.execPath, [...flags, '--input-type=module', '-e', code], {
        cwd: packageRoot,
        timeout: 15_000,
      });
      const [resolved, same] = JSON.parse(stdout) as [string, boolean];
      expect(resolved.endsWith(`/${entry}`)).toBe(true);
      expect(same).toBe(true);
    },
  );

  it('the first use of an on-demand export loads its module, and the export stays the same function', async () => {
    const code = `
      const root = require('anilink-api-wrapper');
      const client = new root.AniLink();
      const before = [root.paginate, root.getMalAccessToken, root.mapExternalIds];
      const pages = root.paginatePages(async () => ({ pageInfo: { hasNextPage: false }, items: [] }));
      if (typeof pages[Symbol.asyncIterator] !== 'function') throw new Error('not an async iterator');
      root.getMalAccessToken({}).catch(() => {});
      const same = [root.paginate, root.getMalAccessToken, root.mapExternalIds].every((f, i) => f === before[i]);
      if (!same || client.anilist.paginate !== root.paginate || client.mal.auth.exchangeCode !== root.getMalAccessToken)
        throw new Error('an export changed');`;
    const loaded = await loadedAfter(code);
    expect(loaded).toEqual(expect.arrayContaining(['paginate.cjs', 'oauth.cjs', 'external.cjs']));
    expect(loaded).not.toContain('map-external-ids.cjs');
  });

  it.each([
    ['paginate', 3],
    ['paginatePages', 2],
    ['paginateChunks', 3],
    ['malPaginate', 2],
    ['malPaginatePages', 2],
    ['getAccessToken', 5],
    ['refreshAccessToken', 4],
    ['getMalAccessToken', 1],
    ['refreshMalAccessToken', 1],
    ['mapExternalIds', 3],
    ['snapshotTransportState', 2],
  ])('%s keeps its name and its %i parameters', async (name, length) => {
    const root = await import('anilink-api-wrapper');
    const exported = root[name as keyof typeof root] as (...args: unknown[]) => unknown;
    expect(exported.name).toBe(name);
    expect(exported.length).toBe(length);
  });
});
