/**
 * A scriptable HTTP/1.1 server on 127.0.0.1 for end-to-end tests of the native client.
 *
 * Every test that needs an upstream starts one of these, queues the responses it wants
 * (statuses, headers, delays, trickled bodies, dropped or hanging sockets) and afterwards
 * inspects what the client actually sent and how many TCP connections it used. Keep-alive
 * is on, as with the real AniList and MAL endpoints, so pool behaviour is observable.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ScriptedResponse {
  /** HTTP status; default 200. */
  status?: number;
  headers?: Record<string, string | string[]>;
  /** An object is sent as JSON with `content-type: application/json` unless a content type is set. */
  body?: string | object | Buffer;
  /** Wait before sending the status line and headers. */
  delayMs?: number;
  /** Send the headers, wait, then send the body (for timeouts that must cover the body). */
  bodyDelayMs?: number;
  /** Send the body in `chunks` pieces, `intervalMs` apart (the first piece right away). */
  trickle?: { chunks: number; intervalMs: number };
  /**
   * Reset the socket: before any byte of the response, or after the headers and the first
   * half of the body (the headers announce the full length, so the client sees a truncated
   * body; with no body given, the default GraphQL payload is used as the body to truncate).
   */
  drop?: 'before-response' | 'mid-body';
  /** Never answer; the socket stays open until the client gives up or the server closes. */
  hang?: boolean;
  /** Answer with `Connection: close` and close the socket afterwards. */
  closeAfter?: boolean;
}

export interface RecordedRequest {
  method: string;
  /** The request target as sent, e.g. `/v2/anime?fields=id`. */
  url: string;
  /** `url` without the query string. */
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The body parsed as JSON, when it is JSON (whatever the content type says). */
  json?: unknown;
  /** Which accepted TCP connection carried the request (`ConnectionRecord.id`). */
  connectionId: number;
  /** `performance.now()` when the request head arrived. */
  receivedAt: number;
}

export interface ConnectionRecord {
  id: number;
  openedAt: number;
  closedAt?: number;
}

export type ResponseProvider = ScriptedResponse | ((req: RecordedRequest) => ScriptedResponse);
export type RequestHandler = (req: RecordedRequest) => ScriptedResponse | undefined;

export interface TestServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `127.0.0.1:<port>`, the `host` the client reports in events and errors. */
  host: string;
  /** Queue responses, one per request, first in first out. */
  enqueue(...responses: ScriptedResponse[]): void;
  /** The response used while the queue is empty (initially 200 `{"data":{"Media":{"id":1}}}`). */
  setDefault(response: ResponseProvider): void;
  /** A handler consulted before the queue; returning `undefined` falls through to the queue. */
  handle(fn: RequestHandler | undefined): void;
  /** Every request received since the last reset, in arrival order. */
  requests: RecordedRequest[];
  /** Connections accepted since the last reset, plus those that were still open at the reset. */
  connections: ConnectionRecord[];
  /** How many TCP connections are open right now. */
  openConnections(): number;
  /** The most connections open at once since the last reset. */
  readonly maxOpenConnections: number;
  /** Resolves once `requests.length >= n`; rejects after `timeoutMs` (default 5000). */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  /** Resolves once `n` entries of `connections` have closed; rejects after `timeoutMs` (default 5000). */
  waitForClosedConnections(n: number, timeoutMs?: number): Promise<void>;
  /** Close keep-alive connections after they have been idle for `ms`; applies to idle ones at once. */
  setKeepAliveTimeout(ms: number): void;
  /** Clear the queue, handler, default and records; open sockets stay open. */
  reset(): void;
  /** Destroy every socket (hanging ones included) and stop listening. */
  close(): Promise<void>;
}

const DEFAULT_PAYLOAD = { data: { Media: { id: 1 } } };
const DEFAULT_RESPONSE: ScriptedResponse = { status: 200, body: DEFAULT_PAYLOAD };
const DEFAULT_WAIT_TIMEOUT_MS = 5000;
/** Node's own default, stated so `reset()` can restore it. */
const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5000;

/** The `x-ratelimit-*` headers AniList sends (reset is in epoch seconds). */
export function rateLimitHeaders(
  limit: number,
  remaining: number,
  resetEpochSeconds: number,
): Record<string, string> {
  return {
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': String(resetEpochSeconds),
  };
}

/** A successful GraphQL envelope with one root field: `{ data: { [root]: value } }`. */
export function graphqlData(root: string, value: unknown): { data: Record<string, unknown> } {
  return { data: { [root]: value } };
}

/** Per-socket bookkeeping: its record and how many of its requests are still being answered. */
interface TrackedSocket {
  record: ConnectionRecord;
  inFlight: number;
}

