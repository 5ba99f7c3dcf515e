// Start-up (issue 40): loading the package leaves out the modules an AniLink call does not need
// (pagination, the OAuth token exchanges, mapExternalIds), and the functions exported in their
// place are the ones every entry and every client hands out. Checked in fresh Node processes,
// since the test process itself has loaded everything.
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

/** The lib/ modules a fresh process has loaded after running `code` (CommonJS, or ESM with `esm`). */
async function loadedAfter(code: string, esm = false): Promise<string[]> {
  const report = "console.log(JSON.stringify(Object.keys(require('node:module')._cache)))";
  const script = esm
    ? `${code}; const { createRequire } = await import('node:module'); const require = createRequire(import.meta.url); ${report}`
    : `${code}; ${report}`;
  const args = esm ? ['--input-type=module', '-e', script] : ['-e', script];
  const { stdout } = await run(process.execPath, args, { cwd: packageRoot, timeout: 15_000 });
  const lib = `${join(packageRoot, 'lib')}/`;
  return (JSON.parse(stdout) as string[]).filter((file) => file.startsWith(lib)).map((file) => file.slice(lib.length));
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
