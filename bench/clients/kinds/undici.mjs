// `undici.request` through a keep-alive Agent capped at `concurrency` connections.
import { Agent, request } from 'undici';
import { REQUEST_HEADERS, checkStatus, mediaFromEnvelope } from '../workload.mjs';

export function createClient({ url, concurrency, workload }) {
  const dispatcher = new Agent({ connections: concurrency, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000 });
  return {
    connectionLimit: concurrency,
    async send() {
      const { statusCode, body } = await request(url, {
        method: 'POST',
        headers: REQUEST_HEADERS,
        body: workload.requestBody,
        dispatcher,
      });
      const text = await body.text();
      checkStatus('undici', statusCode);
      return mediaFromEnvelope(JSON.parse(text));
    },
  };
}
