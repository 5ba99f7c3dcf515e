// Node's global `fetch` (its bundled undici) with its default dispatcher: keep-alive, no
// connection cap, so at most `concurrency` sockets since that many requests are in flight.
import { REQUEST_HEADERS, checkStatus, mediaFromEnvelope } from '../workload.mjs';

export function createClient({ url, workload }) {
  return {
    connectionLimit: null,
    async send() {
      const response = await fetch(url, { method: 'POST', headers: REQUEST_HEADERS, body: workload.requestBody });
      const text = await response.text();
      checkStatus('fetch', response.status);
      return mediaFromEnvelope(JSON.parse(text));
    },
  };
}
