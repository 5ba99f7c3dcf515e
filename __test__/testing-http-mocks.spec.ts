// The `http-mock` diagnostic (lib/http-mock-detection.cjs): an AniLink call made while an
// HTTP-mocking library intercepts Node's http/https or fetch says, once, that the mock cannot
// see AniLink's requests. Each case runs in its own Node process (the mocks patch globals and
// the notice is once per process), with the real nock (15 and 14), msw (2 and 3),
// @mswjs/interceptors and undici.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const packageRoot = join(__dirname, '..');
const child = join(__dirname, 'fixtures', 'testing', 'http-mock-child.cjs');

interface ChildReport {
  ids: number[];
  received: number;
  warnings: string[];
  hookReports: { hookName: string; message: string; kind: string }[];
}

async function runScenario(scenario: string, mode = 'warn'): Promise<ChildReport> {
  const { stdout } = await run(process.execPath, [child, scenario, mode], { cwd: packageRoot, timeout: 15_000 });
  return JSON.parse(stdout) as ChildReport;
}

function parsedWarnings(report: ChildReport) {
  return report.warnings.map(
    (line) => JSON.parse(line) as { source: string; kind: string; hookName: string; message: string },
  );
}

it('costs nothing at import, nor at a call when nothing else loaded node:http', async () => {
  // A server on node:net, so that nothing but AniLink could load node:http.
  const { stdout } = await run(
    process.execPath,
    [
      '-e',
      `const loadedHttp = () => process.moduleLoadList.filter((m) => /^NativeModule (_?https?|_http_client)$/.test(m));
       const body = '{"data":{"Media":{"id":1}}}';
       const server = require('node:net').createServer((socket) => socket.once('data', () =>
         socket.end('HTTP/1.1 200 OK\\r\\ncontent-type: application/json\\r\\nconnection: close\\r\\n' +
           'content-length: ' + body.length + '\\r\\n\\r\\n' + body)));
       const { AniLink } = require('anilink-api-wrapper');
       const atImport = loadedHttp();
       server.listen(0, '127.0.0.1', async () => {
         const baseUrl = 'http://127.0.0.1:' + server.address().port;
         const media = await new AniLink({ anilist: { baseUrl } }).anilist.query.media({ id: 1 });
         server.close();
         console.log(JSON.stringify({ atImport, id: media.id, afterCall: loadedHttp() }));
       });`,
    ],
    { cwd: packageRoot, timeout: 15_000 },
  );
  expect(JSON.parse(stdout)).toEqual({ atImport: [], id: 1, afterCall: [] });
});

describe.concurrent('an AniLink call while an HTTP mock is active', () => {
  it.each([
    ['nock', /@mswjs\/interceptors, as used by msw 3 and nock 15/],
    ['nock14', /@mswjs\/interceptors, as used by msw 2 and nock 14/],
    ['msw', /@mswjs\/interceptors, as used by msw 2 and nock 14/],
    ['msw3', /@mswjs\/interceptors, as used by msw 3 and nock 15/],
    ['interceptors', /@mswjs\/interceptors, as used by msw 3 and nock 15/],
    ['interceptors-http-only', /@mswjs\/interceptors, as used by msw 3 and nock 15/],
    ['undici-mock-agent', /undici's MockAgent is the global dispatcher of fetch/],
    ['client-request-replaced', /http\.ClientRequest is replaced, as nock 13 and earlier do/],
  ])('with %s: warns once, and the request still reaches the real upstream', async (scenario, names) => {
    const report = await runScenario(scenario);

    // The mock answered id 999 for this very URL; the upstream's id 1 shows it was bypassed.
    expect(report.ids).toEqual([1, 1, 1]);
    expect(report.received).toBe(3);
    const warnings = parsedWarnings(report);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ source: 'anilink', kind: 'http-mock', hookName: 'httpMockDetection' });
    expect(warnings[0].message).toMatch(names);
    expect(warnings[0].message).toContain('anilink-api-wrapper/testing');
  });

  it.each([
    'nock',
    'msw',
    'msw3',
    'interceptors',
    'interceptors-http-only',
    'undici-mock-agent',
    'client-request-replaced',
  ])('with %s activated after a first call: warns on the next call', async (scenario) => {
    const report = await runScenario(scenario, 'late');
    expect(report.ids).toEqual([1, 1, 1, 1]);
    expect(parsedWarnings(report)).toHaveLength(1);
  });

  it.each(['none', 'nock-restored'])('with %s: says nothing', async (scenario) => {
    const report = await runScenario(scenario);
    expect(report.ids).toEqual([1, 1, 1]);
    expect(report.warnings).toEqual([]);
    expect(report.hookReports).toEqual([]);
  });

  it('goes to onHookError instead of console.warn when the call has an observer', async () => {
    const report = await runScenario('nock', 'hook');
    expect(report.warnings).toEqual([]);
    expect(report.hookReports).toHaveLength(1);
    expect(report.hookReports[0]).toMatchObject({ hookName: 'httpMockDetection', kind: 'http-mock' });
  });

  it('stays quiet for a call with diagnostics "silent" (the one notice is spent on it)', async () => {
    const report = await runScenario('msw', 'silent');
    expect(report.warnings).toEqual([]);
    expect(report.hookReports).toEqual([]);
  });
});
