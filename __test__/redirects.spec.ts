// Redirects (decisions D36), end to end against two servers on 127.0.0.1 (two ports: two
// origins): 307/308 re-send the request, 301/302 after a POST and 303 continue as a GET, at most
// `maxRedirects` (default 5) inside one attempt; credentials never reach another origin, nor
// http after https; hooks and the response cache see the request's own URL.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AniLink, AniLinkApiError, AniLinkNetworkError, ResponseCache, destroyCachedAgents } from 'anilink-api-wrapper';
import { contextRecorder, failureOf } from './support/helpers';
import { callInChild } from './support/network-child';
import { startTestProxy } from './support/test-proxy';
import { makeTestCertificates } from './support/test-tls';

const MEDIA = '{"data":{"Media":{"id":1}}}';

interface Seen {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** What a path answers: a status, with a Location when given. Unrouted paths answer 200 MEDIA. */
interface Route {
  status: number;
  location?: string;
}

interface Upstream {
  url: string;
  seen: Seen[];
  routes: Map<string, Route>;
  connections: number;
  close(): Promise<void>;
}

function handle(upstream: Upstream) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      upstream.seen.push({ method: req.method ?? '', path, headers: req.headers, body });
      const route = upstream.routes.get(path);
      const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json' };
      if (route?.location !== undefined) headers.location = route.location;
      // A redirect carries a body too: the client reads it so the connection serves the next hop.
      res.writeHead(route?.status ?? 200, headers).end(route ? '{"moved":true}' : MEDIA);
    });
  };
}

