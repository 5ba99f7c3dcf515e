// The server a profile-guided build trains against (scripts/pgo.mjs, scripts/pgo-train.mjs), on
// 127.0.0.1 over HTTP and TLS: AniList's GraphQL answered by the simulator's executor and quota
// (sim/graphql-responder.mjs, sim/quota.mjs), a few MAL reads, the larger answers in turn plain,
// gzip and brotli (at the quality a CDN uses on the fly), and failures on the ids of
// TRAINING_IDS.
import http from 'node:http';
import https from 'node:https';
import { constants, brotliCompressSync, gzipSync } from 'node:zlib';
import { createGraphQLResponder, failure, loadAniListSchema } from '../sim/graphql-responder.mjs';
import { RateLimitQuota } from '../sim/quota.mjs';

/** Id ranges that fail: `missing` answers 404; the other two fail the first attempt only. */
export const TRAINING_IDS = { missing: 1_000_000, failOnce503: 2_000_000, failOnce429: 3_000_000 };
const RANGE = 1_000_000;

/**
 * A quota large enough never to pace, counted per window by the simulator's quota, as AniList
 * counts (D42 needs a count it can trust).
 */
const RATE_LIMIT = 100_000_000;
const COMPRESS_ABOVE_BYTES = 1_024;
const ENCODINGS = ['identity', 'gzip', 'br'];
/** The quality CDNs compress on the fly with; brotli's default (11) would make this server the bottleneck. */
const BROTLI_QUALITY = 4;

function malAnime(id) {
  return {
    id,
    title: `Training Anime #${id}`,
    main_picture: { medium: `https://cdn.example/${id}.jpg`, large: `https://cdn.example/${id}l.jpg` },
    alternative_titles: { synonyms: [`TA${id}`], en: `Training Anime ${id}`, ja: 'トレーニング' },
    mean: 7.5 + (id % 20) / 10,
    num_episodes: 12 + (id % 13),
    genres: [
      { id: 1, name: 'Action' },
      { id: 8, name: 'Drama' },
    ],
  };
}

function malAnswer(url) {
  const id = /^\/mal\/anime\/(\d+)$/.exec(url.pathname)?.[1];
  if (id !== undefined) {
    if (Number(id) >= TRAINING_IDS.missing) return { status: 404, payload: { error: 'not_found', message: '' } };
    return { status: 200, payload: malAnime(Number(id)) };
  }
  if (url.pathname === '/mal/anime') {
    const limit = Number(url.searchParams.get('limit') ?? 10);
    const data = Array.from({ length: limit }, (_, i) => ({ node: malAnime(i + 1) }));
    return { status: 200, payload: { data, paging: { next: `${url.origin}/mal/anime?offset=${limit}` } } };
  }
  return { status: 404, payload: { error: 'not_found', message: '' } };
}

const schemeOf = (req) => (req.socket.encrypted ? 'https' : 'http');

/** Starts the HTTP and the TLS server; `tls` holds the PEM key and certificate. */
export async function startTrainingServers(tls) {
  const isMissing = (id) => id >= TRAINING_IDS.missing && id < TRAINING_IDS.missing + RANGE;
  const respond = createGraphQLResponder(await loadAniListSchema(), { pageTotal: 125, isMissing });
  const quota = new RateLimitQuota({ limit: RATE_LIMIT });
  const failedOnce = new Set();
  let large = 0;
  /** What was served, by scheme, encoding and status: what the training covered. */
  const served = { scheme: {}, encoding: {}, status: {} };
  const count = (table, key) => {
    table[key] = (table[key] ?? 0) + 1;
  };

  /** The first attempt of an id in a fail-once range fails; the next succeeds. */
  function injectedFailure(id, scheme) {
    const range = Math.floor(id / RANGE) * RANGE;
    if (range !== TRAINING_IDS.failOnce503 && range !== TRAINING_IDS.failOnce429) return undefined;
    const attempt = `${scheme} ${id}`;
    if (failedOnce.has(attempt)) return undefined;
    failedOnce.add(attempt);
    const status = range === TRAINING_IDS.failOnce503 ? 503 : 429;
    // Injected before the quota, as the simulator's failures are: they spend none of it.
    const headers = { ...quota.currentHeaders(), 'retry-after': '0' };
    return { ...failure(status, 'Try again.'), headers };
  }

  /** Answers by request body: the calls cycle through a few hundred ids, and executing is slow. */
  const answers = new Map();
  function anilistAnswer(body, authorization, scheme) {
    const id = JSON.parse(body)?.variables?.id;
    const injected = Number.isInteger(id) ? injectedFailure(id, scheme) : undefined;
    if (injected) return injected;
    const key = `${authorization}\n${body}`;
    if (!answers.has(key)) answers.set(key, respond({ body, authorization }));
    return { ...answers.get(key), headers: quota.take().headers };
  }

  function send(req, res, { status, payload, headers: own = {} }) {
    let body = Buffer.from(JSON.stringify(payload));
    const headers = { 'content-type': 'application/json', ...own };
    const accepts = req.headers['accept-encoding'] ?? '';
    const encoding = body.length > COMPRESS_ABOVE_BYTES ? ENCODINGS[large++ % ENCODINGS.length] : 'identity';
    if (encoding !== 'identity' && accepts.includes(encoding)) {
      body =
        encoding === 'br'
          ? brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } })
          : gzipSync(body);
      headers['content-encoding'] = encoding;
    }
    count(served.scheme, schemeOf(req));
    count(served.encoding, headers['content-encoding'] ?? 'identity');
    count(served.status, status);
    headers['content-length'] = String(body.length);
    res.writeHead(status, headers).end(body);
  }

  function handle(req, res) {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url, `http://${req.headers.host}`);
      const answer = url.pathname.startsWith('/mal/')
        ? malAnswer(url)
        : anilistAnswer(Buffer.concat(chunks).toString('utf8'), req.headers.authorization, schemeOf(req));
      send(req, res, answer);
    });
  }

  const plain = http.createServer({ keepAliveTimeout: 30_000 }, handle);
  const secure = https.createServer({ key: tls.key, cert: tls.cert, keepAliveTimeout: 30_000 }, handle);
  const listening = (server) =>
    new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
  const [httpPort, httpsPort] = await Promise.all([listening(plain), listening(secure)]);
  return {
    httpUrl: `http://127.0.0.1:${httpPort}`,
    httpsUrl: `https://localhost:${httpsPort}`,
    stats: () => structuredClone(served),
    close() {
      for (const server of [plain, secure]) {
        server.closeAllConnections();
        server.close();
      }
    },
  };
}
