// A seeded fuzzer of hostile HTTP upstreams (issue 13, decisions D28–D29): a raw `net` server
// on 127.0.0.1 answers every call with a response generated from the seed (broken framing,
// hostile headers, rate-limit and Retry-After values, odd bodies and envelopes, resets, hangs,
// trickles), and every call must settle with a typed code within its deadline while the
// process stays up.
//
//   node __test__/fuzz/hostile-upstream.mjs [--seed N] [--cases N] [--concurrency N]
//
// Prints one `RESULT {json}` line (cases, unsettled, untyped, uncaught, durationMs, codes) and
// exits 0 only when every call settled with a typed outcome and nothing escaped.
import { AniLink, AniLinkError, AniLinkErrorCodes, destroyCachedAgents } from 'anilink-api-wrapper';
import { listenRaw, random } from '../support/raw-upstream.mjs';

const args = Object.fromEntries(
  process.argv.slice(2).flatMap((arg, i, all) => (arg.startsWith('--') ? [[arg.slice(2), all[i + 1]]] : [])),
);
const SEED = Number(args.seed ?? 1);
const CASES = Number(args.cases ?? 300);
const CONCURRENCY = Number(args.concurrency ?? 24);
/** Every call is cancelled by its signal at this point at the latest… */
const DEADLINE_MS = 3000;
/** …and must have settled this long after it. */
const GRACE_MS = 1500;
const TYPED_CODES = new Set(Object.values(AniLinkErrorCodes));

let uncaught = 0;
process.on('uncaughtException', (error) => {
  uncaught += 1;
  console.error('uncaughtException', error);
});
process.on('unhandledRejection', (reason) => {
  uncaught += 1;
  console.error('unhandledRejection', reason);
});

function generator(seed) {
  const next = random(seed);
  const int = (n) => Math.floor(next() * n);
  const pick = (items) => items[int(items.length)];
  return { next, int, pick, chance: (p) => next() < p };
}

const STATUSES = [
  200, 200, 200, 200, 201, 204, 206, 301, 304, 400, 401, 403, 404, 418, 429, 429, 500, 502, 503, 503, 504, 599, 100,
  101, 199, 600, 999,
];
const RETRY_AFTER = [
  '0',
  '1',
  '2',
  '-5',
  'abc',
  '99999999999',
  '1e3',
  ' 1 ',
  '',
  'Infinity',
  '1.5',
  'Wed, 21 Oct 2015 07:28:00 GMT',
  'date',
];
const RATE_VALUES = ['0', '1', '90', '-1', 'NaN', '1e309', 'abc', '', '18446744073709551616', 'soon', 'past', '4.5'];

function rateValue(g) {
  const value = g.pick(RATE_VALUES);
  const now = Math.floor(Date.now() / 1000);
  if (value === 'soon') return String(now + 1 + g.int(3));
  if (value === 'past') return String(now - 100);
  return value;
}

/** A random JSON-ish envelope, sometimes broken, sometimes deep. */
function envelope(g) {
  const scalars = ['null', 'true', '0', '200', '429', '500', '503', '1e400', '-1', '""', '"m"', '"500"', '5e2'];
  const keys = ['data', 'errors', 'message', 'status', 'Media', 'x', 'id'];
  const value = (depth) => {
    const roll = g.next();
    if (depth > 3 || roll < 0.4) return g.pick(scalars);
    const size = g.int(4);
    if (roll < 0.7) return `{${Array.from({ length: size }, () => `"${g.pick(keys)}":${value(depth + 1)}`).join(',')}}`;
    return `[${Array.from({ length: size }, () => value(depth + 1)).join(',')}]`;
  };
  const members = Array.from(
    { length: 1 + g.int(3) },
    () => `"${g.pick(['data', 'errors', 'errors', 'x'])}":${value(1)}`,
  );
  let body = `{${members.join(',')}}`;
  if (g.chance(0.1)) {
    const at = g.int(body.length);
    body = body.slice(0, at) + g.pick(['}', ']', ',', '"', '\u0000']) + body.slice(at);
  }
  return body;
}

function body(g) {
  switch (g.int(10)) {
    case 0:
      return Buffer.from('{"data":{"Media":{"id":1}}}');
    case 1:
    case 2:
    case 3:
      return Buffer.from(envelope(g));
    case 4:
      return Buffer.from(Array.from({ length: g.int(512) }, () => g.int(256)));
    case 5:
      return Buffer.from(`${'['.repeat(20000)}1${']'.repeat(20000)}`);
    case 6:
      return Buffer.alloc(64 * 1024 + g.int(256 * 1024), g.pick([0x61, 0x01, 0x22, 0xff]));
    case 7:
      return Buffer.alloc(0);
    case 8:
      return Buffer.from(
        g.pick(['<html>oops</html>', '"just a string"', '42', 'null', '[]', '{}', '\ufeff{"data":{}}']),
      );
    default:
      return Buffer.from(`{"data":{"Media":{"id":1}},"errors":[{"message":"m","status":${g.pick(STATUSES)}}]}`);
  }
}

