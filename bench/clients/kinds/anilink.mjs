// AniLink itself, with default resilience (pacing on, retries on) and a configured circuit
// breaker. Its sockets (`connections`): `capped` gives it undici's allowance, `concurrency`
// sockets all allowed to stay idle between requests; `defaults` leaves the pool at its default
// bounds (20 sockets, 5 kept idle over time), as users run it; `fresh` keeps none idle, so
// every call opens a connection (over HTTPS, a handshake). The `media` workload calls the
// catalog's query.media, `custom` the small query of workload.mjs.
import { CUSTOM_QUERY, checkedMedia } from '../workload.mjs';

const DEFAULT_MAX_SOCKETS = 20;

const POOL_BOUNDS = {
  capped: (concurrency) => ({ maxSockets: concurrency, maxFreeSockets: concurrency }),
  defaults: () => ({}),
  fresh: (concurrency) => ({ maxSockets: concurrency, maxFreeSockets: 0 }),
};

export async function createClient({ url, concurrency, workload, connections = 'capped' }) {
  let AniLink;
  try {
    ({ AniLink } = await import('anilink-api-wrapper'));
  } catch (error) {
    const unavailable = new Error(
      `the anilink client needs the built package (lib/index.mjs and the native binding: npm run build); import failed: ${error.message}`,
    );
    unavailable.code = 'CLIENT_UNAVAILABLE';
    throw unavailable;
  }
  const client = new AniLink({
    anilist: {
      baseUrl: url,
      circuitBreaker: { threshold: 5, cooldownMs: 30_000 },
      ...POOL_BOUNDS[connections](concurrency),
    },
  });
  const variables = { id: 1 };
  const call =
    workload.name === 'custom'
      ? () => client.anilist.custom(CUSTOM_QUERY, variables)
      : () => client.anilist.query.media(variables);
  return {
    connectionLimit: connections === 'defaults' ? Math.min(concurrency, DEFAULT_MAX_SOCKETS) : concurrency,
    async send() {
      return checkedMedia(await call());
    },
  };
}
