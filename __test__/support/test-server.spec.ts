import http from 'node:http';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { graphqlData, rateLimitHeaders, startTestServer, type TestServer } from './test-server';

interface ClientResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** ms from sending the request to the response head. */
  headAfterMs: number;
  /** ms from the response head to the end of the body. */
  bodyAfterHeadMs: number;
  /** How many `data` events delivered the body. */
  dataEvents: number;
}

interface SendOptions {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** One request through Node's own client, so the server is checked against an independent peer. */
function send(server: TestServer, agent: http.Agent, options: SendOptions = {}): Promise<ClientResponse> {
  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    const req = http.request(
      `${server.url}${options.path ?? '/'}`,
      { method: options.method ?? 'POST', headers: options.headers, agent },
      (res) => {
        const headAt = performance.now();
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            headAfterMs: headAt - startedAt,
            bodyAfterHeadMs: performance.now() - headAt,
            dataEvents: chunks.length,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** What the client saw of a response whose body failed after the head had arrived. */
interface TruncatedResponse {
  status: number;
  /** The body bytes that arrived before the failure. */
  body: string;
  /** Messages of every error the client reported once the head was in. */
  errors: string[];
}

/**
 * Resolves once a response that had its head delivered closes without completing its body.
 * Where Node reports that failure differs by major: 20 and 22 only fail the response
 * (`aborted`); 24 also fails the request with the socket's own error (`read ECONNRESET`). Both
 * are collected, so the caller asserts on the failure rather than on which event carried it.
 */
function sendExpectingTruncatedBody(server: TestServer, agent: http.Agent): Promise<TruncatedResponse> {
  return new Promise((resolve, reject) => {
    const errors: string[] = [];
    let headArrived = false;
    const req = http.request(server.url, { method: 'GET', agent }, (res) => {
      headArrived = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', (error) => errors.push(error.message));
      res.on('end', () => reject(new Error('the body completed; expected a failure')));
      res.on('close', () =>
        // The request's own error, if any, comes in the same turn; let it land first.
        setImmediate(() =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), errors }),
        ),
      );
    });
    req.on('error', (error) => (headArrived ? errors.push(error.message) : reject(error)));
    req.end();
  });
}

/** How a raw TCP exchange ended, and the bytes that came back before it did. */
interface RawOutcome {
  received: string;
  ending: 'reset' | 'closed';
}

/** Connect, optionally run `beforeSending` once the server has accepted, send `request`, and read until the socket ends. */
async function rawExchange(server: TestServer, request: string, beforeSending?: () => void): Promise<RawOutcome> {
  const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
  const outcome = new Promise<RawOutcome>((resolve, reject) => {
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' ? resolve({ received, ending: 'reset' }) : reject(error),
    );
    socket.on('end', () => resolve({ received, ending: 'closed' }));
  });
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  await waitForOpenConnections(server, 1);
  beforeSending?.();
  socket.write(request);
  return outcome.finally(() => socket.destroy());
}

async function waitForOpenConnections(server: TestServer, n: number): Promise<void> {
  while (server.openConnections() < n) await new Promise((resolve) => setImmediate(resolve));
}

const RAW_GET = 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n';

