/**
 * What the end-to-end spec files share: one test server per file, clients pointed at it, the
 * capture of rejections, and hooks that record what the client reported.
 */
import net from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import {
  AniLink,
  AniLinkError,
  destroyCachedAgents,
  type AniListCredentials,
  type MalCredentials,
  type RequestErrorContext,
  type RequestOptions,
} from 'anilink-api-wrapper';
import { startTestServer, type RecordedRequest, type TestServer } from './test-server';

/** A request id: the client makes every one a UUID v4. */
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * One test server for the calling spec file: started before its tests (and handed to
 * `onStarted`), reset before each test, and closed after them together with the
 * process-wide connection pools.
 */
export function useTestServer(onStarted: (server: TestServer) => void): void {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startTestServer();
    onStarted(server);
  });
  beforeEach(() => {
    server?.reset();
  });
  afterAll(async () => {
    destroyCachedAgents();
    await server?.close();
  });
}

/** Where a client is pointed: the test server, or any other server a test starts on 127.0.0.1. */
type Upstream = Pick<TestServer, 'url'>;

/** A client with both slots on `server` (MAL with client id `cid`), each slot taking its options as given. */
export function clientFor(server: Upstream, anilist: AniListCredentials = {}, mal: MalCredentials = {}): AniLink {
  return new AniLink({
    anilist: { baseUrl: server.url, ...anilist },
    mal: { baseUrl: server.url, clientId: 'cid', ...mal },
  });
}

/** A client with only its AniList slot on `server`; retries are off unless `options` turn them on. */
export function aniListClient(server: Upstream, options: AniListCredentials = {}): AniLink {
  return new AniLink({ anilist: { baseUrl: server.url, retry: false, ...options } });
}

/** A client with only its MAL slot on `server` (client id `cid`); retries are off unless `options` turn them on. */
export function malClient(server: Upstream, options: MalCredentials = {}): AniLink {
  return new AniLink({ mal: { clientId: 'cid', baseUrl: server.url, retry: false, ...options } });
}

/**
 * What `promise` rejects with; fails the test if it resolves. `Failure` only types the result
 * (for the error class the test expects and asserts); nothing here checks it.
 */
export async function rejectionOf<Failure = AniLinkError>(promise: Promise<unknown>): Promise<Failure> {
  return promise.then(
    (value) => {
      throw new Error(`expected the call to reject, but it resolved with ${inspect(value)}`);
    },
    (error: unknown) => error as Failure,
  );
}

/** The AniLinkError a call rejects with; fails the test if it resolves or rejects with anything else. */
export async function failureOf(call: Promise<unknown>): Promise<AniLinkError> {
  const error = await rejectionOf<unknown>(call);
  expect(error).toBeInstanceOf(AniLinkError);
  return error as AniLinkError;
}

/** A port on 127.0.0.1 that nothing listens on. */
export async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** The one request `server` received (fails the test if it received another number). */
export function onlyRequest(server: TestServer): RecordedRequest {
  expect(server.requests).toHaveLength(1);
  return server.requests[0];
}

/** The JSON body of a GraphQL POST. */
export function sentBody(request: RecordedRequest): { query: string; variables?: unknown } {
  return request.json as { query: string; variables?: unknown };
}

/** The `id` variable of a recorded AniList `Media` query (tests use it to route and to group requests). */
export function mediaIdOf(request: RecordedRequest): number {
  return (request.json as { variables: { id: number } }).variables.id;
}

/** A hook that keeps the context of every call, in call order (any hook but onError, onRetry and onHookError). */
export function contextRecorder<Context>() {
  const contexts: Context[] = [];
  return {
    contexts,
    hook: (context: Context) => {
      contexts.push(context);
    },
  };
}

/** An `onRetry`/`onError` hook that keeps the error and context of every call, in call order. */
export function failureRecorder() {
  const reports: { error: AniLinkError; context: RequestErrorContext }[] = [];
  return {
    reports,
    hook: (error: AniLinkError, context: RequestErrorContext) => {
      reports.push({ error, context });
    },
  };
}

/** The hooks that report on a request (all but onHookError). */
export type RequestHookName =
  | 'onRequestStart'
  | 'onResponse'
  | 'onPace'
  | 'onError'
  | 'onRetry'
  | 'onCircuitOpen'
  | 'onCircuitClose';

/** One hook invocation: the hook's name, its context, and the error for onError/onRetry. */
export interface HookCall {
  hook: RequestHookName;
  ctx: Record<string, unknown>;
  error?: AniLinkError;
}

/** Hooks that log every invocation across all of them, in call order (for tests about order and payloads). */
export function recordingHooks(
  names: readonly RequestHookName[] = ['onRequestStart', 'onResponse', 'onError', 'onRetry'],
): { calls: HookCall[]; hooks: Pick<RequestOptions, RequestHookName> } {
  const calls: HookCall[] = [];
  const hooks: Record<string, (...args: unknown[]) => void> = {};
  for (const hook of names) {
    hooks[hook] =
      hook === 'onError' || hook === 'onRetry'
        ? (error, ctx) => calls.push({ hook, error: error as AniLinkError, ctx: ctx as HookCall['ctx'] })
        : (ctx) => calls.push({ hook, ctx: ctx as HookCall['ctx'] });
  }
  return { calls, hooks };
}
