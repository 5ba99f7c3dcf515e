// The raw responses of the differential conformance suite (issue 35): each is served by the
// same server on 127.0.0.1 to node:http and to AniLink, and the two must agree (accept or
// refuse, the body delivered, the time to settle) unless the row names a deliberate difference
// (`differs`), which docs/pools.md lists ("HTTP/1.1 on the wire").
//
// A row: `wire` (latin1 text, or an array of pieces written apart), then `after`: 'keep' (the
// connection stays open and silent), 'end' (the server half-closes) or 'reset'. `early`: the
// answer goes out as soon as the request head arrives, while a large body is still coming, and
// the server stops reading. `decode`: node:http hands over the encoded bytes, so they are
// decoded here (every Content-Encoding in turn, last applied first) before the comparison.
// `differs`: { node, anilink } outcomes ('accept', 'refuse' or 'timeout') and the reason.
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { random } from '../support/raw-upstream.mjs';

const OK = 'HTTP/1.1 200 OK\r\n';
const CHUNKED = `${OK}transfer-encoding: chunked\r\n\r\n`;
const body = (length) => `${OK}content-length: ${length}\r\n\r\n`;
const encoded = (codings, bytes) =>
  Buffer.concat([
    Buffer.from(
      `${OK}${codings.map((c) => `content-encoding: ${c}\r\n`).join('')}content-length: ${bytes.length}\r\n\r\n`,
    ),
    bytes,
  ]);
const HELLO = Buffer.from('hello');

/** The deliberate differences, each once: rows point at them by key. */
export const DIFFERENCES = {
  bareLf: {
    node: 'refuse',
    anilink: 'accept',
    reason: 'bare LF line ends in a head are read, as RFC 9112 §2.2 lets a recipient do',
  },
  duplicateLength: {
    node: 'refuse',
    anilink: 'accept',
    reason: 'repeated Content-Length values that agree are one length (RFC 9110 §8.6)',
  },
  headLimit: {
    node: 'refuse',
    anilink: 'accept',
    reason: 'a head up to 64 KiB is read (Node stops at 16 KiB unless started with --max-http-header-size)',
  },
  headerLines: {
    node: 'accept',
    anilink: 'refuse',
    reason: 'more than 128 header lines are refused (a bounded parse on the stack)',
  },
  identityUntilClose: {
    node: 'accept',
    anilink: 'refuse',
    reason: 'a last Transfer-Encoding other than chunked is refused even when the server closes after it (D40)',
  },
  identityUntilHang: {
    node: 'timeout',
    anilink: 'refuse',
    reason: 'a last Transfer-Encoding other than chunked is refused at once instead of waiting for a close (D40)',
  },
  strayBytes: {
    node: 'refuse',
    anilink: 'accept',
    reason:
      'bytes after a complete response (a 204 or 304 body, more than Content-Length) do not undo it: it is delivered and the connection closed; Node fails the request when they arrive with it',
  },
  otherVersion: {
    node: 'accept',
    anilink: 'refuse',
    reason: 'a status line of a version other than HTTP/1.0 or 1.1 (HTTP/2.0) is refused: its framing is not HTTP/1',
  },
  lengthAndChunks: {
    node: 'refuse',
    anilink: 'accept',
    reason: 'Content-Length with chunked is read by its chunks, then the connection is closed (RFC 9112 §6.3)',
  },
};

