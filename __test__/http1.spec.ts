// The client's own HTTP/1.1 connection (docs/pools.md, "HTTP/1.1 on the wire"), end to end against a
// raw TCP server on 127.0.0.1 that answers each request with the bytes a test scripts: every
// framing a server may use, answers that are not HTTP, and connections the server ends.
import net from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AniLinkNetworkError } from 'anilink-api-wrapper';
import { aniListClient, rejectionOf } from './support/helpers';

/** One scripted answer: its raw bytes, and whether the server then closes the connection. */
interface Answer {
  bytes: string | Buffer;
  close?: boolean;
}

const MEDIA = '{"data":{"Media":{"id":1}}}';
const answers: Answer[] = [];
let connections = 0;
let requests = 0;
const sockets = new Set<net.Socket>();
let server: net.Server;
let upstream: { url: string };

/** Answer each whole request (head and Content-Length body) with the next scripted answer. */
function serve(socket: net.Socket): void {
  connections += 1;
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
  socket.on('error', () => {});
  let pending = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      const end = pending.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(pending.subarray(0, end).toString())?.[1] ?? 0);
      if (pending.length < end + 4 + length) return;
      pending = pending.subarray(end + 4 + length);
      requests += 1;
      const answer = answers.shift() ?? { bytes: ok(MEDIA) };
      socket.write(answer.bytes);
      if (answer.close) socket.end();
    }
  });
}

