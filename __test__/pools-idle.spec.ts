/**
 * Idle keep-alive connections at the default pool bounds (maxSockets 20, maxFreeSockets 5),
 * end to end, from child processes on both execution paths (the JavaScript thread, and
 * `ANILINK_IO_THREAD=worker`), over HTTP and HTTPS (a test CA made for the run):
 *
 * - issue 37: answers that arrive together free their connections before JavaScript starts the
 *   next calls; none of them is closed, so a run opens no more than min(in flight, 20) + 2
 *   connections, as Node's agent opens min(in flight, 20). The servers answer in batches (every
 *   request waiting is answered on the same tick), the case that churned.
 * - issue 35: an idle connection whose server closes or resets it is dropped, its descriptor
 *   closed, within a second, without the host being used again.
 * - issue 37: the handshakes after the first resume its TLS session (one session cache for
 *   every slot of the process), as the server sees them.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resultOf, runModule } from './support/child';
import { makeTestCertificates, type TestCertificates } from './support/test-tls';

const IO_THREADS = ['javascript', 'worker'] as const;
type IoThread = (typeof IO_THREADS)[number];
const IN_FLIGHT = [1, 8, 16, 20, 32, 256];
const DEFAULT_MAX_SOCKETS = 20;
/** Calls per run: a few rounds of every in-flight count, bounded. */
const callsAt = (inFlight: number) => Math.max(60, inFlight * 6);
const MEDIA = JSON.stringify({ data: { Media: { id: 1 } } });

let certificates: TestCertificates;
beforeAll(() => {
  certificates = makeTestCertificates();
});
afterAll(() => certificates.remove());

/** The child's environment: only what these tests set, the proxy variables dropped. */
function childEnv(ioThread: IoThread): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_EXTRA_CA_CERTS: certificates.caFile };
  for (const key of Object.keys(env)) {
    if (/^(https?_proxy|all_proxy|no_proxy)$/i.test(key)) delete env[key];
  }
  if (ioThread === 'worker') env.ANILINK_IO_THREAD = 'worker';
  else delete env.ANILINK_IO_THREAD;
  return env;
}

interface BatchingServer {
  url: string;
  /** TCP connections accepted so far. */
  opened: number;
  close(): Promise<void>;
}

/**
 * An HTTP or HTTPS keep-alive server that holds every request until the next tick of a 2 ms
 * timer and then answers all of them at once: the client reads a batch of answers in one turn.
 */
async function startBatchingServer(tls: boolean): Promise<BatchingServer> {
  const sockets = new Set<Socket>();
  let waiting: http.ServerResponse[] = [];
  let flushScheduled = false;
  const flush = () => {
    flushScheduled = false;
    const answers = waiting;
    waiting = [];
    for (const response of answers) response.writeHead(200, { 'content-type': 'application/json' }).end(MEDIA);
  };
  const handler = (request: http.IncomingMessage, response: http.ServerResponse) => {
    request.resume();
    request.on('end', () => {
      waiting.push(response);
      if (!flushScheduled) setTimeout(flush, 2);
      flushScheduled = true;
    });
  };
  const options = { keepAliveTimeout: 60_000 };
  const server = tls
    ? https.createServer({ ...options, key: certificates.key, cert: certificates.cert }, handler)
    : http.createServer(options, handler);
  const state = { url: '', opened: 0, close: async () => {} };
  server.on('connection', (socket: Socket) => {
    state.opened += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  state.url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  state.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}

/** A child script prelude: the package, and where its calls run. */
const PRELUDE = `
import { createRequire } from 'node:module';
const { createNativeClient } = createRequire(process.cwd() + '/')('./lib/slot-environment.cjs');
const ioThread = () => createNativeClient('anilist', {}, () => {}).ioThread();
const { AniLink } = await import('anilink-api-wrapper');
const client = (baseUrl) => new AniLink({ anilist: { baseUrl, retry: false } });
`;

describe('connections opened at default bounds when answers arrive together (issue 37)', () => {
  for (const ioThread of IO_THREADS) {
    for (const tls of [false, true]) {
      it(`${tls ? 'HTTPS' : 'HTTP'} on the ${ioThread} thread: at most min(in flight, 20) + 2 at ${IN_FLIGHT.join(', ')} in flight`, async () => {
        // One server per in-flight count: each run starts with no connection of an earlier one.
        const servers = await Promise.all(IN_FLIGHT.map(() => startBatchingServer(tls)));
        try {
          const runs = IN_FLIGHT.map((inFlight, i) => ({ url: servers[i].url, inFlight, calls: callsAt(inFlight) }));
          const source = `${PRELUDE}
            const completed = [];
            for (const { url, inFlight, calls } of ${JSON.stringify(runs)}) {
              const aniLink = client(url);
              let started = 0;
              let done = 0;
              const worker = async () => {
                while (started < calls) {
                  started += 1;
                  const media = await aniLink.anilist.query.media({ id: 1 });
                  if (media.id === 1) done += 1;
                }
              };
              await Promise.all(Array.from({ length: inFlight }, worker));
              completed.push(done);
            }
            console.log('RESULT ' + JSON.stringify({ ioThread: ioThread(), completed }));
          `;
          const run = await runModule(source, 60_000, childEnv(ioThread));
          const result = resultOf<{ ioThread: string; completed: number[] }>(run);
          expect(result.ioThread).toBe(ioThread);
          expect(result.completed).toEqual(runs.map((r) => r.calls));
          const opened = Object.fromEntries(IN_FLIGHT.map((inFlight, i) => [inFlight, servers[i].opened]));
          const bound = Object.fromEntries(
            IN_FLIGHT.map((inFlight) => [inFlight, Math.min(inFlight, DEFAULT_MAX_SOCKETS) + 2]),
          );
          for (const inFlight of IN_FLIGHT) {
            expect(
              opened[inFlight],
              `connections opened at ${inFlight} in flight: ${JSON.stringify(opened)}`,
            ).toBeLessThanOrEqual(bound[inFlight]);
            expect(opened[inFlight]).toBeGreaterThanOrEqual(Math.min(inFlight, DEFAULT_MAX_SOCKETS));
          }
        } finally {
          await Promise.all(servers.map((server) => server.close()));
        }
      }, 90_000);
    }
  }
});

interface ClosingServer {
  url: string;
  sockets: Set<Socket>;
  close(): Promise<void>;
}

/** A keep-alive server whose connections the test closes by hand while they are idle. */
async function startClosingServer(tls: boolean): Promise<ClosingServer> {
  const sockets = new Set<Socket>();
  const handler = (request: http.IncomingMessage, response: http.ServerResponse) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(MEDIA));
  };
  const options = { keepAliveTimeout: 60_000 };
  const server = tls
    ? https.createServer({ ...options, key: certificates.key, cert: certificates.cert }, handler)
    : http.createServer(options, handler);
  server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    sockets,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Run `source` in a child that prints `READY` once its connections are idle and then waits;
 * `whenReady` runs then, and the child's `RESULT` line is returned.
 */
function runInteractive<T>(
  source: string,
  env: NodeJS.ProcessEnv,
  whenReady: (child: ChildProcessWithoutNullStreams) => void,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], {
      cwd: join(__dirname, '..'),
      env,
    });
    let stdout = '';
    let stderr = '';
    let ready = false;
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (!ready && stdout.includes('READY\n')) {
        ready = true;
        whenReady(child);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(killer);
      try {
        resolve(resultOf<T>({ code, signal, stdout, stderr }));
      } catch (error) {
        reject(error);
      }
    });
  });
}