async function listen(server: http.Server | https.Server, scheme: string): Promise<Upstream> {
  const sockets = new Set<Socket>();
  const upstream: Upstream = {
    url: '',
    seen: [],
    routes: new Map(),
    connections: 0,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on('request', handle(upstream));
  server.on('connection', (socket: Socket) => {
    upstream.connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstream.url = `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return upstream;
}

let a: Upstream;
let b: Upstream;
beforeAll(async () => {
  a = await listen(http.createServer(), 'http');
  b = await listen(http.createServer(), 'http');
});
beforeEach(() => {
  for (const upstream of [a, b]) {
    upstream.seen.length = 0;
    upstream.routes.clear();
    upstream.connections = 0;
  }
  // Each test counts its own connections.
  destroyCachedAgents();
});
afterAll(async () => {
  destroyCachedAgents();
  await Promise.all([a.close(), b.close()]);
});

function aniList(options: Record<string, unknown> = {}): AniLink {
  return new AniLink({
    anilist: { baseUrl: `${a.url}/graphql`, retry: false, authToken: 'anilist-token', ...options },
  });
}

function mal(credentials: Record<string, unknown>): AniLink {
  return new AniLink({ mal: { baseUrl: `${a.url}/v2`, retry: false, ...credentials } });
}

/** `count` redirects of `status` on `a`: /graphql, /hop-1, … each to the next, the last to /done. */
function chain(count: number, status = 302): void {
  const from = ['/graphql', ...Array.from({ length: count - 1 }, (_, n) => `/hop-${n + 1}`)];
  from.forEach((path, n) => a.routes.set(path, { status, location: from[n + 1] ?? '/done' }));
}

describe('methods and bodies', () => {
  it('307 and 308 send the same POST, body and credentials again', async () => {
    for (const status of [307, 308]) {
      a.seen.length = 0;
      a.routes.set('/graphql', { status, location: '/moved' });
      await expect(aniList().anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
      const [first, second] = a.seen;
      expect(a.seen).toHaveLength(2);
      expect(second).toMatchObject({ method: 'POST', path: '/moved', body: first.body });
      expect(second.headers.authorization).toBe('Bearer anilist-token');
      expect(second.headers['content-type']).toBe(first.headers['content-type']);
    }
  });

  it('301 and 302 after a POST, and 303, continue as a GET without the body', async () => {
    for (const status of [301, 302, 303]) {
      a.seen.length = 0;
      a.routes.set('/graphql', { status, location: '/see' });
      await expect(aniList().anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
      const second = a.seen[1];
      expect(second).toMatchObject({ method: 'GET', path: '/see', body: '' });
      expect(second.headers['content-type']).toBeUndefined();
      expect(second.headers['content-length']).toBeUndefined();
      expect(second.headers.authorization, 'the same origin keeps the token').toBe('Bearer anilist-token');
    }
  });

  it('a GET stays a GET through every redirect status, and relative Locations resolve against the current URL', async () => {
    a.routes.set('/v2/anime/1', { status: 301, location: '../manga/2?x=1' });
    a.routes.set('/v2/manga/2', { status: 307, location: `${a.url}/v3/final` });
    a.routes.set('/v3/final', { status: 303, location: 'last' });
    await expect(mal({ clientId: 'cid' }).mal.anime.get({ id: 1 })).resolves.toEqual(JSON.parse(MEDIA));
    expect(a.seen.map((s) => `${s.method} ${s.path}`)).toEqual([
      'GET /v2/anime/1',
      'GET /v2/manga/2',
      'GET /v3/final',
      'GET /v3/last',
    ]);
    expect(a.connections, "each redirect's body is read and its connection serves the next hop").toBe(1);
  });
});

describe('credentials across origins', () => {
  it("AniList's token does not follow a redirect to another origin; the body does on a 307", async () => {
    a.routes.set('/graphql', { status: 307, location: `${b.url}/elsewhere` });
    await expect(aniList().anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    expect(a.seen[0].headers.authorization).toBe('Bearer anilist-token');
    expect(b.seen).toHaveLength(1);
    expect(b.seen[0]).toMatchObject({ method: 'POST', path: '/elsewhere', body: a.seen[0].body });
    expect(b.seen[0].headers.authorization).toBeUndefined();
    expect(b.seen[0].headers['content-type']).toBe('application/json');
  });

  it("MAL's access token and client id do not follow, and stay dropped when the chain comes back", async () => {
    for (const credentials of [{ accessToken: 'mal-token' }, { clientId: 'mal-client' }]) {
      a.seen.length = 0;
      b.seen.length = 0;
      a.routes.set('/v2/anime/1', { status: 302, location: `${b.url}/away` });
      b.routes.set('/away', { status: 302, location: `${a.url}/back` });
      await expect(mal(credentials).mal.anime.get({ id: 1 })).resolves.toEqual(JSON.parse(MEDIA));
      const sent = (seen: Seen) => [seen.headers.authorization, seen.headers['x-mal-client-id']];
      expect(sent(a.seen[0]).filter(Boolean)).toHaveLength(1);
      expect(sent(b.seen[0])).toEqual([undefined, undefined]);
      expect(a.seen[1].path).toBe('/back');
      expect(sent(a.seen[1])).toEqual([undefined, undefined]);
    }
  });

  it('https to http drops the token even on the same host', async () => {
    const certificates = makeTestCertificates();
    const secure = await listen(https.createServer({ key: certificates.key, cert: certificates.cert }), 'https');
    try {
      secure.routes.set('/graphql', { status: 308, location: `${a.url}/plain` });
      const run = await callInChild({ NODE_EXTRA_CA_CERTS: certificates.caFile }, `${secure.url}/graphql`, {
        authToken: 'anilist-token',
      });
      expect(run.outcomes).toEqual([{ ok: true, value: { id: 1 } }]);
      expect(secure.seen[0].headers.authorization).toBe('Bearer anilist-token');
      expect(a.seen).toHaveLength(1);
      expect(a.seen[0]).toMatchObject({ method: 'POST', path: '/plain' });
      expect(a.seen[0].headers.authorization).toBeUndefined();
    } finally {
      await secure.close();
      certificates.remove();
    }
  });
});

describe('connections', () => {
  it("every hop goes through the proxy with the proxy's own credentials; the upstream token stays behind", async () => {
    const proxy = await startTestProxy({ credentials: 'user:pass' });
    try {
      a.routes.set('/graphql', { status: 307, location: `${b.url}/via-proxy` });
      await expect(
        aniList({ proxy: `http://user:pass@127.0.0.1:${proxy.port}` }).anilist.query.media({ id: 1 }),
      ).resolves.toEqual({
        id: 1,
      });
      expect(proxy.forwarded.map((r) => [r.target, r.proxyAuthorization])).toEqual([
        [`${a.url}/graphql`, 'Basic dXNlcjpwYXNz'],
        [`${b.url}/via-proxy`, 'Basic dXNlcjpwYXNz'],
      ]);
      expect(a.seen[0].headers.authorization).toBe('Bearer anilist-token');
      expect(b.seen[0].headers.authorization).toBeUndefined();
    } finally {
      await proxy.close();
    }
  });
});

