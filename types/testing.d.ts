// anilink-api-wrapper/testing: local upstreams on 127.0.0.1 for users' tests.
import type { AniLink, AniLinkCredentials } from './anilink';
import type { GraphQLErrorEntry } from './errors';

/** One response as the scripted server plays it. */
export interface ScriptedResponse {
  /** HTTP status; default 200. */
  status?: number;
  headers?: Record<string, string | string[]>;
  /** An object is sent as JSON with `content-type: application/json` unless a content type is set. */
  body?: string | object | Buffer;
  /** Wait before sending the status line and headers. */
  delayMs?: number;
  /** Send the headers, wait, then send the body. */
  bodyDelayMs?: number;
  /** Send the body in `chunks` pieces, `intervalMs` apart (the first piece right away). */
  trickle?: { chunks: number; intervalMs: number };
  /**
   * Reset the socket (RST): before any byte of the response, or after the headers and the first
   * half of the body (the headers announce the full length, so the client sees a truncated body).
   */
  drop?: 'before-response' | 'mid-body';
  /** Never answer; the socket stays open until the client gives up or the server closes. */
  hang?: boolean;
  /** Answer with `Connection: close` and close the socket afterwards. */
  closeAfter?: boolean;
}

/** What the server received. */
export interface RecordedRequest {
  method: string;
  /** The request target as sent, e.g. `/v2/anime?fields=id`. */
  url: string;
  /** `url` without the query string. */
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The body parsed as JSON, when it is JSON. */
  json?: unknown;
  /** Which accepted TCP connection carried the request (`ConnectionRecord.id`). */
  connectionId: number;
  /** `performance.now()` when the request head arrived. */
  receivedAt: number;
}

export interface ConnectionRecord {
  id: number;
  openedAt: number;
  closedAt?: number;
}

export type ResponseProvider = ScriptedResponse | ((req: RecordedRequest) => ScriptedResponse);
export type RequestHandler = (req: RecordedRequest) => ScriptedResponse | undefined;

/** A low-level scriptable HTTP/1.1 server: one queue for every request. */
export interface ScriptedServer extends AsyncDisposable {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `127.0.0.1:<port>`, the `host` AniLink reports in events and errors. */
  host: string;
  /** Queue responses, one per request, first in first out. */
  enqueue(...responses: ScriptedResponse[]): void;
  /** The response used while the queue is empty (initially 200 `{"data":{"Media":{"id":1}}}`). */
  setDefault(response: ResponseProvider): void;
  /** A handler consulted before the queue; returning `undefined` falls through to the queue. */
  handle(fn: RequestHandler | undefined): void;
  /** Every request received since the last reset, in arrival order. */
  requests: RecordedRequest[];
  /** Connections accepted since the last reset, plus those still open at the reset. */
  connections: ConnectionRecord[];
  /** How many TCP connections are open right now. */
  openConnections(): number;
  /** The most connections open at once since the last reset. */
  readonly maxOpenConnections: number;
  /** Resolves once `requests.length >= n`; rejects after `timeoutMs` (default 5000). */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  /** Resolves once `n` entries of `connections` have closed; rejects after `timeoutMs` (default 5000). */
  waitForClosedConnections(n: number, timeoutMs?: number): Promise<void>;
  /** Close keep-alive connections after they have been idle for `ms`; applies to idle ones at once. */
  setKeepAliveTimeout(ms: number): void;
  /** Clear the queue, handler, default and records; open sockets stay open. */
  reset(): void;
  /** Destroy every socket (hanging ones included) and stop listening. Idempotent. */
  close(): Promise<void>;
}

export interface ScriptedServerOptions {
  /** Idle keep-alive timeout of the server's connections; default 5000 (Node's). */
  keepAliveTimeoutMs?: number;
}

/** Quota headers as AniList sends them. `reset`: epoch seconds, or a `Date`. */
export interface RateLimitAnswer {
  limit: number;
  remaining: number;
  reset?: number | Date;
}

/** How an answer is delivered, for AniList and MAL alike. */
export interface AnswerDelivery {
  /** HTTP status. AniList: default the first error's `status`, else 200. MAL: default 200. */
  status?: number;
  headers?: Record<string, string | string[]>;
  /** `x-ratelimit-limit`, `x-ratelimit-remaining` and, when given, `x-ratelimit-reset`. */
  rateLimit?: RateLimitAnswer;
  /** `Retry-After`: seconds (fractions allowed), or a string sent as is (an HTTP-date). */
  retryAfter?: number | string;
  delayMs?: number;
  bodyDelayMs?: number;
  trickle?: { chunks: number; intervalMs: number };
  /** Drop the connection: before the response, or in the middle of its body. */
  drop?: 'before-response' | 'mid-body';
  hang?: boolean;
  closeAfter?: boolean;
  /** The raw body, sent instead of the envelope the other keys would build. */
  body?: string | object | Buffer;
}