/** The headers of a response: framing is added by the caller. */
function headers(g) {
  const lines = [];
  if (g.chance(0.7))
    lines.push(
      `content-type: ${g.pick(['application/json', 'text/plain', 'text/html; charset=utf-8', 'application/json; charset=latin1', '', 'x/\u00ff'])}`,
    );
  if (g.chance(0.3))
    lines.push(
      `retry-after: ${g.pick(RETRY_AFTER) === 'date' ? new Date(Date.now() + g.int(3000)).toUTCString() : g.pick(RETRY_AFTER)}`,
    );
  if (g.chance(0.4)) {
    lines.push(`x-ratelimit-limit: ${rateValue(g)}`);
    lines.push(`x-ratelimit-remaining: ${rateValue(g)}`);
    lines.push(`x-ratelimit-reset: ${rateValue(g)}`);
  }
  if (g.chance(0.05)) lines.push(`x-big: ${'v'.repeat(g.pick([1000, 70_000, 500_000]))}`);
  if (g.chance(0.05)) for (let i = 0; i < 150; i++) lines.push(`x-many-${i}: ${i}`);
  if (g.chance(0.05))
    lines.push(g.pick(['no colon here', 'bad header\u0000: x', ': empty name', 'x-obs-fold: a\r\n continued']));
  return lines;
}

/**
 * The whole hostile answer to one request: raw byte pieces to write, how far apart, and what
 * to do after them (keep the connection, end it, reset it, or hang).
 */
function hostileResponse(caseSeed) {
  const g = generator(caseSeed);
  const status = g.chance(0.5) ? 200 : g.pick(STATUSES);
  const payload = body(g);
  const head = [
    `${g.chance(0.9) ? 'HTTP/1.1' : g.pick(['HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1x'])} ${status} ${g.chance(0.9) ? 'OK' : g.pick(['Whatever', '', '\u00ff\u00fe'])}`,
    ...headers(g),
  ];
  const framing = g.int(14);
  let pieces;
  let after = 'keep';
  const withHead = (lines, bodyBytes) => [Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), bodyBytes];
  switch (framing) {
    case 0: // honest Content-Length
    case 1:
    case 2:
      pieces = withHead([...head, `content-length: ${payload.length}`], payload);
      break;
    case 3: // Content-Length shorter than the body: the rest poisons the connection
      pieces = withHead([...head, `content-length: ${Math.max(0, payload.length - 1 - g.int(10))}`], payload);
      break;
    case 4: // Content-Length longer than the body, then close or hang
      pieces = withHead([...head, `content-length: ${payload.length + 1 + g.int(100)}`], payload);
      after = g.pick(['end', 'hang', 'reset']);
      break;
    case 5: {
      // chunked, honest or broken
      const chunk = g.pick(['ok', 'bad-size', 'truncated', 'no-terminator']);
      const size = chunk === 'bad-size' ? 'zz' : payload.length.toString(16);
      const tail = chunk === 'truncated' ? '' : chunk === 'no-terminator' ? '\r\n' : '\r\n0\r\n\r\n';
      pieces = withHead(
        [...head, 'transfer-encoding: chunked'],
        Buffer.concat([Buffer.from(`${size}\r\n`), payload, Buffer.from(tail)]),
      );
      if (chunk !== 'ok') after = g.pick(['end', 'hang']);
      break;
    }
    case 6: // close-delimited
      pieces = withHead([...head, 'connection: close'], payload);
      after = 'end';
      break;
    case 7: // both framings, or two lengths
      pieces = withHead(
        [
          ...head,
          ...(g.chance(0.5)
            ? ['transfer-encoding: chunked', `content-length: ${payload.length}`]
            : [`content-length: ${payload.length}`, `content-length: ${payload.length + 1}`]),
        ],
        payload,
      );
      break;
    case 8: // garbage instead of a response
      pieces = [
        Buffer.from(
          g.pick([
            'garbage\r\n\r\n',
            '\u0000\u0001\u0002',
            'HTTP/1.1 abc\r\n\r\n',
            'SSH-2.0-OpenSSH\r\n',
            '\r\n\r\n\r\n',
          ]),
          'latin1',
        ),
      ];
      after = g.pick(['end', 'keep', 'hang']);
      break;
    case 9: // nothing at all
      pieces = [];
      after = g.pick(['end', 'reset', 'hang']);
      break;
    case 10: // cut in the middle of the head
      pieces = [Buffer.from(head.join('\r\n').slice(0, 1 + g.int(20)), 'latin1')];
      after = g.pick(['end', 'reset', 'hang']);
      break;
    default: // trickled, honest framing
      pieces = withHead([...head, `content-length: ${payload.length}`], payload);
      break;
  }
  const bytes = Buffer.concat(pieces);
  const trickle = framing >= 11 ? 2 + g.int(6) : 1;
  const size = Math.ceil(bytes.length / trickle) || 1;
  const slices = [];
  for (let at = 0; at < bytes.length; at += size) slices.push(bytes.subarray(at, at + size));
  return { slices, intervalMs: trickle > 1 ? 20 + g.int(200) : 0, after };
}