function ok(body: string, headers = ''): string {
  return `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n${headers}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

beforeAll(async () => {
  server = net.createServer(serve);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstream = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
});

beforeEach(() => {
  answers.length = 0;
  connections = 0;
  requests = 0;
  for (const socket of sockets) socket.destroy();
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

/** A fresh client (its own pool) on the scripted server. */
function client() {
  return aniListClient(upstream, { maxSockets: 1 });
}

describe('HTTP/1.1 framing', () => {
  it('reads a chunked body with extensions and trailers, then reuses the connection', async () => {
    answers.push({
      bytes:
        'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n' +
        `5;ext=1\r\n${MEDIA.slice(0, 5)}\r\n${(MEDIA.length - 5).toString(16)}\r\n${MEDIA.slice(5)}\r\n0\r\nx-checksum: 1\r\n\r\n`,
    });
    const aniLink = client();
    await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    expect([requests, connections]).toEqual([2, 1]);
  });

  it('skips interim 1xx answers before the response', async () => {
    answers.push({ bytes: `HTTP/1.1 103 Early Hints\r\nlink: </a>; rel=preload\r\n\r\n${ok(MEDIA)}` });
    await expect(client().anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
  });

  it('reads a body that ends with the connection, and opens a new one for the next call', async () => {
    answers.push({ bytes: `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n${MEDIA}`, close: true });
    const aniLink = client();
    await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    expect([requests, connections]).toEqual([2, 2]);
  });

  it('does not reuse a connection the response asked to close', async () => {
    answers.push({ bytes: ok(MEDIA, 'connection: close\r\n') });
    const aniLink = client();
    await aniLink.anilist.query.media({ id: 1 });
    await aniLink.anilist.query.media({ id: 1 });
    expect([requests, connections]).toEqual([2, 2]);
  });

  it('sends a mutation on a fresh connection when the server closed the idle one', async () => {
    const aniLink = client();
    await aniLink.anilist.query.media({ id: 1 });
    for (const socket of sockets) socket.end();
    // The close reaches the client's socket; until then the connection still looks open.
    await new Promise((resolve) => setTimeout(resolve, 50));
    answers.push({ bytes: ok('{"data":{"ToggleFollow":{"id":1}}}') });
    await expect(aniLink.anilist.custom('mutation { ToggleFollow(userId: 1) { id } }')).resolves.toEqual({ id: 1 });
    expect([requests, connections]).toEqual([2, 2]);
  });
});

describe('answers that are not HTTP/1.1 fail typed, and the process stays up', () => {
  async function failure(answer: Answer) {
    answers.push(answer);
    const error = await rejectionOf<AniLinkNetworkError & { reason: string }>(client().anilist.query.media({ id: 1 }));
    expect(error).toBeInstanceOf(AniLinkNetworkError);
    expect(error.code).toBe('NETWORK_ERROR');
    return error.reason;
  }

  it('names a head larger than 64 KiB', async () => {
    const long = `HTTP/1.1 200 OK\r\nx-long: ${'x'.repeat(70 * 1024)}`;
    const limit = 'the response is not valid HTTP/1.1: its head is larger than 64 KiB';
    expect(await failure({ bytes: long })).toBe(limit);
    expect(await failure({ bytes: `${long}\r\ncontent-length: 0\r\n\r\n` })).toBe(limit);
  });

  it('names bytes that are not a response, and a broken chunk', async () => {
    expect(await failure({ bytes: 'SSH-2.0-OpenSSH_9.6\r\n\r\n', close: true })).toMatch(
      /^the response is not valid HTTP\/1\.1: /,
    );
    expect(await failure({ bytes: 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n', close: true })).toBe(
      'the response is not valid HTTP/1.1: invalid chunk size "zz"',
    );
    expect(
      await failure({ bytes: 'HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n', close: true }),
    ).toBe('the response is not valid HTTP/1.1: conflicting Content-Length values');
  });

  it('says the connection closed, before any response or in the middle of one', async () => {
    expect(await failure({ bytes: '', close: true })).toBe('the connection closed before any response');
    expect(await failure({ bytes: 'HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"da', close: true })).toBe(
      'the connection closed before the response was complete',
    );
  });
});

describe("responses Node's parser refuses are refused at once (D40)", () => {
  /** The reason and the time to settle of a call whose answer stays on an open connection. */
  async function refusal(bytes: string, retry: false | { maxRetries: number } = false) {
    answers.length = 0;
    answers.push({ bytes }, { bytes });
    const started = performance.now();
    const error = await rejectionOf<AniLinkNetworkError & { reason: string }>(
      aniListClient(upstream, { maxSockets: 1, timeout: 10_000, retry }).anilist.query.media(
        { id: 1 },
        { retry: retry === false ? false : { ...retry, baseDelayMs: 1, jitter: false } },
      ),
    );
    expect(error.code, error.reason).toBe('NETWORK_ERROR');
    return { reason: error.reason, ms: performance.now() - started };
  }
  const malformed = 'the response is not valid HTTP/1.1: ';

  it('a last Transfer-Encoding other than chunked, with or without Content-Length, retried like any malformed answer', async () => {
    for (const framing of ['transfer-encoding: identity\r\ncontent-length: 27', 'transfer-encoding: gzip']) {
      const { reason, ms } = await refusal(`HTTP/1.1 200 OK\r\n${framing}\r\n\r\n${MEDIA}`);
      expect(reason).toBe(`${malformed}Transfer-Encoding does not end in chunked`);
      expect(ms).toBeLessThan(5_000);
    }
    requests = 0;
    await refusal(`HTTP/1.1 200 OK\r\ntransfer-encoding: identity\r\ncontent-length: 27\r\n\r\n${MEDIA}`, {
      maxRetries: 1,
    });
    expect(requests).toBe(2);
  });

  it('bare CR line ends, and chunk lines with a bare CR, a bare LF or spaces', async () => {
    const chunked = 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n';
    for (const [bytes, expected] of [
      ['HTTP/1.1 200 OK\rcontent-length: 27\r\r', 'a line of its head ends in a bare CR'],
      [`${chunked}1b \r\n${MEDIA}\r\n0\r\n\r\n`, 'invalid chunk size "1b "'],
      [`${chunked}1b;a b\r\n${MEDIA}\r\n0\r\n\r\n`, 'invalid chunk size "1b;a b"'],
      [`${chunked}1b;a\nb\r\n${MEDIA}\r\n0\r\n\r\n`, 'a chunk line ends in a bare LF'],
      [`${chunked}1b\r${MEDIA}\r\n0\r\n\r\n`, 'a chunk line ends in a bare CR'],
    ]) {
      const { reason, ms } = await refusal(bytes);
      expect(reason).toBe(`${malformed}${expected}`);
      expect(ms).toBeLessThan(5_000);
    }
  });
});

describe('Content-Encoding over several lines is one list (D40)', () => {
  const encoded = (lines: string[], body: Buffer) =>
    Buffer.concat([
      Buffer.from(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n${lines.map((l) => `content-encoding: ${l}\r\n`).join('')}content-length: ${body.length}\r\n\r\n`,
      ),
      body,
    ]);

  it('decodes every coding in turn, the last applied first', async () => {
    const media = Buffer.from(MEDIA);
    for (const [lines, body] of [
      [['gzip', 'gzip'], gzipSync(gzipSync(media))],
      [['identity', 'gzip'], gzipSync(media)],
      [['gzip', 'br'], brotliCompressSync(gzipSync(media))],
    ] as const) {
      answers.push({ bytes: encoded([...lines], body) });
      await expect(client().anilist.query.media({ id: 1 }), lines.join('+')).resolves.toEqual({ id: 1 });
    }
  });

  it('fails the call when any coding is one the client cannot decode', async () => {
    answers.push({ bytes: encoded(['gzip', 'zstd'], gzipSync(Buffer.from(MEDIA))) });
    const error = await rejectionOf<AniLinkNetworkError & { reason: string }>(client().anilist.query.media({ id: 1 }));
    expect(error.reason).toBe(
      'the response has Content-Encoding "zstd", which the client cannot decode (it accepts gzip, br)',
    );
  });
});

describe('a final answer that arrives during the upload (D40)', () => {
  it('is returned at once, and the rest of the body is not sent', async () => {
    let received = 0;
    const early = net.createServer((socket) => {
      socket.on('error', () => {});
      socket.once('data', (chunk) => {
        received += chunk.length;
        socket.write('HTTP/1.1 413 Content Too Large\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
        // Stop reading: the client's upload stalls once the socket buffers are full.
        socket.pause();
      });
    });
    await new Promise<void>((resolve) => early.listen(0, '127.0.0.1', resolve));
    try {
      const aniLink = aniListClient(
        { url: `http://127.0.0.1:${(early.address() as AddressInfo).port}` },
        { timeout: 10_000 },
      );
      const started = performance.now();
      const error = await rejectionOf<{ status: number; code: string }>(
        aniLink.anilist.custom('query ($big: String) { Media { id } }', { big: 'x'.repeat(32 * 1024 * 1024) }),
      );
      expect([error.code, error.status]).toEqual(['API_ERROR', 413]);
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(received).toBeLessThan(32 * 1024 * 1024);
    } finally {
      early.close();
    }
  });
});