describe('idle connections the server closes are dropped within a second (issue 35)', () => {
  const HOSTS = 12;
  for (const ioThread of IO_THREADS) {
    it(`on the ${ioThread} thread, over HTTP (FIN and reset) and HTTPS: every descriptor closed, none left in CLOSE_WAIT`, async () => {
      const servers = await Promise.all(Array.from({ length: HOSTS }, (_, i) => startClosingServer(i % 3 === 2)));
      try {
        const source = `${PRELUDE}
          import { readdirSync, readlinkSync } from 'node:fs';
          const sockets = () =>
            readdirSync('/proc/self/fd').filter((fd) => {
              try { return readlinkSync('/proc/self/fd/' + fd).startsWith('socket:'); } catch { return false; }
            }).length;
          const urls = ${JSON.stringify(servers.map((server) => server.url))};
          const before = sockets();
          for (const url of urls) await client(url).anilist.query.media({ id: 1 });
          const idle = sockets() - before;
          let settledMs;
          process.stdin.once('data', async () => {
            const closedAt = Date.now();
            while (sockets() > before && Date.now() - closedAt < 5000) await new Promise((r) => setTimeout(r, 10));
            settledMs = Date.now() - closedAt;
            console.log('RESULT ' + JSON.stringify({ ioThread: ioThread(), idle, left: sockets() - before, settledMs }));
            process.exit(0);
          });
          console.log('READY');
        `;
        const result = await runInteractive<{ ioThread: string; idle: number; left: number; settledMs: number }>(
          source,
          childEnv(ioThread),
          (child) => {
            servers.forEach((server, i) => {
              // HTTP: a FIN or a reset; HTTPS (every third host): close_notify and a FIN.
              for (const socket of server.sockets) {
                if (i % 3 === 1) socket.resetAndDestroy();
                else socket.end();
              }
            });
            child.stdin.write('go\n');
          },
        );
        expect(result.ioThread).toBe(ioThread);
        expect(result.idle).toBe(HOSTS);
        expect(result.left).toBe(0);
        expect(result.settledMs).toBeLessThan(1_000);
      } finally {
        await Promise.all(servers.map((server) => server.close()));
      }
    }, 30_000);
  }
});

describe('TLS sessions (issue 37)', () => {
  for (const ioThread of IO_THREADS) {
    it(`on the ${ioThread} thread, new connections resume the sessions of earlier ones, from any slot`, async () => {
      const resumed: boolean[] = [];
      const server = https.createServer({ key: certificates.key, cert: certificates.cert }, (request, response) => {
        request.resume();
        request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(MEDIA));
      });
      server.on('secureConnection', (socket: TLSSocket) => resumed.push(socket.isSessionReused()));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        // maxFreeSockets: 0 keeps no connection: every call opens one, and its handshake.
        const source = `${PRELUDE}
          const fresh = () => new AniLink({ anilist: { baseUrl: ${JSON.stringify(url)}, retry: false, maxFreeSockets: 0 } });
          const first = fresh();
          for (let i = 0; i < 4; i++) await first.anilist.query.media({ id: 1 });
          await fresh().anilist.query.media({ id: 1 });
          console.log('RESULT ' + JSON.stringify({ ioThread: ioThread() }));
        `;
        const run = await runModule(source, 20_000, childEnv(ioThread));
        expect(resultOf<{ ioThread: string }>(run).ioThread).toBe(ioThread);
        // TLS 1.3 tickets are used once, and Node's server sends two after a full handshake and
        // none after a resumed one: the fourth handshake finds none left and is a full one.
        expect(resumed).toEqual([false, true, true, false, true]);
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  }
});
