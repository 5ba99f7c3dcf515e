'use strict';
// A scriptable HTTP/1.1 server on 127.0.0.1: queue responses (statuses, headers, delays,
// trickled bodies, dropped or hanging sockets), then inspect what the client sent and how many
// TCP connections it used. Keep-alive is on, as with the real AniList and MAL endpoints.
//
// It is the one implementation behind `anilink-api-wrapper/testing` and the package's own
// end-to-end tests. The listening socket and every accepted socket are unref'd: a test runner
// that forgets `close()` still exits.

const http = require('node:http');
const { performance } = require('node:perf_hooks');
const { setTimeout: sleep } = require('node:timers/promises');

const DEFAULT_PAYLOAD = { data: { Media: { id: 1 } } };
const DEFAULT_RESPONSE = { status: 200, body: DEFAULT_PAYLOAD };
const DEFAULT_WAIT_TIMEOUT_MS = 5000;
/** Node's own default, stated so `reset()` can restore it. */
const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5000;

/** The `x-ratelimit-*` headers AniList sends (reset is in epoch seconds). */
function rateLimitHeaders(limit, remaining, resetEpochSeconds) {
  const headers = { 'x-ratelimit-limit': String(limit), 'x-ratelimit-remaining': String(remaining) };
  if (resetEpochSeconds !== undefined) headers['x-ratelimit-reset'] = String(resetEpochSeconds);
  return headers;
}

/** A successful GraphQL envelope with one root field: `{ data: { [root]: value } }`. */
function graphqlData(root, value) {
  return { data: { [root]: value } };
}

/**
 * Start a scripted server.
 * @param {{ keepAliveTimeoutMs?: number }} [options]
 */
async function startScriptedServer(options = {}) {
  const queue = [];
  let defaultProvider = DEFAULT_RESPONSE;
  let handler;
  const requests = [];
  const connections = [];
  /** Per socket: its connection record and how many of its requests are still being answered. */
  const sockets = new Map();
  /** One per response being delivered, so pending delays stop when a socket or the server closes. */
  const deliveries = new Set();
  /** Conditions some test awaits, re-checked whenever the records change. */
  let waiters = [];
  let nextConnectionId = 1;
  let maxOpenConnections = 0;
  let closing;

  const server = http.createServer();
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS;
  server.unref();

  function settleWaiters() {
    waiters = waiters.filter((waiter) => {
      if (!waiter.isMet()) return true;
      waiter.resolve();
      return false;
    });
  }

  function waitUntil(isMet, describe, timeoutMs) {
    if (isMet()) return Promise.resolve();
    if (closing) return Promise.reject(new Error(`scripted server closed while waiting for ${describe()}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters = waiters.filter((other) => other !== waiter);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${describe()}`));
      }, timeoutMs);
      const waiter = {
        isMet,
        resolve() {
          clearTimeout(timer);
          resolve();
        },
        reject(error) {
          clearTimeout(timer);
          reject(error);
        },
      };
      waiters.push(waiter);
    });
  }

  server.on('connection', (socket) => {
    socket.unref();
    const record = { id: nextConnectionId++, openedAt: performance.now() };
    connections.push(record);
    sockets.set(socket, { record, inFlight: 0 });
    maxOpenConnections = Math.max(maxOpenConnections, sockets.size);
    socket.once('close', () => {
      record.closedAt = performance.now();
      sockets.delete(socket);
      settleWaiters();
    });
  });

  server.on('request', (req, res) => {
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

  async function answer(req, res, receivedAt, connectionId) {
    let body;
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
  function pickResponse(req) {
    try {
      const handled = handler?.(req);
      if (handled) return handled;
      const queued = queue.shift();
      if (queued) return queued;
      return typeof defaultProvider === 'function' ? defaultProvider(req) : defaultProvider;
    } catch (error) {
      return { status: 500, body: `scripted server response provider threw: ${String(error)}` };
    }
  }

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address();

  function close() {
    closing ??= new Promise((resolve) => {
      for (const delivery of deliveries) delivery.abort();
      for (const socket of sockets.keys()) socket.destroy();
      server.close(() => resolve());
      const pending = waiters;
      waiters = [];
      for (const waiter of pending) waiter.reject(new Error('scripted server closed'));
    });
    return closing;
  }

  const scripted = {
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
    close,
  };
  if (typeof Symbol.asyncDispose === 'symbol') scripted[Symbol.asyncDispose] = close;
  return scripted;
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function recordRequest(req, body, receivedAt, connectionId) {
  const url = req.url ?? '/';
  const parsed = new URL(url, 'http://127.0.0.1');
  const recorded = {
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
function encodeBody(body) {
  if (body === undefined) return { bytes: Buffer.alloc(0) };
  if (Buffer.isBuffer(body)) return { bytes: body };
  if (typeof body === 'string') return { bytes: Buffer.from(body, 'utf8') };
  return { bytes: Buffer.from(JSON.stringify(body), 'utf8'), impliedType: 'application/json' };
}

async function pause(ms, signal) {
  if (ms !== undefined && ms > 0) await sleep(ms, undefined, { signal });
}

function writeChunk(res, chunk) {
  return new Promise((resolve, reject) => {
    res.write(chunk, (error) => (error ? reject(error) : resolve()));
  });
}

/** Reset (RST) rather than close (FIN), as a crashed peer or middlebox would. */
function resetSocket(res) {
  res.socket?.resetAndDestroy();
}

/** Play one scripted response; rejects with an AbortError if the socket or server closes first. */
async function deliver(res, scripted, signal) {
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
function splitInto(bytes, count) {
  const pieceCount = Math.max(1, Math.min(Math.floor(count), bytes.length));
  const size = Math.ceil(bytes.length / pieceCount);
  const pieces = [];
  for (let start = 0; start < bytes.length; start += size) pieces.push(bytes.subarray(start, start + size));
  return pieces.length > 0 ? pieces : [bytes];
}

module.exports = { startScriptedServer, rateLimitHeaders, graphqlData };
