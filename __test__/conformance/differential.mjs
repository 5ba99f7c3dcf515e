// The differential conformance suite (issue 35): every raw response of ./responses.mjs is
// served from one server on 127.0.0.1 to node:http and to AniLink, and the outcomes compared:
// accept or refuse, the status and body bytes delivered, and the time to settle (a refusal
// within REFUSAL_MS, never a timeout). A difference a row does not declare fails the run, and so
// does a declared one that no longer happens.
//
//   node __test__/conformance/differential.mjs [--seed N] [--rows N] [--families N]
//
// --rows: how many table rows, drawn by the seed (all by default); --families: how many
// generated rows (./responses.mjs familyRows). Prints one `RESULT {json}` line and exits 0 only
// when every difference is a declared one.
import http from 'node:http';
import { createRequire } from 'node:module';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { listenRaw, random } from '../support/raw-upstream.mjs';
import { DIFFERENCES, familyRows, ROWS } from './responses.mjs';

const require = createRequire(import.meta.url);
const { createExternalClient, postTo } = require('../../lib/external.cjs');
const { destroyCachedAgents } = require('../../lib/index.cjs');

const args = Object.fromEntries(
  process.argv.slice(2).flatMap((arg, i, all) => (arg.startsWith('--') ? [[arg.slice(2), all[i + 1]]] : [])),
);
const SEED = Number(args.seed ?? 1);
/** Both clients give up after this: a response either side waits on ends as 'timeout'. */
const TIMEOUT_MS = 1000;
/** A refusal must settle this fast (measured from the request; the answer is written at once). */
const REFUSAL_MS = 100;
/** The body a request carries; early answers come while a body this large is still going out. */
const SMALL_BODY = Buffer.from('hi');
const LARGE_BODY = Buffer.alloc(16 * 1024 * 1024, 0x78);
const [SMALL_TEXT, LARGE_TEXT] = [SMALL_BODY.toString(), LARGE_BODY.toString()];

function selectedRows() {
  const next = random(SEED);
  const table = [...ROWS];
  const wanted = args.rows === undefined ? table.length : Math.min(Number(args.rows), table.length);
  // A seeded draw without repeats (Fisher–Yates on a copy).
  for (let i = table.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [table[i], table[j]] = [table[j], table[i]];
  }
  return [...table.slice(0, wanted), ...familyRows(SEED, Number(args.families ?? 0))];
}

/**
 * The raw server: the request path names the row; each request is answered by its row. A
 * connection left open serves the next request too (AniLink's pool reuses it).
 */
function startServer(rowsById) {
  return listenRaw((socket) => {
    let buffered = Buffer.alloc(0);
    let busy = false;
    const serveNext = () => {
      const headEnd = buffered.indexOf('\r\n\r\n');
      if (busy || headEnd < 0) return;
      const head = buffered.subarray(0, headEnd).toString('latin1');
      const row = rowsById.get(decodeURIComponent(/^[A-Z]+ \/row\/(\S+) /.exec(head)?.[1] ?? ''));
      if (!row) return socket.destroy();
      const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (row.early) {
        // Read nothing more: the client finds the server no longer reading its body.
        socket.pause();
      } else if (buffered.length < headEnd + 4 + length) {
        return;
      }
      buffered = buffered.subarray(headEnd + 4 + length);
      busy = true;
      answer(socket, row, () => {
        busy = false;
        serveNext();
      });
    };
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      serveNext();
    });
  });
}

/** Write `row`'s answer, then end, reset, or (kept open) call `next` for the next request. */
function answer(socket, row, next) {
  const pieces = (Array.isArray(row.wire) ? row.wire : [row.wire]).map((piece) =>
    Buffer.isBuffer(piece) ? piece : Buffer.from(piece, 'latin1'),
  );
  const write = (i) => {
    if (socket.destroyed) return;
    if (i < pieces.length) {
      if (pieces[i].length > 0) socket.write(pieces[i]);
      // Apart, so each piece arrives in its own read.
      setTimeout(() => write(i + 1), 5);
      return;
    }
    if (row.after === 'end') socket.end();
    else if (row.after === 'reset') socket.resetAndDestroy();
    else if (!row.early) next();
  };
  write(0);
}

/** One request with node:http (a fresh agent, so nothing is reused across rows). */
function viaNode(url, row) {
  return new Promise((resolve) => {
    const started = performance.now();
    const agent = new http.Agent({ keepAlive: false });
    const requestBody = row.early ? LARGE_BODY : SMALL_BODY;
    let settled = false;
    const settle = (outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      agent.destroy();
      resolve({ ...outcome, ms: performance.now() - started });
    };
    const request = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'text/plain', 'content-length': requestBody.length } },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () =>
          settle({
            kind: 'accept',
            status: response.statusCode,
            body: Buffer.concat(chunks),
            headers: response.headers,
          }),
        );
        response.on('error', (error) => settle({ kind: 'refuse', detail: error.code ?? error.message }));
        response.on('close', () => settle({ kind: 'refuse', detail: 'closed before the end of the body' }));
      },
    );
    request.on('error', (error) => settle({ kind: 'refuse', detail: error.code ?? error.message }));
    const timer = setTimeout(() => settle({ kind: 'timeout' }), TIMEOUT_MS);
    request.end(requestBody);
  });
}

