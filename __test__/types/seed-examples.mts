// The examples of the "Retries & resilience" page, as a user would write them: they must
// compile under --strict against our typings (npm run test:types).
import { AniLink, destroyCachedAgents } from 'anilink-api-wrapper';

declare const metrics: { increment(name: string, tags: Record<string, unknown>): void };

// Opt out entirely: every request is sent exactly once.
export const noRetry = new AniLink('token', { retry: false });

// Tune individual knobs on top of the defaults.
export const tuned = new AniLink('token', {
  retry: {
    maxRetries: 5,
    baseDelayMs: 100,
    retryOnStatus: [429, 503],
    jitter: false,
  },
});

export const budgeted = new AniLink('token', {
  retryBudget: { maxRetriesPerWindow: 50, windowMs: 60_000 },
});

export const paced = new AniLink('token', { rateLimitFloor: 5 });
export const unpaced = new AniLink('token', { paceWithRateLimit: false });

destroyCachedAgents();

export const guarded = new AniLink('token', {
  circuitBreaker: { threshold: 5, cooldownMs: 30_000 },
});

const observed = new AniLink('token', {
  circuitBreaker: { threshold: 5, cooldownMs: 30_000 },
  onCircuitOpen: ({ host, failures }) => {
    metrics.increment('circuit.open', { host, failures });
  },
  onCircuitClose: ({ host }) => {
    metrics.increment('circuit.close', { host });
  },
});

const urgent = new AniLink('token', { paceWithRateLimit: true });
const media = await urgent.anilist.query.media({ id: 1, type: 'ANIME' }, { ignorePaceDeadline: true });
export const romaji: string | null = media.title.romaji;

export const scoped = new AniLink({
  anilist: { authToken: 't', paceWithRateLimit: true },
  mal: { accessToken: 'm', retry: false },
});

export const positionalForms = [new AniLink(), new AniLink('token'), new AniLink(undefined, { timeout: 5_000 })];
export { observed };
