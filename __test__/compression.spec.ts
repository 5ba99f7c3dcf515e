// Compression (issue 14): every request asks for gzip and brotli, answers so encoded are
// decoded natively, maxResponseBytes (D28) counts decoded bytes (a decompression bomb stops at
// the limit without being buffered), and a body that does not decode fails typed.
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { aniListClient, failureOf, malClient, onlyRequest, useTestServer } from './support/helpers';
import type { TestServer } from './support/test-server';

let server: TestServer;
useTestServer((s) => (server = s));

const media = { id: 7, title: { romaji: 'x'.repeat(5000) } };
const payload = JSON.stringify({ data: { Media: media } });
const json = (encoding: string, body: Buffer) => ({
  body,
  headers: { 'content-type': 'application/json', 'content-encoding': encoding },
});

/** `members` gzip members of 1 MiB of zeros each: `members` MiB decoded from about a KiB each. */
function gzipBomb(members: number): Buffer {
  const member = gzipSync(Buffer.alloc(1 << 20), { level: 9 });
  return Buffer.concat(Array.from({ length: members }, () => member));
}

describe('compression', () => {
  it('asks for gzip and brotli on every request', async () => {
    await aniListClient(server).anilist.query.media({ id: 1 });
    expect(onlyRequest(server).headers['accept-encoding']).toBe('gzip, br');
  });

  it('decodes a gzip answer', async () => {
    server.enqueue(json('gzip', gzipSync(payload)));
    await expect(aniListClient(server).anilist.query.media({ id: 7 })).resolves.toEqual(media);
  });

  it('decodes a brotli answer', async () => {
    server.enqueue(json('br', brotliCompressSync(payload)));
    await expect(aniListClient(server).anilist.query.media({ id: 7 })).resolves.toEqual(media);
  });

  // A body above 32 KiB decoded needs more than one of the decoder's output steps; each used to
  // fail as "truncated" once the compressed bytes were all taken, so big pages over br broke.
  it.each(['gzip', 'br'])('decodes a %s answer of over 60 KB, whole or trickled', async (encoding) => {
    const page = {
      data: {
        Page: { media: Array.from({ length: 40 }, (_, id) => ({ id, title: { romaji: `title ${id}`.repeat(200) } })) },
      },
    };
    const text = JSON.stringify(page);
    expect(text.length).toBeGreaterThan(60_000);
    const compressed = encoding === 'br' ? brotliCompressSync(text) : gzipSync(text);
    server.enqueue(json(encoding, compressed));
    server.enqueue({ ...json(encoding, compressed), trickle: { chunks: 7, intervalMs: 1 } });
    const client = aniListClient(server);
    for (let round = 0; round < 2; round += 1) {
      await expect(client.anilist.custom('query { Page { media { id title { romaji } } } }')).resolves.toEqual(
        page.data.Page,
      );
    }
  });

  it('decodes gzip REST answers too, sent in trickled chunks', async () => {
    server.enqueue({
      ...json('gzip', gzipSync(JSON.stringify({ id: 1, title: 'A' }))),
      trickle: { chunks: 4, intervalMs: 5 },
    });
    await expect(malClient(server).mal.anime.get({ id: 1 })).resolves.toEqual({ id: 1, title: 'A' });
  });

  it('maxResponseBytes counts decoded bytes: a 1 GiB gzip bomb stops at the limit without being buffered', async () => {
    const bomb = gzipBomb(1024);
    expect(bomb.length).toBeLessThan(2 << 20);
    server.enqueue(json('gzip', bomb));
    const before = process.memoryUsage().rss;
    const failure = await failureOf(
      aniListClient(server, { maxResponseBytes: 1 << 20 }).anilist.query.media({ id: 1 }),
    );
    const grown = process.memoryUsage().rss - before;
    expect(failure.code).toBe('NETWORK_ERROR');
    expect(failure.reason).toContain(`maxResponseBytes (${1 << 20} bytes)`);
    expect(grown).toBeLessThan(256 << 20);
    // A compressed body well under the limit whose decoded size is over it is refused too.
    server.enqueue(json('gzip', gzipBomb(2)));
    const small = await failureOf(aniListClient(server, { maxResponseBytes: 1 << 20 }).anilist.query.media({ id: 1 }));
    expect(small.reason).toContain('maxResponseBytes');
  });

  it('a corrupt gzip body is a NETWORK_ERROR saying so, retried like a body cut short', async () => {
    const corrupt = gzipSync(payload);
    corrupt.fill(0x55, 20, 60);
    server.setDefault(json('gzip', corrupt));
    const retryOnce = { retry: { maxRetries: 1, baseDelayMs: 1, jitter: false } };
    const failure = await failureOf(aniListClient(server, retryOnce).anilist.query.media({ id: 1 }));
    expect(failure.code).toBe('NETWORK_ERROR');
    expect(failure.reason).toContain('the gzip response body could not be decoded');
    expect(server.requests).toHaveLength(2);
  });

  it('a truncated brotli body and an encoding the client did not ask for are NETWORK_ERRORs', async () => {
    const whole = brotliCompressSync(payload);
    server.enqueue(json('br', whole.subarray(0, whole.length - 8)));
    const truncated = await failureOf(aniListClient(server).anilist.query.media({ id: 1 }));
    expect(truncated.reason).toContain('the br response body could not be decoded');
    server.enqueue(json('zstd', Buffer.from(payload)));
    const unknown = await failureOf(aniListClient(server).anilist.query.media({ id: 1 }));
    expect(unknown.code).toBe('NETWORK_ERROR');
    expect(unknown.reason).toContain('Content-Encoding "zstd", which the client cannot decode (it accepts gzip, br)');
  });
});
