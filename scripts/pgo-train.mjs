// The training run of a profile-guided build (scripts/pgo.mjs): the calls users make, through
// the instrumented addon, so the optimizer learns which paths are hot. It runs in a process of
// its own (each writes one raw profile at exit) against the training server of pgo.mjs:
//
//   node scripts/pgo-train.mjs <package dir> <http url> <https url>
//
// where the package dir holds lib/ and the instrumented binary (pgo.mjs's copy of the package).
//
// The mix follows what bots, trackers and list-sync jobs send: catalog queries one at a time and
// many in flight, hand-written documents, pages, mutations, MAL reads, over plain HTTP and TLS
// (kept-alive and new connections), compressed answers, and the usual failures (a 404, a retried
// 503, a 429 with Retry-After). Paths left out are compiled as cold, so each one a user takes
// often belongs here. Deliberately unlike the bench's workload (other documents, other answers
// from a real GraphQL executor), so the bench measures the profile rather than replaying it.
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { TRAINING_IDS } from './pgo-server.mjs';

const [packageDir, httpUrl, httpsUrl] = process.argv.slice(2);
if (!httpsUrl) throw new Error('usage: node scripts/pgo-train.mjs <package dir> <http url> <https url>');
const { AniLink } = createRequire(import.meta.url)(join(resolve(packageDir), 'lib', 'index.cjs'));

const CUSTOM_DOCUMENT = 'query ($id: Int) { Media(id: $id) { id title { romaji english native } genres } }';
const MUTATION =
  'mutation ($mediaId: Int, $progress: Int) { SaveMediaListEntry(mediaId: $mediaId, progress: $progress) { id progress } }';

function client(url, transport = {}) {
  const shared = { retry: { baseDelayMs: 1 }, ...transport };
  return new AniLink({
    anilist: { authToken: 'training-token', baseUrl: `${url}/anilist`, ...shared },
    mal: { clientId: 'training-client', baseUrl: `${url}/mal`, ...shared },
  });
}

/**
 * The calls of one round, each a function of a running index. Each must succeed: a training call
 * that fails trains the wrong path, so it fails the build.
 */
const CALLS = [
  (api, i) => api.anilist.query.media({ id: 1 + (i % 500) }),
  (api, i) => api.anilist.custom(CUSTOM_DOCUMENT, { id: 1 + (i % 300) }),
  (api, i) => api.anilist.query.media({ id: 1 + (i % 200) }, { fields: ['title.romaji', 'episodes'] }),
  (api, i) => api.anilist.query.page.medias({ search: `title ${i % 40}`, perPage: 10 }),
  (api, i) => api.anilist.query.user({ id: 1 + (i % 100) }),
  (api, i) => api.anilist.custom(MUTATION, { mediaId: 1 + (i % 50), progress: i % 12 }),
  (api, i) => api.mal.anime.get({ id: 1 + (i % 400) }, { fields: ['id', 'title', 'mean'] }),
  (api, i) => api.mal.anime.search({ q: `title ${i % 30}`, limit: 10 }),
];

/**
 * Calls that fail once or for good, with the outcome each must have (the error code, or none
 * after a retry): the error paths users meet every day. Made without pacing: with it, a 429
 * while the headers say plenty is left reads as lying headers and holds the client until the
 * window's reset (decisions D42), a minute of training doing nothing.
 */
const FAILING_CALLS = [
  { code: 'API_ERROR', call: (api, i) => api.anilist.query.media({ id: TRAINING_IDS.missing + i }) },
  { code: undefined, call: (api, i) => api.anilist.query.media({ id: TRAINING_IDS.failOnce503 + i }) },
  { code: undefined, call: (api, i) => api.anilist.query.media({ id: TRAINING_IDS.failOnce429 + i }) },
  { code: 'REST_ERROR', call: (api, i) => api.mal.anime.get({ id: TRAINING_IDS.missing + i }) },
];

/** The failing call must end as `code` says. */
const failing =
  ({ code, call }) =>
  async (api, i) => {
    const outcome = await call(api, i).then(
      () => undefined,
      (error) => error.code ?? error,
    );
    if (outcome !== code) throw new Error(`training call ${i} ended with ${outcome}, expected ${code ?? 'success'}`);
  };

/** Runs `count` calls keeping `inFlight` of them going. */
async function run(api, calls, count, inFlight) {
  let next = 0;
  async function lane() {
    while (next < count) {
      const i = next++;
      await calls[i % calls.length](api, i);
    }
  }
  await Promise.all(Array.from({ length: inFlight }, lane));
}

const failures = FAILING_CALLS.map(failing);
for (const url of [httpUrl, httpsUrl]) {
  const api = client(url);
  await run(api, CALLS, 800, 1);
  await run(api, CALLS, 3_000, 32);
  await run(client(url, { paceWithRateLimit: false }), failures, 120, 4);
  const fresh = client(url, { maxFreeSockets: 0 });
  await run(fresh, CALLS, 150, 1);
}