/** The case a request belongs to: MAL carries it in the path, AniList in its `id` variable. */
function caseOf(head, requestBody) {
  const path = /^[A-Z]+ (\S+)/.exec(head)?.[1] ?? '';
  const fromPath = /\/anime\/(\d+)/.exec(path)?.[1];
  const fromBody = /"id":(\d+)/.exec(requestBody)?.[1];
  return Number(fromPath ?? fromBody ?? 0);
}

function startServer() {
  const timers = new Set();
  const later = (fn, ms) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };
  return listenRaw(
    (socket) => {
      let buffered = Buffer.alloc(0);
      let busy = false;
      const serveNext = () => {
        if (busy || socket.destroyed) return;
        const headEnd = buffered.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        const head = buffered.subarray(0, headEnd).toString('latin1');
        const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < headEnd + 4 + length) return;
        const requestBody = buffered.subarray(headEnd + 4, headEnd + 4 + length).toString();
        buffered = buffered.subarray(headEnd + 4 + length);
        busy = true;
        const { slices, intervalMs, after } = hostileResponse(SEED * 1_000_003 + caseOf(head, requestBody));
        const write = (i) => {
          if (socket.destroyed) return;
          if (i < slices.length) {
            socket.write(slices[i]);
            later(() => write(i + 1), intervalMs);
            return;
          }
          busy = false;
          if (after === 'end') socket.end();
          else if (after === 'reset') socket.resetAndDestroy();
          else if (after === 'keep') serveNext();
          // 'hang': leave the socket open and silent
        };
        write(0);
      };
      socket.on('data', (chunk) => {
        buffered = Buffer.concat([buffered, chunk]);
        serveNext();
      });
    },
    () => {
      for (const timer of timers) clearTimeout(timer);
    },
  );
}

/** One call of case `n`, with options drawn from the case's own generator. */
function callFor(url, n, onHookFailure) {
  const g = generator(SEED * 7919 + n);
  const transport = {
    baseUrl: url,
    timeout: g.pick([300, 800, 1500]),
    retry: g.chance(0.3) ? false : { maxRetries: 1 + g.int(2), baseDelayMs: 1, maxDelayMs: 20 },
    allowPartialData: g.chance(0.3),
    maxResponseBytes: g.pick([undefined, 1024, 128 * 1024]),
    circuitBreaker: g.chance(0.2) ? { threshold: 1, cooldownMs: 50 } : undefined,
    ignorePaceDeadline: g.chance(0.5),
    onHookError: onHookFailure,
    onResponse: g.chance(0.1)
      ? () => {
          throw Object.create(null);
        }
      : undefined,
    onError: g.chance(0.1)
      ? async () => {
          throw new Error('hook rejects');
        }
      : undefined,
  };
  const signal = AbortSignal.timeout(DEADLINE_MS);
  if (g.chance(0.5)) {
    const client = new AniLink({ anilist: transport });
    return client.anilist.query.media({ id: n }, { signal });
  }
  const client = new AniLink({ mal: { ...transport, clientId: 'cid' } });
  return client.mal.anime.get({ id: n }, { signal });
}

async function main() {
  const server = await startServer();
  const started = performance.now();
  const codes = {};
  let unsettled = 0;
  let untyped = 0;
  let hookFailures = 0;
  let nextCase = 1;
  const onHookFailure = () => {
    hookFailures += 1;
  };
  const worker = async () => {
    while (nextCase <= CASES) {
      const n = nextCase++;
      let settled = false;
      const call = callFor(server.url, n, onHookFailure).then(
        () => 'resolved',
        (error) => {
          if (!(error instanceof AniLinkError) || !TYPED_CODES.has(error.code)) {
            untyped += 1;
            console.error(`case ${n}: untyped rejection`, error);
            return 'untyped';
          }
          return error.code;
        },
      );
      let timer;
      const outcome = await Promise.race([
        call.then((o) => {
          settled = true;
          return o;
        }),
        new Promise((resolve) => {
          timer = setTimeout(() => resolve('unsettled'), DEADLINE_MS + GRACE_MS);
        }),
      ]);
      clearTimeout(timer);
      if (!settled) {
        unsettled += 1;
        console.error(`case ${n}: not settled within ${DEADLINE_MS + GRACE_MS} ms`);
      }
      codes[outcome] = (codes[outcome] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const durationMs = Math.round(performance.now() - started);
  destroyCachedAgents();
  await server.close();
  const result = { seed: SEED, cases: CASES, unsettled, untyped, uncaught, hookFailures, durationMs, codes };
  console.log(`RESULT ${JSON.stringify(result)}`);
  process.exitCode = unsettled === 0 && untyped === 0 && uncaught === 0 ? 0 : 1;
}

await main();