/** The table. Ids are stable: the seeded subset and reports name rows by them. */
export const ROWS = [
  // RFC 9112 §6: framing.
  { id: 'length', wire: `${body(5)}hello` },
  { id: 'length-zero', wire: body(0) },
  { id: 'length-then-end', wire: `${body(5)}hello`, after: 'end' },
  { id: 'length-split', wire: [`${OK}content-le`, 'ngth: 5\r\n\r\nhel', 'lo'] },
  { id: 'length-short-body-end', wire: `${body(9)}hello`, after: 'end' },
  { id: 'length-short-body-hang', wire: `${body(9)}hello` },
  { id: 'length-short-body-reset', wire: `${body(9)}hello`, after: 'reset' },
  { id: 'length-extra-bytes', wire: `${body(5)}helloEXTRA`, differs: 'strayBytes' },
  {
    id: 'length-duplicate-equal',
    wire: `${OK}content-length: 5\r\ncontent-length: 5\r\n\r\nhello`,
    differs: 'duplicateLength',
  },
  { id: 'length-list-equal', wire: `${OK}content-length: 5, 5\r\n\r\nhello`, differs: 'duplicateLength' },
  { id: 'length-conflict', wire: `${OK}content-length: 5\r\ncontent-length: 6\r\n\r\nhello` },
  { id: 'length-negative', wire: `${OK}content-length: -5\r\n\r\nhello` },
  { id: 'length-plus', wire: `${OK}content-length: +5\r\n\r\nhello` },
  { id: 'length-hex', wire: `${OK}content-length: 0x5\r\n\r\nhello` },
  { id: 'length-huge', wire: `${OK}content-length: 99999999999999999999999\r\n\r\nhello` },
  { id: 'chunked', wire: `${CHUNKED}5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n` },
  { id: 'chunked-split', wire: [`${CHUNKED}5\r`, '\nhel', 'lo\r\n0\r', '\n\r\n'] },
  { id: 'chunked-upper-hex', wire: `${CHUNKED}A\r\n0123456789\r\n0\r\n\r\n` },
  { id: 'chunked-leading-zeros', wire: `${CHUNKED}0005\r\nhello\r\n000\r\n\r\n` },
  { id: 'chunked-extensions', wire: `${CHUNKED}5;a=b;c\r\nhello\r\n0;last\r\n\r\n` },
  { id: 'chunked-quoted-extension', wire: `${CHUNKED}5;a="x y;\\"z"\r\nhello\r\n0\r\n\r\n` },
  { id: 'chunked-trailers', wire: `${CHUNKED}5\r\nhello\r\n0\r\nx-checksum: 1\r\nx-more: 2\r\n\r\n` },
  { id: 'chunked-bad-size', wire: `${CHUNKED}zz\r\nhello\r\n0\r\n\r\n` },
  { id: 'chunked-size-space', wire: `${CHUNKED}5 \r\nhello\r\n0\r\n\r\n` },
  { id: 'chunked-size-leading-space', wire: `${CHUNKED} 5\r\nhello\r\n0\r\n\r\n` },
  { id: 'chunked-extension-space-before', wire: `${CHUNKED}5 ;a=b\r\nhello\r\n0\r\n\r\n` },
  { id: 'chunked-extension-space-after', wire: `${CHUNKED}5; a=b\r\nhello\r\n0\r\n\r\n` },
  { id: 'chunked-extension-space-inside', wire: `${CHUNKED}5;a b\r\nhello\r\n0\r\n\r\n` },
  { id: 'chunked-extension-bare-lf', wire: `${CHUNKED}5;a\nb\r\nhello\r\n0\r\n\r\n` },
  { id: 'chunked-size-bare-lf', wire: `${CHUNKED}5\nhello\r\n0\r\n\r\n` },
  { id: 'chunked-size-bare-cr', wire: `${CHUNKED}5\rhello\r\n0\r\n\r\n` },
  { id: 'chunked-data-too-long', wire: `${CHUNKED}2\r\nhello\r\n0\r\n\r\n` },
  { id: 'chunked-truncated-end', wire: `${CHUNKED}5\r\nhel`, after: 'end' },
  { id: 'chunked-no-last-chunk-hang', wire: `${CHUNKED}5\r\nhello\r\n` },
  { id: 'chunked-last-uppercase-name', wire: `${OK}Transfer-Encoding: Chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n` },
  { id: 'chunked-after-gzip', wire: `${OK}transfer-encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n` },
  {
    id: 'chunked-over-two-lines',
    wire: `${OK}transfer-encoding: gzip\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
  },
  {
    id: 'chunked-and-length',
    wire: `${OK}transfer-encoding: chunked\r\ncontent-length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
    differs: 'lengthAndChunks',
  },
  { id: 'until-close', wire: `${OK}\r\nhello`, after: 'end' },
  { id: 'until-close-http10', wire: 'HTTP/1.0 200 OK\r\n\r\nhello', after: 'end' },
  { id: 'http10-length', wire: 'HTTP/1.0 200 OK\r\ncontent-length: 5\r\n\r\nhello' },
  // Issue 35, cases 1, 7 and 8.
  { id: 'identity-with-length', wire: `${OK}transfer-encoding: identity\r\ncontent-length: 5\r\n\r\nhello` },
  {
    id: 'identity-until-close',
    wire: `${OK}transfer-encoding: identity\r\n\r\nhello`,
    after: 'end',
    differs: 'identityUntilClose',
  },
  { id: 'identity-hang', wire: `${OK}transfer-encoding: identity\r\n\r\nhello`, differs: 'identityUntilHang' },
  {
    id: 'chunked-then-identity',
    wire: `${OK}transfer-encoding: chunked, identity\r\n\r\nhello`,
    differs: 'identityUntilHang',
  },
  { id: 'bare-cr-head', wire: 'HTTP/1.1 200 OK\rcontent-length: 5\r\r' },
  { id: 'bare-cr-in-value', wire: `${OK}x-a: 1\r2\r\ncontent-length: 5\r\n\r\nhello` },
  { id: 'bare-lf-head', wire: 'HTTP/1.1 200 OK\ncontent-length: 5\n\nhello', differs: 'bareLf' },
  // The head.
  { id: 'no-reason', wire: 'HTTP/1.1 200\r\ncontent-length: 5\r\n\r\nhello' },
  { id: 'empty-reason', wire: 'HTTP/1.1 200 \r\ncontent-length: 5\r\n\r\nhello' },
  { id: 'latin1-reason', wire: 'HTTP/1.1 200 \u00ff\u00fe\r\ncontent-length: 5\r\n\r\nhello' },
  { id: 'status-four-digits', wire: 'HTTP/1.1 2000 OK\r\ncontent-length: 5\r\n\r\nhello' },
  { id: 'status-letters', wire: 'HTTP/1.1 abc\r\n\r\n' },
  { id: 'version-2', wire: 'HTTP/2.0 200 OK\r\ncontent-length: 5\r\n\r\nhello', differs: 'otherVersion' },
  { id: 'version-garbage', wire: 'HTTP/1.1x 200 OK\r\ncontent-length: 5\r\n\r\nhello' },
  { id: 'not-http', wire: 'SSH-2.0-OpenSSH_9.6\r\n\r\n', after: 'end' },
  { id: 'nul-bytes', wire: '\u0000\u0001\u0002', after: 'end' },
  { id: 'header-no-colon', wire: `${OK}no colon here\r\ncontent-length: 5\r\n\r\nhello` },
  { id: 'header-space-before-colon', wire: `${OK}content-length : 5\r\n\r\nhello` },
  { id: 'header-empty-name', wire: `${OK}: empty\r\ncontent-length: 5\r\n\r\nhello` },
  { id: 'header-nul-value', wire: `${OK}x-a: a\u0000b\r\ncontent-length: 5\r\n\r\nhello` },
  { id: 'header-obs-fold', wire: `${OK}x-a: a\r\n continued\r\ncontent-length: 5\r\n\r\nhello` },
  { id: 'header-latin1-value', wire: `${OK}x-a: \u00e9\u00ff\r\ncontent-length: 5\r\n\r\nhello` },
  { id: 'head-cut-end', wire: 'HTTP/1.1 200 OK\r\ncontent-le', after: 'end' },
  {
    id: 'head-20-kib',
    wire: `${OK}x-big: ${'v'.repeat(20 * 1024)}\r\ncontent-length: 5\r\n\r\nhello`,
    differs: 'headLimit',
  },
  { id: 'head-70-kib', wire: `${OK}x-big: ${'v'.repeat(70 * 1024)}\r\ncontent-length: 5\r\n\r\nhello` },
  {
    id: 'header-lines-150',
    wire: `${OK}${Array.from({ length: 150 }, (_, i) => `x-${i}: ${i}\r\n`).join('')}content-length: 5\r\n\r\nhello`,
    differs: 'headerLines',
  },
  // 1xx and 101.
  { id: 'continue-then-ok', wire: `HTTP/1.1 100 Continue\r\n\r\n${body(5)}hello` },
  { id: 'early-hints-then-ok', wire: `HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n${body(5)}hello` },
  {
    id: 'two-interim-then-ok',
    wire: ['HTTP/1.1 100 Continue\r\n\r\n', 'HTTP/1.1 102 Processing\r\n\r\n', `${body(5)}hello`],
  },
  { id: 'interim-199-then-ok', wire: `HTTP/1.1 199 Whatever\r\n\r\n${body(5)}hello` },
  { id: 'interim-only-end', wire: 'HTTP/1.1 100 Continue\r\n\r\n', after: 'end' },
  { id: 'switching-protocols', wire: 'HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\r\n', after: 'end' },
  // 204 and 304 have no body, whatever they say.
  {
    id: 'no-content-with-length',
    wire: 'HTTP/1.1 204 No Content\r\ncontent-length: 5\r\n\r\nhello',
    differs: 'strayBytes',
  },
  {
    id: 'no-content-chunked',
    wire: 'HTTP/1.1 204 No Content\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
    differs: 'strayBytes',
  },
  { id: 'no-content-bare-body', wire: 'HTTP/1.1 204 No Content\r\n\r\nhello', after: 'end', differs: 'strayBytes' },
  {
    id: 'not-modified-with-length',
    wire: 'HTTP/1.1 304 Not Modified\r\ncontent-length: 5\r\n\r\nhello',
    differs: 'strayBytes',
  },
  // Content-Encoding (issue 35, case 2): node:http does not decode, so its bytes are decoded here.
  { id: 'gzip', wire: encoded(['gzip'], gzipSync(HELLO)), decode: true },
  { id: 'gzip-twice', wire: encoded(['gzip', 'gzip'], gzipSync(gzipSync(HELLO))), decode: true },
  { id: 'identity-then-gzip', wire: encoded(['identity', 'gzip'], gzipSync(HELLO)), decode: true },
  { id: 'gzip-then-br', wire: encoded(['gzip', 'br'], brotliCompressSync(gzipSync(HELLO))), decode: true },
  { id: 'gzip-then-zstd', wire: encoded(['gzip', 'zstd'], gzipSync(HELLO)), decode: true },
  // Early answers (issue 35, case 3): the server answers before the request body is in.
  {
    id: 'early-413',
    wire: `HTTP/1.1 413 Content Too Large\r\nconnection: close\r\n${'content-length: 2\r\n\r\n{}'}`,
    early: true,
  },
  { id: 'early-200', wire: `${body(5)}hello`, early: true },
  // Half-closes and resets.
  { id: 'end-before-answer', wire: '', after: 'end' },
  { id: 'reset-before-answer', wire: '', after: 'reset' },
  { id: 'end-during-upload', wire: '', after: 'end', early: true },
];