/** An AniList answer: a GraphQL envelope `{ data, errors?, extensions? }` and its delivery. */
export interface AniListAnswer extends AnswerDelivery {
  /** The `data` object, e.g. `{ Media: { id: 1 } }`; `null` when omitted. */
  data?: Record<string, unknown> | null;
  /** GraphQL errors, e.g. `[{ message: "Not Found.", status: 404 }]`. */
  errors?: GraphQLErrorEntry[];
  extensions?: Record<string, unknown>;
}

/** A MAL answer: a JSON body (default for an error status: `{ error: "not_found", message: "" }`). */
export type MalAnswer = AnswerDelivery;

export interface UpstreamRequest extends RecordedRequest {
  provider: 'anilist' | 'mal';
}

export interface AniListRequest extends UpstreamRequest {
  provider: 'anilist';
  /** The GraphQL document. */
  document: string;
  operationName?: string;
  /** Root field names, each followed by its alias when it has one. */
  rootFields: string[];
  variables: Record<string, unknown>;
}

export interface MalRequest extends UpstreamRequest {
  provider: 'mal';
  /** The MAL API path, e.g. `/anime/1` (without the `/v2` base). */
  path: string;
}

export interface ProviderUpstream<Answer, Request> {
  /** The base URL to give the provider slot as `baseUrl`. */
  url: string;
  /** Requests this provider received since the last reset. */
  requests: Request[];
  /**
   * Queue answers for `key`, one per matching request, first in first out. AniList keys: an
   * operation name or a root field (`"Media"`); MAL keys: a path (`"/anime/1"`) or a method
   * and path (`"PATCH /anime/1/my_list_status"`); `"*"` matches any request of the provider.
   * An answer may be a function of the request.
   */
  reply(key: string, ...answers: (Answer | ((request: Request) => Answer))[]): this;
  /** Answer every matching request with `answer` once its queue is empty. */
  replyAlways(key: string, answer: Answer | ((request: Request) => Answer)): this;
}

export interface PendingAnswers {
  provider: 'anilist' | 'mal';
  key: string;
  count: number;
}

/** A local AniList + MAL upstream. Unscripted requests get a 501 that says what to queue. */
export interface TestUpstream extends AsyncDisposable {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `127.0.0.1:<port>`, the `host` AniLink reports in events and errors. */
  host: string;
  anilist: ProviderUpstream<AniListAnswer, AniListRequest>;
  mal: ProviderUpstream<MalAnswer, MalRequest>;
  /** Every request received since the last reset, in arrival order. */
  requests: (AniListRequest | MalRequest | RecordedRequest)[];
  /** Requests that found no queued or standing answer. */
  unmatched: (AniListRequest | MalRequest | RecordedRequest)[];
  /** Queued answers not used yet. */
  pending(): PendingAnswers[];
  /** Throws, naming them, if answers are left or a request was unscripted. */
  assertDone(): void;
  /**
   * An AniLink with both slots pointed here (`baseUrl`; MAL with client id `TEST_MAL_CLIENT_ID`).
   * Slot options are merged over those; client-level options pass through.
   */
  client(credentials?: AniLinkCredentials): AniLink;
  /** Resolves once `n` requests arrived; rejects after `timeoutMs` (default 5000). */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  connections: ConnectionRecord[];
  openConnections(): number;
  /** Forget queued and standing answers and the records. */
  reset(): void;
  /** Stop listening and drop every connection. Idempotent. */
  close(): Promise<void>;
}

export type { SimulatorOptions, SimulatorStats, SimulatorScript, SimulatorQuota } from './simulator';
import type { Simulator, SimulatorOptions } from './simulator';

/** The AniList simulator, with a client helper. */
export interface AniListSimulator extends Simulator, AsyncDisposable {
  /** An AniLink whose AniList slot uses the simulator. */
  client(credentials?: AniLinkCredentials): AniLink;
}

/** Start a local AniList + MAL upstream on 127.0.0.1; it never keeps the process alive. */
export function startTestUpstream(options?: ScriptedServerOptions): Promise<TestUpstream>;
/** Start the AniList simulator (needs the `graphql` package); it never keeps the process alive. */
export function startAniListSimulator(options?: Omit<SimulatorOptions, 'unref'>): Promise<AniListSimulator>;
/** Start a low-level scripted server (one response queue for every request). */
export function startScriptedServer(options?: ScriptedServerOptions): Promise<ScriptedServer>;
/** The `x-ratelimit-*` headers AniList sends (reset in epoch seconds, when given). */
export function rateLimitHeaders(limit: number, remaining: number, resetEpochSeconds?: number): Record<string, string>;
/** A successful GraphQL envelope with one root field: `{ data: { [root]: value } }`. */
export function graphqlData(root: string, value: unknown): { data: Record<string, unknown> };
/** The MAL client id of clients built by `TestUpstream.client()`. */
export const TEST_MAL_CLIENT_ID: string;
