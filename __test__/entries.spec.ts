// Module entries (decisions D15): `require` and `import` of the package and of its
// `/anilist` and `/mal` subpaths all hand out the same AniLink and error class objects, so
// `instanceof` holds whichever entry created or threw an error. Checked in real Node processes
// (one starting from CommonJS, one from ESM) and in the test process itself.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import * as root from 'anilink-api-wrapper';
import * as anilistEntry from 'anilink-api-wrapper/anilist';
import * as malEntry from 'anilink-api-wrapper/mal';

const run = promisify(execFile);
const packageRoot = join(__dirname, '..');
const fixtures = join(__dirname, 'fixtures', 'entries');

/** The names every entry must share: the list the fixture processes check, so both sides agree. */
const { SHARED_EXPORTS } = createRequire(__filename)(join(fixtures, 'identity-report.cjs')) as {
  SHARED_EXPORTS: readonly (keyof typeof root & keyof typeof anilistEntry & keyof typeof malEntry)[];
};

describe.each(['identity.cjs', 'identity.mjs'])('a Node process started from %s', (fixture) => {
  it('sees one set of classes across require, import and both subpaths', async () => {
    const { stdout } = await run(process.execPath, [join(fixtures, fixture)], { cwd: packageRoot, timeout: 15_000 });
    const report = JSON.parse(stdout) as {
      entries: string[];
      mismatches: string[];
      missing: string[];
      notInstances: string[];
    };

    expect(report.entries).toHaveLength(6);
    expect(report.missing).toEqual([]);
    expect(report.mismatches).toEqual([]);
    expect(report.notInstances).toEqual([]);
  });
});

describe('in the test process', () => {
  it.each(SHARED_EXPORTS)('%s is the same object from the root, /anilist and /mal', (name) => {
    expect(root[name]).toBeDefined();
    expect(anilistEntry[name]).toBe(root[name]);
    expect(malEntry[name]).toBe(root[name]);
  });

  it('an error built from a subpath class is an instance of the root classes', () => {
    const error = new malEntry.AniLinkRestError(404, null);
    expect(error).toBeInstanceOf(root.AniLinkRestError);
    expect(error).toBeInstanceOf(anilistEntry.AniLinkApiError);
    expect(error).toBeInstanceOf(root.AniLinkError);
  });

  it('the root entry exports destroyCachedAgents', () => {
    expect(typeof root.destroyCachedAgents).toBe('function');
  });

  it.each(['fuzzyDate', 'fuzzyDateInt', 'crossLink', 'buildAuthorizationUrl', 'getTokenExpiry'] as const)(
    'the AniList helper %s is the same function from the root and /anilist',
    (name) => {
      expect(typeof root[name]).toBe('function');
      expect(anilistEntry[name]).toBe(root[name]);
    },
  );

  it.each(['snapshotTransportState', 'buildProviderClients', 'buildMyAnimeListApi'] as const)(
    'the root entry exports the lower-level entry point %s (api.md §1)',
    (name) => {
      expect(typeof root[name]).toBe('function');
    },
  );

  it('/mal exports buildMyAnimeListApi, /anilist does not (as in the original barrels)', () => {
    expect(malEntry.buildMyAnimeListApi).toBe(root.buildMyAnimeListApi);
    expect('buildMyAnimeListApi' in anilistEntry).toBe(false);
  });

  it.each(['buildMalAuthorizationUrl', 'getMalTokenExpiry'] as const)(
    'the MAL helper %s is the same function from the root and /mal',
    (name) => {
      expect(typeof root[name]).toBe('function');
      expect(malEntry[name]).toBe(root[name]);
    },
  );
});

describe('the ESM entries', () => {
  it('export every key of their CommonJS modules, and nothing else', async () => {
    // Each .mjs lists its exports statically (generated); a key missing there is invisible to `import`.
    const script = `
      import { createRequire } from 'node:module';
      const require = createRequire(process.cwd() + '/');
      const report = {};
      for (const entry of ['anilink-api-wrapper', 'anilink-api-wrapper/anilist', 'anilink-api-wrapper/mal']) {
        report[entry] = { esm: Object.keys(await import(entry)).sort(), cjs: Object.keys(require(entry)).sort() };
      }
      process.stdout.write(JSON.stringify(report));
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: packageRoot,
      timeout: 15_000,
    });
    const report = JSON.parse(stdout) as Record<string, { esm: string[]; cjs: string[] }>;

    expect(Object.keys(report)).toHaveLength(3);
    for (const { esm, cjs } of Object.values(report)) {
      expect(cjs.length).toBeGreaterThan(0);
      expect(esm).toEqual(cjs);
    }
  });
});

describe('the entry files', () => {
  it('are what scripts/generate-entries.mjs writes from lib/index.cjs (one list, no hand-kept copies)', async () => {
    const generator = join(packageRoot, 'scripts', 'generate-entries.mjs');
    // A stale file makes the script exit 1, which rejects here with its message.
    const { stderr } = await run(process.execPath, [generator, '--check'], { cwd: packageRoot, timeout: 15_000 });
    expect(stderr).toBe('');
  });
});
