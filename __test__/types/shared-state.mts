// The sharedState slot option (our extension): accepted in every slot form, typed exactly, and
// refused per request (npm run test:types fails if a line marked @ts-expect-error compiles).
import {
  AniLink,
  ResponseCache,
  type ResponseCacheStats,
  type SharedStateOptions,
  type SlotOptions,
} from 'anilink-api-wrapper';

const shared: SharedStateOptions = { redis: 'redis://127.0.0.1:6379' };
const tuned: SharedStateOptions = {
  redis: 'redis://:pw@10.0.0.5:6380/2',
  keyPrefix: 'bots',
  timeoutMs: 50,
  leaseMs: 5_000,
};

export const positional = new AniLink('token', { sharedState: shared });
export const slots = new AniLink({
  anilist: { authToken: 't', sharedState: tuned, rateLimit: { maxRequests: 85, windowMs: 60_000 } },
  mal: { clientId: 'id', sharedState: { redis: 'redis://127.0.0.1:6379' } },
});
export const off: SlotOptions[] = [{ sharedState: false }, { sharedState: null }, {}];

// @ts-expect-error redis is required
new AniLink('token', { sharedState: { keyPrefix: 'bots' } });
// @ts-expect-error redis is a URL string
new AniLink('token', { sharedState: { redis: 6379 } });
// @ts-expect-error timeoutMs is a number of milliseconds
new AniLink('token', { sharedState: { redis: 'redis://127.0.0.1:6379', timeoutMs: '100' } });
// @ts-expect-error unknown key in sharedState
new AniLink('token', { sharedState: { redis: 'redis://127.0.0.1:6379', host: 'x' } });
// @ts-expect-error true is not a way to turn it on: give the Redis URL
new AniLink('token', { sharedState: true });
// @ts-expect-error a slot option: not accepted per request
await slots.anilist.query.media({ id: 1 }, { sharedState: shared });

// A fleet-wide response cache: `shared` on the cache, the Redis of the slot's sharedState.
const fleetCache = new ResponseCache({ ttlMs: 30_000, maxEntries: 256, shared: true });
export const withFleetCache = new AniLink({ anilist: { sharedState: shared, responseCache: fleetCache } });
const fleetStats: ResponseCacheStats = fleetCache.stats();
export const fleetHits: number | undefined = fleetStats.fleetHits;
export const isShared: true | undefined = fleetStats.shared;
// @ts-expect-error shared is a boolean: the Redis is the slot's sharedState
new ResponseCache({ shared: 'redis://127.0.0.1:6379' });
