/**
 * The scriptable HTTP/1.1 server of the end-to-end tests: the published one
 * (`anilink-api-wrapper/testing`, lib/testing/scripted-server.cjs) under the names these tests use.
 *
 * Every test that needs an upstream starts one, queues the responses it wants (statuses,
 * headers, delays, trickled bodies, dropped or hanging sockets) and afterwards inspects what the
 * client actually sent and how many TCP connections it used.
 */
import { startScriptedServer, type ScriptedServer, type ScriptedServerOptions } from 'anilink-api-wrapper/testing';

export type {
  ScriptedResponse,
  RecordedRequest,
  ConnectionRecord,
  ResponseProvider,
  RequestHandler,
} from 'anilink-api-wrapper/testing';
import { rateLimitHeaders } from 'anilink-api-wrapper/testing';

export { rateLimitHeaders, graphqlData } from 'anilink-api-wrapper/testing';

export type TestServer = ScriptedServer;

export function startTestServer(options: ScriptedServerOptions = {}): Promise<TestServer> {
  return startScriptedServer(options);
}

/**
 * A test server that enforces `quota` per window from its first request and reports the
 * window's reset on every answer (as MAL does), so every copy of a fleet's state can know when
 * a window ends; beyond the quota it answers 429 with `Retry-After: retryAfterSeconds`.
 * `refused()` counts those 429s.
 */
export async function startQuotaUpstream(
  quota: { limit: number; windowMs: number },
  retryAfterSeconds: number,
): Promise<{ upstream: TestServer; refused: () => number }> {
  const upstream = await startTestServer();
  let windowEndsAt = 0;
  let used = 0;
  let refused = 0;
  upstream.handle((request) => {
    const now = Date.now();
    if (now >= windowEndsAt) [windowEndsAt, used] = [now + quota.windowMs, 0];
    const reset = Math.ceil(windowEndsAt / 1000);
    if (used >= quota.limit) {
      refused += 1;
      const headers = { ...rateLimitHeaders(quota.limit, 0, reset), 'retry-after': String(retryAfterSeconds) };
      return { status: 429, body: { data: null, errors: [{ message: 'Too Many Requests.', status: 429 }] }, headers };
    }
    used += 1;
    const { id } = (request.json as { variables: { id: number } }).variables;
    return { body: { data: { Media: { id } } }, headers: rateLimitHeaders(quota.limit, quota.limit - used, reset) };
  });
  return { upstream, refused: () => refused };
}
