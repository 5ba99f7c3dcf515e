// AniLink itself, with default resilience (pacing on, retries on) and a configured circuit
// breaker, given the same connection allowance as undici: `concurrency` sockets, all of them
// allowed to stay idle between requests (the default keeps only 5 idle, which would close and
// reopen connections between requests and measure that instead of the transport). The
// `media` workload calls the catalog's query.media, `custom` the small query of workload.mjs.
import { CUSTOM_QUERY, checkedMedia } from '../workload.mjs';

export async function createClient({ url, concurrency, workload }) {
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
      maxSockets: concurrency,
      maxFreeSockets: concurrency,
    },
  });
  const variables = { id: 1 };
  const call =
    workload.name === 'custom'
      ? () => client.anilist.custom(CUSTOM_QUERY, variables)
      : () => client.anilist.query.media(variables);
  return {
    connectionLimit: concurrency,
    async send() {
      return checkedMedia(await call());
    },
  };
}
