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
export { rateLimitHeaders, graphqlData } from 'anilink-api-wrapper/testing';

export type TestServer = ScriptedServer;

export function startTestServer(options: ScriptedServerOptions = {}): Promise<TestServer> {
  return startScriptedServer(options);
}
