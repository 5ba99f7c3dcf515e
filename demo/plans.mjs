/**
 * The three jobs `npm run demo` can run: the full simulator run, a `--quick` one for the test
 * suite, and `--live` against the real AniList API. A plan is plain data plus the scripted
 * failures, so the job runner stays the same whatever it is pointed at.
 */

export const LIVE_ANILIST_URL = 'https://graphql.anilist.co';

/**
 * Well-known AniList media ids for `--live` (anime whose ids are stable and public), so the
 * live run asks for entries that exist. Cycled when `--count` asks for more.
 */
const WELL_KNOWN_MEDIA_IDS = [
  1, 5, 6, 7, 15, 16, 19, 20, 21, 30, 32, 43, 45, 47, 199, 269, 1535, 1575, 2001, 5114, 9253, 9969, 11061, 11757, 16498,
  20954, 21087, 21459, 101922, 113415,
];

/**
 * Threshold above the number of calls in flight: failures of the calls on the wire at one moment
 * (the scripted 502 burst; a quota edge, should a 429 still slip past admission) must not trip
 * the breaker alone. A real outage fails every attempt of every worker and crosses it quickly.
 */
const BREAKER_THRESHOLD = 12;

/**
 * @typedef {object} ScriptedFailure
 * @property {number} afterFetched run once this many media have been fetched
 * @property {string} description what the simulator is told to do, for the timeline
 * @property {(script: import('../sim/anilist-simulator.d.mts').SimulatorScript) => void} run
 *
 * @typedef {object} Plan
 * @property {string} title
 * @property {number[]} mediaIds
 * @property {number} concurrency calls in flight
 * @property {{ limit: number, windowMs: number } | undefined} simulatedQuota undefined: live AniList
 * @property {ScriptedFailure[]} scriptedFailures
 * @property {object} transport the `anilist` slot's resilience options (hooks are added by the job)
 */

/** The resilience settings every plan shares; `cooldownMs` differs so `--quick` stays short. */
function resilience(cooldownMs) {
  return {
    retry: { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 1_000 },
    retryBudget: { maxRetriesPerWindow: 100, windowMs: 60_000 },
    circuitBreaker: { threshold: BREAKER_THRESHOLD, cooldownMs },
    paceWithRateLimit: true,
    rateLimitFloor: 1,
    timeout: 10_000,
  };
}

function range(count) {
  return Array.from({ length: count }, (_, index) => index + 1);
}

/**
 * The simulator's quota is a window of a few seconds instead of AniList's minute, so pacing
 * happens several times in a short run. Each success spends one unit of quota, so "after N
 * fetched" is a known point of a known window: the failures are scripted by progress, not by
 * clock, and land at the same point of the job on a fast or a loaded machine. The outage starts
 * early in a window, so the breaker's probe after it finds quota left.
 */
export function simulatorPlan() {
  const quota = { limit: 60, windowMs: 4_000 };
  return {
    title: '300 media by id, 8 in flight, AniList simulator',
    mediaIds: range(300),
    concurrency: 8,
    simulatedQuota: quota,
    scriptedFailures: [
      {
        afterFetched: 40,
        description: 'a burst of 5xx: the next 8 requests answer 502 Bad Gateway',
        run: (script) => script.burst5xx({ count: 8, status: 502 }),
      },
      {
        afterFetched: 2 * quota.limit + 10,
        description: 'an outage: every request answers 503 for 2.5 s',
        run: (script) => script.outage({ ms: 2_500 }),
      },
    ],
    transport: resilience(1_000),
  };
}

/**
 * The same story in about ten seconds, for the test suite: 60 media, a smaller quota, a 1 s
 * outage. The window is long enough that even a loaded machine spends the quota within it, so
 * the run always shows pacing.
 */
export function quickPlan() {
  const quota = { limit: 25, windowMs: 4_000 };
  return {
    title: '60 media by id, 8 in flight, AniList simulator (quick)',
    mediaIds: range(60),
    concurrency: 8,
    simulatedQuota: quota,
    scriptedFailures: [
      {
        afterFetched: 8,
        description: 'a burst of 5xx: the next 4 requests answer 502 Bad Gateway',
        run: (script) => script.burst5xx({ count: 4, status: 502 }),
      },
      {
        afterFetched: quota.limit + 5,
        description: 'an outage: every request answers 503 for 1 s',
        run: (script) => script.outage({ ms: 1_000 }),
      },
    ],
    transport: resilience(400),
  };
}

/** The real API: nothing scripted, AniList's own quota, fewer items to stay polite. */
export function livePlan({ count = 30, concurrency = 8 } = {}) {
  return {
    title: `${count} media by id, ${concurrency} in flight, ${LIVE_ANILIST_URL}`,
    mediaIds: Array.from({ length: count }, (_, index) => WELL_KNOWN_MEDIA_IDS[index % WELL_KNOWN_MEDIA_IDS.length]),
    concurrency,
    simulatedQuota: undefined,
    scriptedFailures: [],
    transport: resilience(5_000),
  };
}