/**
 * Generated rows from the framing families of the hostile-upstream fuzzer (__test__/fuzz/):
 * honest and wrong lengths, chunked bodies honest or broken, close-delimited bodies, both
 * framings, garbage, nothing, a cut head; each with a random body, split at random points.
 */
export function familyRows(seed, count) {
  const next = random(seed);
  const int = (n) => Math.floor(next() * n);
  const pick = (items) => items[int(items.length)];
  const rows = [];
  for (let n = 0; n < count; n++) {
    const payload = Array.from({ length: 1 + int(300) }, () => pick('abcdefghij{}[]":, 0123456789')).join('');
    const size = Buffer.byteLength(payload);
    const family = pick([
      'length',
      'length-short',
      'length-long',
      'chunked',
      'chunked-broken',
      'close',
      'both',
      'garbage',
      'nothing',
      'cut-head',
    ]);
    let wire;
    let after = 'keep';
    let differs;
    switch (family) {
      case 'length':
        wire = `${body(size)}${payload}`;
        after = pick(['keep', 'end']);
        break;
      case 'length-short':
        // The stray bytes come with the body's end, so Node reports them before that end.
        wire = `${body(Math.max(0, size - 1 - int(10)))}${payload}`;
        differs = 'strayBytes';
        break;
      case 'length-long':
        wire = `${body(size + 1 + int(100))}${payload}`;
        after = pick(['end', 'reset']);
        break;
      case 'chunked': {
        const cut = int(size + 1);
        const chunks = [payload.slice(0, cut), payload.slice(cut)].filter((c) => c.length > 0);
        wire = `${CHUNKED}${chunks.map((c) => `${c.length.toString(16)}\r\n${c}\r\n`).join('')}0\r\n\r\n`;
        break;
      }
      case 'chunked-broken': {
        const broken = pick(['bad-size', 'truncated', 'no-terminator']);
        const sizeText = broken === 'bad-size' ? 'zz' : size.toString(16);
        const tail = broken === 'truncated' ? '' : broken === 'no-terminator' ? '\r\n' : '\r\n0\r\n\r\n';
        wire = `${CHUNKED}${sizeText}\r\n${payload}${tail}`;
        after = 'end';
        break;
      }
      case 'close':
        wire = `${OK}connection: close\r\n\r\n${payload}`;
        after = 'end';
        break;
      case 'both':
        if (next() < 0.5) {
          wire = `${OK}transfer-encoding: chunked\r\ncontent-length: ${size}\r\n\r\n${size.toString(16)}\r\n${payload}\r\n0\r\n\r\n`;
          differs = 'lengthAndChunks';
        } else {
          wire = `${OK}content-length: ${size}\r\ncontent-length: ${size + 1}\r\n\r\n${payload}`;
        }
        break;
      case 'garbage':
        wire = pick([
          'garbage\r\n\r\n',
          '\u0000\u0001\u0002',
          'HTTP/1.1 abc\r\n\r\n',
          'SSH-2.0-OpenSSH\r\n\r\n',
          '\r\n\r\n\r\n',
        ]);
        after = 'end';
        break;
      case 'nothing':
        wire = '';
        after = pick(['end', 'reset']);
        break;
      default: {
        const head = `${OK}content-length: ${size}\r\n`;
        wire = head.slice(0, 1 + int(head.length - 1));
        after = pick(['end', 'reset']);
      }
    }
    // Split at random points, so every parser state meets a boundary somewhere.
    const pieces = [];
    let rest = wire;
    while (family !== 'length-short' && rest.length > 0 && pieces.length < 4 && next() < 0.6) {
      const at = 1 + int(rest.length);
      pieces.push(rest.slice(0, at));
      rest = rest.slice(at);
    }
    if (rest.length > 0 || pieces.length === 0) pieces.push(rest);
    rows.push({ id: `family-${seed}-${n}-${family}`, wire: pieces, after, differs });
  }
  return rows;
}