describe('limits and refused redirects', () => {
  it('five redirects are followed; the sixth fails the attempt with NETWORK_ERROR', async () => {
    chain(5);
    await expect(aniList().anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    expect(a.seen.at(-1)?.path).toBe('/done');

    a.seen.length = 0;
    chain(6);
    const error = await failureOf(aniList().anilist.query.media({ id: 1 }));
    expect(error).toBeInstanceOf(AniLinkNetworkError);
    expect(error.code).toBe('NETWORK_ERROR');
    expect((error as AniLinkNetworkError & { reason: string }).reason).toBe(
      'more than 5 redirects (the last one a 302); raise maxRedirects to follow more',
    );
    expect(a.seen).toHaveLength(6);
  });

  it('a redirect without a Location, or to a non-http(s) URL, fails naming why (not the URL)', async () => {
    a.routes.set('/graphql', { status: 302 });
    const missing = await failureOf(aniList().anilist.query.media({ id: 1 }));
    expect(missing.code).toBe('NETWORK_ERROR');
    expect((missing as AniLinkNetworkError & { reason: string }).reason).toBe(
      'a 302 redirect without a Location header',
    );

    a.routes.set('/graphql', { status: 301, location: 'ftp://files.example/secret-token' });
    const ftp = await failureOf(aniList().anilist.query.media({ id: 1 }));
    expect(ftp.code).toBe('NETWORK_ERROR');
    const reason = (ftp as AniLinkNetworkError & { reason: string }).reason;
    expect(reason).toBe('a 301 redirect to a ftp: URL; only http: and https: Locations are followed');
    expect(JSON.stringify(ftp)).not.toContain('secret-token');
  });

  it('maxRedirects (slot or request) lowers the limit; 0 returns the redirect as its status error', async () => {
    chain(2);
    const slot = aniList({ maxRedirects: 1 });
    expect((await failureOf(slot.anilist.query.media({ id: 1 }))).code).toBe('NETWORK_ERROR');
    await expect(slot.anilist.query.media({ id: 1 }, { maxRedirects: 2 })).resolves.toEqual({ id: 1 });

    a.seen.length = 0;
    const error = await failureOf(aniList().anilist.query.media({ id: 1 }, { maxRedirects: 0 }));
    expect(error).toBeInstanceOf(AniLinkApiError);
    expect((error as AniLinkApiError).status).toBe(302);
    expect(a.seen).toHaveLength(1);
  });
});

describe('what the caller sees', () => {
  it("hooks report the request's own URL, one attempt and one response", async () => {
    chain(3, 307);
    const starts = contextRecorder<{ url: string; attempt: number }>();
    const responses = contextRecorder<{ url: string; attempt: number }>();
    await aniList({ onRequestStart: starts.hook, onResponse: responses.hook }).anilist.query.media({ id: 1 });
    expect(starts.contexts.map((c) => [c.url, c.attempt])).toEqual([[`${a.url}/graphql`, 1]]);
    expect(responses.contexts.map((c) => [c.url, c.attempt])).toEqual([[`${a.url}/graphql`, 1]]);
  });

  it('the final status is what the call reports, classified as usual (a 503 after a redirect is retried from the start)', async () => {
    a.routes.set('/graphql', { status: 302, location: '/busy' });
    a.routes.set('/busy', { status: 503 });
    const errors = contextRecorder<{ url: string }>();
    const error = await failureOf(
      aniList({
        retry: { maxRetries: 1, baseDelayMs: 1, jitter: false },
        onError: (_e: unknown, c: { url: string }) => errors.hook(c),
      }).anilist.query.media({ id: 1 }),
    );
    expect((error as AniLinkApiError).status).toBe(503);
    expect(a.seen.map((s) => s.path)).toEqual(['/graphql', '/busy', '/graphql', '/busy']);
    expect(errors.contexts.map((c) => c.url)).toEqual([`${a.url}/graphql`, `${a.url}/graphql`]);
  });

  it("the response cache keys the answer under the request's own URL", async () => {
    a.routes.set('/graphql', { status: 308, location: '/cached' });
    const client = aniList({ responseCache: new ResponseCache() });
    const responses = contextRecorder<{ cacheHit?: boolean }>();
    await client.anilist.query.media({ id: 1 }, { onResponse: responses.hook });
    await client.anilist.query.media({ id: 1 }, { onResponse: responses.hook });
    expect(a.seen).toHaveLength(2);
    expect(responses.contexts.map((c) => c.cacheHit)).toEqual([false, true]);
  });
});