describe('test server', () => {
  let server: TestServer;
  let agent: http.Agent;

  beforeEach(async () => {
    server = await startTestServer();
    agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  });

  afterEach(async () => {
    agent.destroy();
    await server.close();
  });

  it('listens on 127.0.0.1 and reports url and host', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.host).toBe(server.url.slice('http://'.length));
  });

  describe('choosing responses', () => {
    it('answers the default GraphQL payload when nothing is scripted', async () => {
      const res = await send(server, agent);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(JSON.parse(res.body)).toEqual({ data: { Media: { id: 1 } } });
    });

    it('plays queued responses in order, then falls back to the default', async () => {
      server.enqueue({ status: 503, body: 'first' }, { status: 429, body: 'second' });
      server.setDefault({ status: 204 });
      const statuses: number[] = [];
      const bodies: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        const res = await send(server, agent);
        statuses.push(res.status);
        bodies.push(res.body);
      }
      expect(statuses).toEqual([503, 429, 204]);
      expect(bodies).toEqual(['first', 'second', '']);
    });

    it('computes the default from the request when given a function', async () => {
      server.setDefault((req) => ({ body: { echoedPath: req.path } }));
      const res = await send(server, agent, { path: '/anime/5' });
      expect(JSON.parse(res.body)).toEqual({ echoedPath: '/anime/5' });
    });

    it('lets a handler answer before the queue and fall through when it returns undefined', async () => {
      server.enqueue({ status: 201, body: 'queued' });
      server.handle((req) => (req.path === '/special' ? { status: 418, body: 'handled' } : undefined));
      const special = await send(server, agent, { path: '/special' });
      const other = await send(server, agent, { path: '/other' });
      expect([special.status, special.body]).toEqual([418, 'handled']);
      expect([other.status, other.body]).toEqual([201, 'queued']);
    });

    it('turns a throwing handler into a 500 that names the error', async () => {
      server.handle(() => {
        throw new Error('boom');
      });
      const res = await send(server, agent);
      expect(res.status).toBe(500);
      expect(res.body).toContain('boom');
    });

    it('sends scripted headers, keeps a content type that was set and encodes objects as JSON', async () => {
      server.enqueue({
        status: 429,
        headers: { 'content-type': 'application/problem+json', 'retry-after': '7', 'set-cookie': ['a=1', 'b=2'] },
        body: { error: 'slow down' },
      });
      const res = await send(server, agent);
      expect(res.status).toBe(429);
      expect(res.headers['content-type']).toBe('application/problem+json');
      expect(res.headers['retry-after']).toBe('7');
      expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
      expect(JSON.parse(res.body)).toEqual({ error: 'slow down' });
    });

    it('sends Buffer bodies byte for byte', async () => {
      server.enqueue({ body: Buffer.from([0x7b, 0x7d]) });
      const res = await send(server, agent);
      expect(res.body).toBe('{}');
      expect(res.headers['content-length']).toBe('2');
    });
  });

  describe('recording requests', () => {
    it('records method, path, query, headers, body and parsed JSON', async () => {
      await send(server, agent, {
        path: '/v2/anime?fields=id,title&limit=2',
        headers: { 'content-type': 'application/json', authorization: 'Bearer t' },
        body: JSON.stringify({ query: '{ Media { id } }', variables: { id: 1 } }),
      });
      expect(server.requests).toHaveLength(1);
      const [req] = server.requests;
      expect(req.method).toBe('POST');
      expect(req.url).toBe('/v2/anime?fields=id,title&limit=2');
      expect(req.path).toBe('/v2/anime');
      expect(req.query.get('fields')).toBe('id,title');
      expect(req.query.get('limit')).toBe('2');
      expect(req.headers.authorization).toBe('Bearer t');
      expect(req.json).toEqual({ query: '{ Media { id } }', variables: { id: 1 } });
      expect(req.receivedAt).toBeGreaterThan(0);
    });

    it('leaves json undefined for bodies that are not JSON', async () => {
      await send(server, agent, {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'status=watching&score=8',
      });
      await send(server, agent, { method: 'GET' });
      expect(server.requests.map((r) => [r.body, r.json])).toEqual([
        ['status=watching&score=8', undefined],
        ['', undefined],
      ]);
    });

    it('waitForRequests resolves once enough requests arrived and rejects on timeout', async () => {
      const waiting = server.waitForRequests(2, 2000);
      await send(server, agent);
      await send(server, agent);
      await expect(waiting).resolves.toBeUndefined();
      await expect(server.waitForRequests(3, 30)).rejects.toThrow(
        /timed out after 30 ms waiting for 3 requests \(received 2\)/,
      );
    });
  });

  describe('timing', () => {
    it('delays the whole response by delayMs', async () => {
      server.enqueue({ delayMs: 120 });
      const res = await send(server, agent);
      expect(res.headAfterMs).toBeGreaterThanOrEqual(115);
    });

    it('sends the headers first and the body after bodyDelayMs', async () => {
      server.enqueue({ bodyDelayMs: 120, body: 'late' });
      const res = await send(server, agent);
      // The head came first: the wait sits between head and body.
      expect(res.bodyAfterHeadMs).toBeGreaterThanOrEqual(115);
      expect(res.body).toBe('late');
    });

    it('trickles the body in pieces, intervalMs apart', async () => {
      server.enqueue({ body: 'abcdefgh', trickle: { chunks: 4, intervalMs: 40 } });
      const res = await send(server, agent);
      expect(res.body).toBe('abcdefgh');
      expect(res.dataEvents).toBeGreaterThan(1); // a stalled client may read two pieces at once
      expect(res.bodyAfterHeadMs).toBeGreaterThanOrEqual(3 * 40 - 5);
    });
  });

  describe('failures', () => {
    it('resets the socket before any response byte with drop: before-response', async () => {
      server.enqueue({ drop: 'before-response' });
      await expect(send(server, agent)).rejects.toMatchObject({ code: 'ECONNRESET' });
      expect(server.requests).toHaveLength(1);
    });

    it('resets (RST), rather than closes, the TCP connection', async () => {
      server.enqueue({ drop: 'before-response' });
      expect(await rawExchange(server, RAW_GET)).toEqual({ received: '', ending: 'reset' });
    });

    it('sends the head and part of the body before resetting with drop: mid-body', async () => {
      server.enqueue({ status: 200, drop: 'mid-body', body: 'x'.repeat(64) });
      const { status, body, errors } = await sendExpectingTruncatedBody(server, agent);
      expect(status).toBe(200);
      expect(body).toBe('x'.repeat(32));
      expect(errors.length).toBeGreaterThan(0);
      for (const message of errors) expect(message).toMatch(/aborted|ECONNRESET/);
    });

    it('truncates the default payload when mid-body has no body of its own', async () => {
      server.enqueue({ drop: 'mid-body' });
      const payload = JSON.stringify({ data: { Media: { id: 1 } } });
      const { status, body } = await sendExpectingTruncatedBody(server, agent);
      expect(status).toBe(200);
      expect(body).toBe(payload.slice(0, Math.floor(payload.length / 2)));
    });

    it('keeps a hanging request open until close(), which also fails the client', async () => {
      server.enqueue({ hang: true });
      const pending = send(server, agent);
      await server.waitForRequests(1);
      expect(server.openConnections()).toBe(1);
      await server.close();
      await expect(pending).rejects.toMatchObject({ code: 'ECONNRESET' });
      expect(server.openConnections()).toBe(0);
    });

    it('lets the connection close when the client gives up during a delay', async () => {
      server.enqueue({ delayMs: 10_000 });
      const req = http.request(server.url, { method: 'GET', agent });
      const failed = new Promise<Error>((resolve) => req.on('error', resolve));
      req.end();
      await server.waitForRequests(1);
      req.destroy();
      await failed;
      await server.waitForClosedConnections(1, 1000);
      expect(server.openConnections()).toBe(0);
    });

    it('rejects pending waits when the server closes', async () => {
      const waiting = server.waitForRequests(1, 5000);
      await server.close();
      await expect(waiting).rejects.toThrow(/closed/);
    });
  });

  describe('connections', () => {
    it('reuses one keep-alive connection for sequential requests', async () => {
      await send(server, agent);
      await send(server, agent);
      expect(server.connections).toHaveLength(1);
      expect(server.requests.map((r) => r.connectionId)).toEqual([1, 1]);
      expect(server.openConnections()).toBe(1);
    });

    it('tracks the high-water mark of concurrent connections', async () => {
      server.setDefault({ delayMs: 50 });
      await Promise.all([send(server, agent), send(server, agent), send(server, agent)]);
      expect(server.maxOpenConnections).toBe(3);
      expect(new Set(server.requests.map((r) => r.connectionId)).size).toBe(3);
    });

    it('reset clears scripts and records but keeps the open connections and their records', async () => {
      server.setDefault({ delayMs: 30 });
      server.enqueue({ delayMs: 30, closeAfter: true });
      await Promise.all([send(server, agent), send(server, agent), send(server, agent)]);
      await server.waitForClosedConnections(1);
      expect(server.maxOpenConnections).toBe(3);
      server.enqueue({ status: 500 });
      server.handle(() => ({ status: 418 }));

      server.reset();
      expect(server.requests).toHaveLength(0);
      expect(server.openConnections()).toBe(2);
      expect(server.maxOpenConnections).toBe(2);
      expect(server.connections).toHaveLength(2);
      expect(server.connections.every((c) => c.closedAt === undefined)).toBe(true);
      const afterReset = await send(server, agent);
      expect([afterReset.status, afterReset.body]).toEqual([200, JSON.stringify({ data: { Media: { id: 1 } } })]);
      expect(server.connections).toHaveLength(2);
    });

    it('closes the connection after a closeAfter response', async () => {
      server.enqueue({ closeAfter: true });
      const first = await send(server, agent);
      expect(first.headers.connection).toBe('close');
      await server.waitForClosedConnections(1);
      await send(server, agent);
      expect(server.connections.map((c) => c.id)).toEqual([1, 2]);
      expect(server.connections[0].closedAt).toBeGreaterThan(server.connections[0].openedAt);
    });

    it('closes idle keep-alive connections after setKeepAliveTimeout, including already idle ones', async () => {
      await send(server, agent);
      expect(server.openConnections()).toBe(1);
      const idleSince = performance.now();
      server.setKeepAliveTimeout(60);
      await server.waitForClosedConnections(1, 2000);
      expect(server.openConnections()).toBe(0);
      expect(server.connections[0].closedAt! - idleSince).toBeGreaterThanOrEqual(50);
    });

    it('does not cut a slow response short when the keep-alive timeout is shorter', async () => {
      await send(server, agent);
      server.setKeepAliveTimeout(40);
      server.enqueue({ delayMs: 120, body: 'slow but complete' });
      const res = await send(server, agent);
      expect(res.body).toBe('slow but complete');
    });

    it('does not cut a slow answer short on a connection that was idle before its first request', async () => {
      server.enqueue({ delayMs: 120, body: 'complete' });
      const { received, ending } = await rawExchange(server, RAW_GET, () => server.setKeepAliveTimeout(30));
      expect(ending).toBe('closed');
      expect(received).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\ncomplete$/);
    });

    it('applies keepAliveTimeoutMs given at start', async () => {
      const quick = await startTestServer({ keepAliveTimeoutMs: 50 });
      try {
        await send(quick, agent);
        await quick.waitForClosedConnections(1, 2000);
        expect(quick.openConnections()).toBe(0);
      } finally {
        await quick.close();
      }
    });
  });

  describe('helpers', () => {
    it('builds AniList rate-limit headers', () => {
      expect(rateLimitHeaders(90, 0, 1_700_000_000)).toEqual({
        'x-ratelimit-limit': '90',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': '1700000000',
      });
    });

    it('builds a GraphQL data envelope', () => {
      expect(graphqlData('Page', { pageInfo: { total: 1 } })).toEqual({ data: { Page: { pageInfo: { total: 1 } } } });
    });
  });
});
