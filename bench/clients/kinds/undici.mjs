// `undici.request` through a keep-alive Agent capped at `concurrency` connections; with
// `connections: 'fresh'`, every request closes its connection (`reset`), so each opens one.
import { Agent, request } from 'undici';
import { REQUEST_HEADERS, checkStatus, mediaFromEnvelope } from '../workload.mjs';

export function createClient({ url, concurrency, workload, connections = 'capped' }) {
  if (connections !== 'capped' && connections !== 'fresh') throw new Error(`undici: no ${connections} connections`);
  const reset = connections === 'fresh';
  const dispatcher = new Agent({ connections: concurrency, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000 });
  return {
    connectionLimit: concurrency,
    async send() {
      const { statusCode, body } = await request(url, {
        method: 'POST',
        headers: REQUEST_HEADERS,
        body: workload.requestBody,
        dispatcher,
        reset,
      });
      const text = await body.text();
      checkStatus('undici', statusCode);
      return mediaFromEnvelope(JSON.parse(text));
    },
  };
}
