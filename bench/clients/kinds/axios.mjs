// axios (the original package's HTTP client) with a keep-alive agent and no socket cap, so at
// most `concurrency` sockets since that many requests are in flight. axios parses the JSON
// body itself, as the original package relied on.
import http from 'node:http';
import axios from 'axios';
import { REQUEST_HEADERS, mediaFromEnvelope } from '../workload.mjs';

export function createClient({ url, workload }) {
  const instance = axios.create({ httpAgent: new http.Agent({ keepAlive: true, maxSockets: Infinity }) });
  return {
    connectionLimit: null,
    async send() {
      // axios rejects non-2xx statuses by default.
      const response = await instance.post(url, workload.requestBody, { headers: REQUEST_HEADERS });
      return mediaFromEnvelope(response.data);
    },
  };
}
