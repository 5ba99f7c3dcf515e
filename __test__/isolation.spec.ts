// Nothing an upstream answer or a hook does takes the process down or leaves a call pending
// (decisions D28). The crash cases run in a child process whose exit code and stderr are checked.
import { describe, expect, it, vi } from 'vitest';
import { aniListClient, useTestServer } from './support/helpers';
import { resultOf, runModule } from './support/child';
import type { TestServer } from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

describe('values that cannot cross into JavaScript', () => {
  it('a body whose JSON text passes the longest JavaScript string rejects its own call only', async () => {
    // 90 MiB of control bytes on a 500: escaped as JSON (\u0001) the error body is ~540 M
    // characters, past V8's limit of 2^29 - 24. Two calls of the same client share the outbox.
    const run = await runModule(
      `
      import http from 'node:http';
      import { AniLink, destroyCachedAgents } from 'anilink-api-wrapper';
      const huge = Buffer.alloc(90 * 1024 * 1024, 1);
      const server = http.createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          if (body.includes('"id":1}')) {
            res.writeHead(500, { 'content-type': 'text/plain', 'content-length': huge.length });
            res.end(huge);
          } else {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end('{"data":{"Media":{"id":7}}}');
          }
        });
      });
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const hookCodes = [];
      const client = new AniLink({ anilist: {
        baseUrl: 'http://127.0.0.1:' + server.address().port, retry: false,
        maxResponseBytes: 100 * 1024 * 1024, onError: (error) => hookCodes.push(error.code),
      } });
      const settled = await Promise.allSettled([
        client.anilist.query.media({ id: 1 }),
        client.anilist.query.media({ id: 2 }),
        client.anilist.query.media({ id: 3 }),
      ]);
      const outcomes = settled.map((s) => s.status === 'fulfilled'
        ? { value: s.value }
        : { code: s.reason.code, reason: s.reason.reason, requestId: typeof s.reason.requestId });
      console.log('RESULT ' + JSON.stringify({ outcomes, hookCodes }));
      destroyCachedAgents();
      server.close();
    `,
      150_000,
    );
    expect(run.stderr).not.toMatch(/Failed to convert|napi|FATAL|Unhandled/i);
    expect(run.code, run.stderr).toBe(0);
    const { outcomes, hookCodes } = resultOf<{ outcomes: Record<string, unknown>[]; hookCodes: string[] }>(run);
    expect(outcomes[0]).toMatchObject({ code: 'NETWORK_ERROR', requestId: 'string' });
    expect(String(outcomes[0].reason)).toContain('too large to become a JavaScript value');
    expect(outcomes.slice(1)).toEqual([{ value: { id: 7 } }, { value: { id: 7 } }]);
    expect(hookCodes).toEqual(['NETWORK_ERROR']);
  }, 180_000);
});

/** Hooks that fail in every way a hook can, each on its own call. */
const FAILING_HOOKS = `
  const revocable = Proxy.revocable({}, {});
  revocable.revoke();
  const failures = {
    nullPrototype: () => { throw Object.create(null); },
    throwingToString: () => { throw { toString() { throw new Error('no string'); } }; },
    revokedProxy: () => { throw revocable.proxy; },
    undefinedThrown: () => { throw undefined; },
    symbolThrown: () => { throw Symbol('s'); },
    asyncRejection: async () => { throw new Error('async boom'); },
    rejectingWithNullPrototype: () => Promise.reject(Object.create(null)),
    rejectingThenable: () => ({ then(_resolve, reject) { reject(new Error('thenable boom')); } }),
    throwingThen: () => ({ then() { throw new Error('then threw'); } }),
    thenGetterThrows: () => ({ get then() { throw new Error('then getter'); } }),
    revokedProxyReturned: () => revocable.proxy,
  };
`;

describe('hook isolation', () => {
  it('no failing hook becomes an uncaught exception or unhandled rejection, or leaves a call pending', async () => {
    server.setDefault({ status: 404, body: { errors: [{ message: 'Not Found.', status: 404 }], data: null } });
    const run = await runModule(`
      import { AniLink, destroyCachedAgents } from 'anilink-api-wrapper';
      ${FAILING_HOOKS}
      const reported = [];
      const outcomes = {};
      for (const [name, hook] of Object.entries(failures)) {
        for (const hookName of ['onRequestStart', 'onResponse', 'onError']) {
          const client = new AniLink({ anilist: {
            baseUrl: ${JSON.stringify(server.url)}, retry: false, [hookName]: hook,
            onHookError: (failedHook, error) => reported.push(name + ':' + failedHook + ':' + error.message),
          } });
          try {
            await client.anilist.query.media({ id: 404 });
            outcomes[name + ':' + hookName] = 'resolved';
          } catch (error) {
            outcomes[name + ':' + hookName] = error.code;
          }
        }
      }
      // Rejections are reported on a later turn.
      await new Promise((resolve) => setTimeout(resolve, 50));
      console.log('RESULT ' + JSON.stringify({ reported, outcomes }));
      destroyCachedAgents();
    `);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const { reported, outcomes } = resultOf<{ reported: string[]; outcomes: Record<string, string> }>(run);
    expect(Object.values(outcomes).every((o) => o === 'API_ERROR')).toBe(true);
    expect(Object.keys(outcomes)).toHaveLength(33);
    expect(reported).toHaveLength(33);
    expect(reported).toContain(
      'nullPrototype:onRequestStart:The onRequestStart hook threw and was ignored: a thrown object that cannot be converted to a string',
    );
    expect(reported).toContain('asyncRejection:onError:The onError hook threw and was ignored: async boom');
    expect(reported).toContain('rejectingThenable:onResponse:The onResponse hook threw and was ignored: thenable boom');
    expect(reported).toContain('thenGetterThrows:onResponse:The onResponse hook threw and was ignored: then getter');
  });

  it('without an observer, "warn" writes one record per failure and the process stays up', async () => {
    const run = await runModule(`
      import { AniLink, destroyCachedAgents } from 'anilink-api-wrapper';
      ${FAILING_HOOKS}
      let settled = 0;
      for (const hook of Object.values(failures)) {
        const client = new AniLink({ anilist: { baseUrl: ${JSON.stringify(server.url)}, retry: false, onResponse: hook } });
        await client.anilist.query.media({ id: 1 });
        settled += 1;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
      console.log('RESULT ' + JSON.stringify({ settled }));
      destroyCachedAgents();
    `);
    expect(run.code, run.stderr).toBe(0);
    expect(resultOf<{ settled: number }>(run).settled).toBe(11);
    const records = run.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { kind: string; hookName: string });
    expect(records).toHaveLength(11);
    expect(records.every((r) => r.kind === 'hook-failure' && r.hookName === 'onResponse')).toBe(true);
  });

  it('an onHookError that throws or rejects is ignored too', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      const client = aniListClient(server, {
        onResponse: () => {
          throw new Error('hook');
        },
        onHookError: async () => {
          throw new Error('observer');
        },
      });
      await expect(client.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });
});