/** The same request with AniLink's external client (the transport every operation uses). */
async function viaAniLink(url, row) {
  // No idle connection is kept, as the node:http agent keeps none: each row has its own.
  const client = createExternalClient({ retry: false, timeout: TIMEOUT_MS, maxFreeSockets: 0 });
  const requestBody = row.early ? LARGE_TEXT : SMALL_TEXT;
  const started = performance.now();
  try {
    const value = await postTo(client, url, 'text/plain', requestBody);
    return { kind: 'accept', status: 200, body: Buffer.from(String(value ?? '')), ms: performance.now() - started };
  } catch (error) {
    const ms = performance.now() - started;
    if (error?.code === 'TIMEOUT_ERROR') return { kind: 'timeout', ms };
    if (typeof error?.status === 'number') return { kind: 'accept', status: error.status, ms };
    return { kind: 'refuse', detail: error?.reason ?? error?.message ?? String(error), ms };
  }
}

/** node:http's outcome as a client that decodes the Content-Encoding list would see it. */
function decodedByList(outcome) {
  if (outcome.kind !== 'accept') return outcome;
  const list = String(outcome.headers['content-encoding'] ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  let bytes = outcome.body;
  for (const coding of list.reverse()) {
    if (coding === 'gzip' || coding === 'x-gzip') bytes = gunzipSync(bytes);
    else if (coding === 'br') bytes = brotliDecompressSync(bytes);
    else return { kind: 'refuse', detail: `Content-Encoding ${coding}`, ms: outcome.ms };
  }
  return { ...outcome, body: bytes };
}

/** What differs between the two outcomes, or undefined when they agree. */
function difference(node, anilink) {
  if (node.kind !== anilink.kind) return `node ${node.kind}s, AniLink ${anilink.kind}s`;
  if (node.kind !== 'accept') return undefined;
  const success = (status) => status >= 200 && status < 300;
  if (success(node.status) !== success(anilink.status) || (!success(node.status) && node.status !== anilink.status))
    return `status: node ${node.status}, AniLink ${anilink.status}`;
  if (success(node.status) && !node.body.equals(anilink.body))
    return `body: node ${JSON.stringify(node.body.toString('latin1'))}, AniLink ${JSON.stringify(anilink.body.toString('latin1'))}`;
  return undefined;
}

async function run() {
  const rows = selectedRows();
  const server = await startServer(new Map(rows.map((row) => [row.id, row])));
  const report = { rows: rows.length, agreed: 0, deliberate: {}, undeclared: [], slowRefusals: [], maxRefusalMs: 0 };
  // A few at a time: rows that hang cost TIMEOUT_MS each, and timing stays meaningful.
  const queue = [...rows];
  const worker = async () => {
    for (let row = queue.shift(); row; row = queue.shift()) {
      const url = `${server.url}/row/${encodeURIComponent(row.id)}`;
      const [rawNode, anilink] = await Promise.all([viaNode(url, row), viaAniLink(url, row)]);
      const node = row.decode ? decodedByList(rawNode) : rawNode;
      const found = difference(node, anilink);
      const declared = row.differs && DIFFERENCES[row.differs];
      if (declared) {
        if (node.kind === declared.node && anilink.kind === declared.anilink) {
          report.deliberate[row.differs] = (report.deliberate[row.differs] ?? 0) + 1;
        } else {
          report.undeclared.push({
            id: row.id,
            problem: `declared ${row.differs} no longer holds: ${found ?? 'they agree'}`,
            node: node.detail,
            anilink: anilink.detail,
          });
        }
      } else if (found) {
        report.undeclared.push({ id: row.id, problem: found, node: node.detail, anilink: anilink.detail });
      } else {
        report.agreed += 1;
      }
      if (anilink.kind === 'refuse') refusals.push({ row, url, ms: anilink.ms });
    }
  };
  const refusals = [];
  await Promise.all(Array.from({ length: Number(args.concurrency ?? 6) }, worker));
  // Rows run side by side on a shared machine: a slow refusal is timed again alone (twice at
  // most) before it counts, so load is not taken for a client waiting on something.
  for (const refusal of refusals) {
    for (let again = 0; again < 2 && refusal.ms > REFUSAL_MS; again++) {
      const retimed = await viaAniLink(refusal.url, refusal.row);
      if (retimed.kind === 'refuse') refusal.ms = Math.min(refusal.ms, retimed.ms);
    }
    report.maxRefusalMs = Math.max(report.maxRefusalMs, Math.round(refusal.ms));
    if (refusal.ms > REFUSAL_MS) report.slowRefusals.push({ id: refusal.row.id, ms: Math.round(refusal.ms) });
  }
  destroyCachedAgents();
  await server.close();
  return report;
}

const report = await run();
console.log(`RESULT ${JSON.stringify(report)}`);
process.exitCode = report.undeclared.length === 0 && report.slowRefusals.length === 0 ? 0 : 1;
