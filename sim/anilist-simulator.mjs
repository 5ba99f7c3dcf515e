#!/usr/bin/env node
/**
 * A local stand-in for https://graphql.anilist.co: answers GraphQL documents with
 * deterministic data, enforces AniList's per-minute quota with its headers, and fails on
 * command, so the demo and the tests can show retries, pacing and the circuit breaker
 * without touching the real service.
 *
 *   import { startSimulator } from './sim/anilist-simulator.mjs';
 *   const sim = await startSimulator({ quota: { limit: 30, windowMs: 60_000 } });
 *   sim.script.burst5xx({ count: 3, status: 502 });
 *
 *   node sim/anilist-simulator.mjs --port 4000   # prints the URL; point ANILINK_ANILIST_URL at it
 *
 * Over HTTP, `POST /__sim/script` with `{"action": "burst5xx", "count": 3, "status": 502}`
 * runs the same scripts (`burst5xx`, `outage`, `slow`, `setQuota`, `degrade`, `burstLimit`, `missing`,
 * `reset`, `stats`) and
 * answers `{"ok": true, "stats": {…}}`.
 */
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { requireInteger } from './arguments.mjs';
import { FailureScript } from './failure-script.mjs';
import { createGraphQLResponder, failure, loadAniListSchema } from './graphql-responder.mjs';
import { BurstLimiter, DEFAULT_QUOTA, RateLimitQuota } from './quota.mjs';

const SCRIPT_PATH = '/__sim/script';
/** With the default `perPage` of 50 this gives three pages (50, 50, 25): enough to paginate. */
const DEFAULT_PAGE_TOTAL = 125;
const JSON_TYPE = 'application/json';

/**
 * @param {{
 *   port?: number,
 *   quota?: { limit?: number, windowMs?: number },
 *   pageTotal?: number,
 *   now?: () => number,
 *   schemaPath?: string | URL,
 *   unref?: boolean,
 * }} [options] `now` (epoch ms) drives the quota and outage clocks; tests inject a virtual one;
 *   `unref` lets the process exit while the simulator listens (for test runners)
 */
