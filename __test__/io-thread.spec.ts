// Where calls run (src/driver.rs): on Linux's main thread the JavaScript thread drives them
// itself; Node worker threads, other platforms and ANILINK_IO_THREAD=worker use the tokio
// worker. Each case runs in a child process with its own server on 127.0.0.1 and its own
// environment, and checks both where the calls ran and that they worked: a hostname that needs
// a DNS lookup (woken from the resolver's thread), a timeout (woken by the driver's timer), an
// abort between passes, and a call from a worker thread.
import { describe, expect, it } from 'vitest';
import { runModule } from './support/child';

const calls = `
import http from 'node:http';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
const { createNativeClient } = createRequire(process.cwd() + '/')('./lib/slot-environment.cjs');
// Where the calls of a slot built now run.
const ioThread = () => createNativeClient('anilist', {}, () => {}).ioThread();
const { AniLink } = await import('anilink-api-wrapper');
const server = http.createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => (body += chunk));
  request.on('end', () => {
    const answer = () => {
      response.setHeader('content-type', 'application/json');
      response.end('{"data":{"Media":{"id":7}}}');
    };
    if (body.includes('slow')) setTimeout(answer, 800);
    else answer();
  });
});
await new Promise((listening) => server.listen(0, '127.0.0.1', listening));
const port = server.address().port;
process.env.ANILINK_ANILIST_URL = 'http://localhost:' + port;
const aniLink = new AniLink('token', { retry: false });
const query = 'query { Media(id: 7) { id } }';
const slowQuery = 'query { slow: Media(id: 7) { id } }';
const media = await aniLink.anilist.custom(query);
const started = Date.now();
const timedOut = await aniLink.anilist
  .custom(slowQuery, undefined, { timeout: 150 })
  .then(() => 'answered', (error) => error.code);
const timeoutMs = Date.now() - started;
const controller = new AbortController();
setTimeout(() => controller.abort(), 50);
const abortStarted = Date.now();
const aborted = await aniLink.anilist
  .custom(slowQuery, undefined, { signal: controller.signal })
  .then(() => 'answered', (error) => error.code);
const abortMs = Date.now() - abortStarted;
const inWorker = await new Promise((done, failed) => {
  const worker = new Worker(
    "const { parentPort } = require('node:worker_threads');" +
      "const { createNativeClient } = require('./lib/slot-environment.cjs');" +
      "const { AniLink } = require('anilink-api-wrapper');" +
      "new AniLink('token', { retry: false }).anilist.custom('query { Media(id: 7) { id } }')" +
      ".then((media) => parentPort.postMessage({ ioThread: createNativeClient('anilist', {}, () => {}).ioThread(), id: media.id }));",
    { eval: true, execArgv: [] },
  );
  worker.once('message', done);
  worker.once('error', failed);
});
server.close();
console.log(JSON.stringify({ ioThread: ioThread(), id: media.id, timedOut, timeoutMs, aborted, abortMs, inWorker }));
`;

async function run(env: NodeJS.ProcessEnv) {
  const child = await runModule(calls, 20_000, { ...process.env, ...env });
  expect(child.stderr).toBe('');
  expect(child.code).toBe(0);
  return JSON.parse(child.stdout);
}

const onLinux = process.platform === 'linux';

describe('where calls run', () => {
  it.runIf(onLinux)(
    'on the JavaScript thread by default on the main thread, on the worker in a worker thread',
    async () => {
      const result = await run({ ANILINK_IO_THREAD: undefined });
      expect(result).toMatchObject({
        ioThread: 'javascript',
        id: 7,
        timedOut: 'TIMEOUT_ERROR',
        aborted: 'ABORTED_ERROR',
      });
      expect(result.timeoutMs).toBeGreaterThanOrEqual(150);
      expect(result.timeoutMs).toBeLessThan(750);
      // The abort comes between passes: it must schedule one, not wait for the 800 ms answer.
      expect(result.abortMs).toBeLessThan(750);
      expect(result.inWorker).toEqual({ ioThread: 'worker', id: 7 });
    },
  );

  it('on the worker everywhere with ANILINK_IO_THREAD=worker', async () => {
    const result = await run({ ANILINK_IO_THREAD: 'worker' });
    expect(result).toMatchObject({ ioThread: 'worker', id: 7, timedOut: 'TIMEOUT_ERROR', aborted: 'ABORTED_ERROR' });
    expect(result.inWorker).toEqual({ ioThread: 'worker', id: 7 });
  });

  it.runIf(onLinux)('ANILINK_IO_THREAD set inside the program applies to the slots built after it (D38)', async () => {
    const child = await runModule(
      `import { createRequire } from 'node:module';
       const { createNativeClient } = createRequire(process.cwd() + '/')('./lib/slot-environment.cjs');
       const before = createNativeClient('anilist', {}, () => {});
       process.env.ANILINK_IO_THREAD = 'worker';
       const during = createNativeClient('anilist', {}, () => {});
       delete process.env.ANILINK_IO_THREAD;
       const after = createNativeClient('anilist', {}, () => {});
       console.log(JSON.stringify([before.ioThread(), during.ioThread(), after.ioThread()]));`,
      20_000,
      { ...process.env, ANILINK_IO_THREAD: undefined },
    );
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toEqual(['javascript', 'worker', 'javascript']);
  });

  it('an invalid ANILINK_IO_THREAD fails every call with what it must be, sending nothing', async () => {
    const child = await runModule(
      `const { AniLink } = await import('anilink-api-wrapper');
       process.env.ANILINK_ANILIST_URL = 'http://127.0.0.1:9';
       const failure = await new AniLink('token', { retry: false }).anilist.custom('query { Media(id: 1) { id } }').catch((error) => error);
       console.log(JSON.stringify({ name: failure.name, message: failure.message }));`,
      20_000,
      { ...process.env, ANILINK_IO_THREAD: 'threads-please' },
    );
    expect(child.code).toBe(0);
    const failure = JSON.parse(child.stdout);
    expect(failure.message).toContain('ANILINK_IO_THREAD must be "auto"');
    expect(failure.message).toContain('"worker"');
  });
});