/** A condition some test awaits, re-checked whenever the records change. */
interface Waiter {
  isMet(): boolean;
  resolve(): void;
  reject(error: Error): void;
}

export async function startTestServer(
  options: { keepAliveTimeoutMs?: number } = {},
): Promise<TestServer> {
  const queue: ScriptedResponse[] = [];
  let defaultProvider: ResponseProvider = DEFAULT_RESPONSE;
  let handler: RequestHandler | undefined;
  const requests: RecordedRequest[] = [];
  const connections: ConnectionRecord[] = [];
  const sockets = new Map<Socket, TrackedSocket>();
  /** One per response being delivered, so pending delays stop when a socket or the server closes. */
  const deliveries = new Set<AbortController>();
  let waiters: Waiter[] = [];
  let nextConnectionId = 1;
  let maxOpenConnections = 0;
  let closing: Promise<void> | undefined;

  const server = http.createServer();
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS;

  function settleWaiters(): void {
    waiters = waiters.filter((waiter) => {
      if (!waiter.isMet()) return true;
      waiter.resolve();
      return false;
    });
  }

  function waitUntil(isMet: () => boolean, describe: () => string, timeoutMs: number): Promise<void> {
    if (isMet()) return Promise.resolve();
    if (closing) return Promise.reject(new Error(`test server closed while waiting for ${describe()}`));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        isMet,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        waiters = waiters.filter((other) => other !== waiter);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${describe()}`));
      }, timeoutMs);
      waiters.push(waiter);
    });
  }

  server.on('connection', (socket: Socket) => {
    const record: ConnectionRecord = { id: nextConnectionId++, openedAt: performance.now() };
    connections.push(record);
    sockets.set(socket, { record, inFlight: 0 });
    maxOpenConnections = Math.max(maxOpenConnections, sockets.size);
    socket.once('close', () => {
      record.closedAt = performance.now();
      sockets.delete(socket);
      settleWaiters();
    });
  });

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const receivedAt = performance.now();
    const tracked = sockets.get(req.socket);
    if (tracked) {
      tracked.inFlight += 1;
      res.once('close', () => {
        tracked.inFlight -= 1;
      });
    }
    // An idle timer armed by setKeepAliveTimeout must not cut a slow or hanging answer short;
    // Node re-arms its own keep-alive timer once this response has finished.
    req.socket.setTimeout(0);
    void answer(req, res, receivedAt, tracked?.record.id ?? 0);
  });

  async function answer(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    receivedAt: number,
    connectionId: number,
  ): Promise<void> {
    let body: string;
    try {
      body = await readBody(req);
    } catch {
      return; // the client went away while uploading; nothing to answer or record
    }
    const recorded = recordRequest(req, body, receivedAt, connectionId);
    requests.push(recorded);
    settleWaiters();

    const delivery = new AbortController();
    deliveries.add(delivery);
    res.once('close', () => {
      delivery.abort();
      deliveries.delete(delivery);
    });
    try {
      await deliver(res, pickResponse(recorded), delivery.signal);
    } catch {
      // Aborted because the socket or server closed, or the socket failed under a write:
      // either way there is nobody left to answer, and the client already sees the failure.
      res.destroy();
    }
  }

  /** Handler, then queue, then default; a throwing provider becomes a visible 500. */
  function pickResponse(req: RecordedRequest): ScriptedResponse {
    try {
      const handled = handler?.(req);
      if (handled) return handled;
      const queued = queue.shift();
      if (queued) return queued;
      return typeof defaultProvider === 'function' ? defaultProvider(req) : defaultProvider;
    } catch (error) {
      return { status: 500, body: `test server response provider threw: ${String(error)}` };
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    enqueue(...responses) {
      queue.push(...responses);
    },
    setDefault(response) {
      defaultProvider = response;
    },
    handle(fn) {
      handler = fn;
    },
    requests,
    connections,
    openConnections: () => sockets.size,
    get maxOpenConnections() {
      return maxOpenConnections;
    },
    waitForRequests(n, timeoutMs = DEFAULT_WAIT_TIMEOUT_MS) {
      return waitUntil(
        () => requests.length >= n,
        () => `${n} requests (received ${requests.length})`,
        timeoutMs,
      );
    },
    waitForClosedConnections(n, timeoutMs = DEFAULT_WAIT_TIMEOUT_MS) {
      const closedCount = () => connections.filter((c) => c.closedAt !== undefined).length;
      return waitUntil(
        () => closedCount() >= n,
        () => `${n} closed connections (closed ${closedCount()} of ${connections.length})`,
        timeoutMs,
      );
    },
    setKeepAliveTimeout(ms) {
      server.keepAliveTimeout = ms;
      for (const [socket, tracked] of sockets) {
        if (tracked.inFlight === 0) socket.setTimeout(ms);
      }
    },
    reset() {
      queue.length = 0;
      handler = undefined;
      defaultProvider = DEFAULT_RESPONSE;
      requests.length = 0;
      const stillOpen = connections.filter((c) => c.closedAt === undefined);
      connections.splice(0, connections.length, ...stillOpen);
      maxOpenConnections = sockets.size;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const delivery of deliveries) delivery.abort();
        for (const socket of sockets.keys()) socket.destroy();
        server.close(() => resolve());
        const pending = waiters;
        waiters = [];
        for (const waiter of pending) waiter.reject(new Error('test server closed'));
      });
      return closing;
    },
  };
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function recordRequest(
  req: http.IncomingMessage,
  body: string,
  receivedAt: number,
  connectionId: number,
): RecordedRequest {
  const url = req.url ?? '/';
  const parsed = new URL(url, 'http://127.0.0.1');
  const recorded: RecordedRequest = {
    method: req.method ?? 'GET',
    url,
    path: parsed.pathname,
    query: parsed.searchParams,
    headers: req.headers,
    body,
    connectionId,
    receivedAt,
  };
  if (body.length > 0) {
    try {
      recorded.json = JSON.parse(body);
    } catch {
      // not JSON (a form body, plain text): `json` stays undefined
    }
  }
  return recorded;
}

/** The body bytes, and the content type implied by an object body. */
function encodeBody(body: ScriptedResponse['body']): { bytes: Buffer; impliedType?: string } {
  if (body === undefined) return { bytes: Buffer.alloc(0) };
  if (Buffer.isBuffer(body)) return { bytes: body };
  if (typeof body === 'string') return { bytes: Buffer.from(body, 'utf8') };
  return { bytes: Buffer.from(JSON.stringify(body), 'utf8'), impliedType: 'application/json' };
}

async function pause(ms: number | undefined, signal: AbortSignal): Promise<void> {
  if (ms !== undefined && ms > 0) await sleep(ms, undefined, { signal });
}

function writeChunk(res: http.ServerResponse, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    res.write(chunk, (error) => (error ? reject(error) : resolve()));
  });
}

/** Reset (RST) rather than close (FIN), as a crashed peer or middlebox would. */
function resetSocket(res: http.ServerResponse): void {
  res.socket?.resetAndDestroy();
}

/** Play one scripted response; rejects with an AbortError if the socket or server closes first. */
async function deliver(
  res: http.ServerResponse,
  scripted: ScriptedResponse,
  signal: AbortSignal,
): Promise<void> {
  if (scripted.hang) return;
  await pause(scripted.delayMs, signal);
  if (scripted.drop === 'before-response') {
    resetSocket(res);
    return;
  }

  const truncating = scripted.drop === 'mid-body';
  const { bytes, impliedType } = encodeBody(
    truncating && scripted.body === undefined ? DEFAULT_PAYLOAD : scripted.body,
  );
  for (const [name, value] of Object.entries(scripted.headers ?? {})) res.setHeader(name, value);
  if (impliedType && !res.hasHeader('content-type')) res.setHeader('content-type', impliedType);
  if (!res.hasHeader('content-length')) res.setHeader('content-length', bytes.length);
  if (scripted.closeAfter) res.setHeader('connection', 'close');
  res.statusCode = scripted.status ?? 200;

  const bodyIsStaged = truncating || scripted.bodyDelayMs !== undefined || scripted.trickle !== undefined;
  if (!bodyIsStaged) {
    res.end(bytes);
    return;
  }
  res.flushHeaders();
  await pause(scripted.bodyDelayMs, signal);

  if (truncating) {
    await writeChunk(res, bytes.subarray(0, Math.floor(bytes.length / 2)));
    resetSocket(res);
    return;
  }
  const pieces = splitInto(bytes, scripted.trickle?.chunks ?? 1);
  for (const [index, piece] of pieces.entries()) {
    if (index > 0) await pause(scripted.trickle?.intervalMs, signal);
    await writeChunk(res, piece);
  }
  res.end();
}

/** Split into `count` pieces of near-equal size (fewer if there are fewer bytes than pieces). */
function splitInto(bytes: Buffer, count: number): Buffer[] {
  const pieceCount = Math.max(1, Math.min(Math.floor(count), bytes.length));
  const size = Math.ceil(bytes.length / pieceCount);
  const pieces: Buffer[] = [];
  for (let start = 0; start < bytes.length; start += size) pieces.push(bytes.subarray(start, start + size));
  return pieces.length > 0 ? pieces : [bytes];
}