export async function startSimulator(options = {}) {
  const { port = 0, pageTotal = DEFAULT_PAGE_TOTAL, now = Date.now } = options;
  requireInteger('port', port, 0, 65_535);
  requireInteger('pageTotal', pageTotal, 0);
  /** Ids a root lookup answers 404 for (`script.missing`); every other positive id exists. */
  let missingIds = new Set();
  const respond = createGraphQLResponder(await loadAniListSchema(options.schemaPath), {
    pageTotal,
    isMissing: (id) => missingIds.has(id),
  });
  const quota = new RateLimitQuota(options.quota, now);
  const failures = new FailureScript(now);
  const burstLimiter = new BurstLimiter(now);
  const counters = { requests: 0, byStatus: {} };

  const stats = () => ({
    requests: counters.requests,
    byStatus: { ...counters.byStatus },
    rateLimited: counters.byStatus[429] ?? 0,
  });

  const script = {
    burst5xx: (params) => failures.burst5xx(params),
    outage: (params) => failures.outage(params),
    slow: (params) => failures.slow(params),
    setQuota: (params) => quota.configure(params),
    degrade: (params) => quota.degrade(params),
    burstLimit: (params) => burstLimiter.configure(params),
    /** Root lookups of these ids (`Media(id:)`, `User(id:)`, …) answer 404 until replaced; `[]` ends it. */
    missing({ ids } = {}) {
      if (!Array.isArray(ids)) throw new TypeError(`missing ids must be an array of ids, got ${JSON.stringify(ids)}`);
      for (const [index, id] of ids.entries()) requireInteger(`missing ids[${index}]`, id, 1);
      missingIds = new Set(ids);
    },
    /** Clear every script, restore the configured quota and zero the statistics. */
    reset() {
      missingIds = new Set();
      failures.clear();
      burstLimiter.configure({ max: 0 });
      quota.configure(options.quota);
      counters.requests = 0;
      counters.byStatus = {};
    },
  };

  /** Decide the answer to one API request, in the order upstream would: edge, burst limiter, quota, GraphQL. */
  function answerApiRequest(req, body) {
    const failureStatus = failures.takeFailureStatus();
    if (failureStatus !== undefined) {
      return { ...failure(failureStatus, `${http.STATUS_CODES[failureStatus]}.`), headers: quota.currentHeaders() };
    }
    const retryAfter = burstLimiter.refuse();
    if (retryAfter !== undefined) {
      const headers = { ...quota.currentHeaders(), 'retry-after': String(retryAfter) };
      return { ...failure(429, 'Too Many Requests.'), headers };
    }
    const verdict = quota.take();
    if (!verdict.allowed) return { ...failure(429, 'Too Many Requests.'), headers: verdict.headers };
    const isGraphQLEndpoint = req.method === 'POST' && new URL(req.url, 'http://sim').pathname === '/';
    const answer = isGraphQLEndpoint
      ? respond({ body, authorization: req.headers.authorization })
      : failure(404, 'Not Found.');
    return { ...answer, headers: verdict.headers };
  }

  async function handleApiRequest(req, res, body) {
    counters.requests += 1;
    const { status, payload, headers } = answerApiRequest(req, body);
    counters.byStatus[status] = (counters.byStatus[status] ?? 0) + 1;
    const delayMs = failures.takeDelayMs();
    if (delayMs > 0) {
      const gone = new AbortController();
      res.once('close', () => gone.abort());
      try {
        await sleep(delayMs, undefined, { signal: gone.signal });
      } catch {
        return; // the client gave up while the answer was held back
      }
    }
    sendJson(res, status, payload, headers);
  }

  function handleScript(res, body) {
    try {
      const { action, ...params } = JSON.parse(body);
      if (action !== 'stats') {
        if (!Object.hasOwn(script, action)) throw new TypeError(`unknown action ${JSON.stringify(action)}`);
        script[action](params);
      }
      sendJson(res, 200, { ok: true, stats: stats() });
    } catch (error) {
      sendJson(res, 400, { ok: false, error: error.message });
    }
  }

  const server = http.createServer(async (req, res) => {
    let body;
    try {
      body = await readBody(req);
    } catch {
      return; // the client went away mid-upload
    }
    try {
      if (req.method === 'POST' && req.url === SCRIPT_PATH) handleScript(res, body);
      else await handleApiRequest(req, res, body);
    } catch (error) {
      // A simulator bug must show up as an answer, not take the demo's process down.
      if (!res.headersSent) sendJson(res, 500, failure(500, `Simulator error: ${error.message}`).payload);
    }
  });
  if (options.unref) {
    server.unref();
    server.on('connection', (socket) => socket.unref());
  }
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });

  return {
    url: `http://127.0.0.1:${server.address().port}`,
    script,
    stats,
    /** Stop listening and drop every connection, idle keep-alive and slowed ones included. */
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(res, status, payload, headers = {}) {
  const bytes = Buffer.from(JSON.stringify(payload), 'utf8');
  res.writeHead(status, { ...headers, 'content-type': JSON_TYPE, 'content-length': bytes.length });
  res.end(bytes);
}

function parseCommandLine(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string', default: '4000' },
      limit: { type: 'string', default: String(DEFAULT_QUOTA.limit) },
      'window-ms': { type: 'string', default: String(DEFAULT_QUOTA.windowMs) },
      'page-total': { type: 'string', default: String(DEFAULT_PAGE_TOTAL) },
    },
  });
  return {
    port: Number(values.port),
    quota: { limit: Number(values.limit), windowMs: Number(values['window-ms']) },
    pageTotal: Number(values['page-total']),
  };
}

async function main() {
  const simulator = await startSimulator(parseCommandLine(process.argv.slice(2)));
  console.log(simulator.url);
  const stop = () => simulator.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

const runDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (runDirectly) {
  main().catch((error) => {
    console.error(`anilist-simulator: ${error.message}`);
    process.exit(1);
  });
}
