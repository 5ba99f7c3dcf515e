// maxResponseBytes (decisions D28): a body larger than the limit fails the call with a
// NETWORK_ERROR naming the limit while it is read (declared length or chunked), without being
// retried or counted by the breaker; the option is validated like every other (D10).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AniLinkNetworkError } from 'anilink-api-wrapper';
import { aniListClient, failureOf, malClient, rejectionOf } from './support/helpers';

const LIMIT = 16 * 1024;

/** A server whose answers the test picks by path: `/size-N` pads the body with N bytes, `/status-S` sets the status, `/endless` streams chunks and never ends. */
let server: http.Server;
let url: string;
let requests = 0;
let endlessChunksWritten = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    requests += 1;
    req.resume();
    const path = req.url ?? '/';
    if (path.endsWith('/endless')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => {
        endlessChunksWritten += 1;
        res.write('x'.repeat(1024));
      }, 1);
      res.on('close', () => clearInterval(timer));
      return;
    }
    const size = Number(/\/size-(\d+)/.exec(path)?.[1] ?? '0');
    const status = Number(/\/status-(\d+)/.exec(path)?.[1] ?? '200');
    const body = `{"data":{"Media":"${'y'.repeat(size)}"}}`;
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function endpoint(path: string) {
  return { url: `${url}${path}` };
}

describe('maxResponseBytes', () => {
  it('accepts a body up to the limit and refuses one byte more, naming the limit', async () => {
    const overhead = '{"data":{"Media":""}}'.length;
    const fits = aniListClient(endpoint(`/size-${LIMIT - overhead}`), { maxResponseBytes: LIMIT });
    await expect(fits.anilist.query.media({ id: 1 })).resolves.toHaveLength(LIMIT - overhead);
    const over = aniListClient(endpoint(`/size-${LIMIT - overhead + 1}`), { maxResponseBytes: LIMIT });
    const error = await failureOf(over.anilist.query.media({ id: 1 }));
    expect(error).toBeInstanceOf(AniLinkNetworkError);
    expect(error.code).toBe('NETWORK_ERROR');
    expect((error as AniLinkNetworkError & { reason: string }).reason).toContain(`maxResponseBytes (${LIMIT} bytes)`);
  });

  it('stops reading a chunked body once it passes the limit (an endless body fails at once)', async () => {
    endlessChunksWritten = 0;
    const client = aniListClient(endpoint('/endless'), { maxResponseBytes: LIMIT, timeout: 10_000 });
    const started = performance.now();
    const error = await failureOf(client.anilist.query.media({ id: 1 }));
    expect(error.code).toBe('NETWORK_ERROR');
    expect(performance.now() - started).toBeLessThan(5_000);
    // 16 chunks fill the limit; what was written after is what was in flight when it closed.
    expect(endlessChunksWritten).toBeLessThan(1_000);
  });

  it('applies to error bodies, is not retried and does not count for the breaker', async () => {
    requests = 0;
    const client = aniListClient(endpoint(`/size-${LIMIT}/status-503`), {
      maxResponseBytes: LIMIT,
      retry: { maxRetries: 3, baseDelayMs: 1, jitter: false },
      circuitBreaker: { threshold: 1, cooldownMs: 60_000 },
    });
    const first = await failureOf(client.anilist.query.media({ id: 1 }));
    expect(first.code).toBe('NETWORK_ERROR');
    expect(requests).toBe(1);
    const second = await failureOf(client.anilist.query.media({ id: 1 }));
    expect(second.code).toBe('NETWORK_ERROR'); // not CIRCUIT_OPEN_ERROR: the breaker stayed closed
    expect(requests).toBe(2);
    expect(client.getTransportState().anilist.circuit[0]?.consecutiveFailures ?? 0).toBe(0);
  });

  it('is taken per request over the slot, for MAL too', async () => {
    const client = malClient(endpoint(`/size-${LIMIT}`), { maxResponseBytes: LIMIT });
    await expect(client.mal.anime.get({ id: 1 }, { maxResponseBytes: 2 * LIMIT })).resolves.toBeDefined();
    expect((await failureOf(client.mal.anime.get({ id: 1 }))).code).toBe('NETWORK_ERROR');
  });

  it('is validated: an integer of at least 1', async () => {
    for (const bad of [0, -1, 1.5, Number.POSITIVE_INFINITY, '1024', null]) {
      expect(() => aniListClient(endpoint('/'), { maxResponseBytes: bad as never })).toThrow(
        /maxResponseBytes must be an integer number of bytes greater than or equal to 1/,
      );
      const client = aniListClient(endpoint('/'));
      const error = await rejectionOf(client.anilist.query.media({ id: 1 }, { maxResponseBytes: bad as never }));
      expect(error).toBeInstanceOf(TypeError);
    }
  });
});
