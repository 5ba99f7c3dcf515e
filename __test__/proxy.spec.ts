// Proxies (issue 14): the `proxy` option and the HTTP_PROXY / HTTPS_PROXY / NO_PROXY
// environment, against a real forwarding + CONNECT proxy on 127.0.0.1 that counts what passed
// through it. Environment cases run in a child process, which reads the variables it is given.
import { inspect } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AniLink } from 'anilink-api-wrapper';
import { aniListClient, closedPort, failureOf, useTestServer } from './support/helpers';
import { callInChild } from './support/network-child';
import type { TestServer } from './support/test-server';
import { startTestProxy, type TestProxy } from './support/test-proxy';
import { makeTestCertificates, startTlsServer, type TestCertificates, type TlsServer } from './support/test-tls';

let server: TestServer;
useTestServer((s) => (server = s));

let proxy: TestProxy;
let guarded: TestProxy;
let certificates: TestCertificates;
let tls: TlsServer;
beforeAll(async () => {
  proxy = await startTestProxy();
  guarded = await startTestProxy({ credentials: 'user:p@ss' });
  certificates = makeTestCertificates();
  tls = await startTlsServer(certificates);
});
beforeEach(() => {
  proxy.reset();
  guarded.reset();
  tls.requests = 0;
});
afterAll(async () => {
  await Promise.all([proxy.close(), guarded.close(), tls.close()]);
  certificates.remove();
});

const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;
const guardedUrl = (password: string) => `http://user:${encodeURIComponent(password)}@127.0.0.1:${guarded.port}`;

describe('the proxy option', () => {
  it('forwards plain HTTP through the proxy, in absolute form, reusing the proxy connection', async () => {
    const aniLink = aniListClient(server, { proxy: proxy.url });
    await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    await expect(aniLink.anilist.query.media({ id: 2 })).resolves.toEqual({ id: 1 });
    expect(proxy.forwarded.map((r) => [r.method, r.target])).toEqual([
      ['POST', `${server.url}/`],
      ['POST', `${server.url}/`],
    ]);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0].headers.host).toBe(server.host);
  });

  it("sends the proxy URL's credentials as Proxy-Authorization: Basic", async () => {
    const aniLink = aniListClient(server, { proxy: guardedUrl('p@ss') });
    await expect(aniLink.anilist.query.media({ id: 1 })).resolves.toEqual({ id: 1 });
    expect(guarded.forwarded.map((r) => r.proxyAuthorization)).toEqual([basic('user:p@ss')]);
  });

  it('tunnels https through CONNECT with the credentials; a refused tunnel is a NETWORK_ERROR naming the redacted proxy', async () => {
    const refused = await failureOf(
      aniListClient(tls, { proxy: guardedUrl('wrong-secret') }).anilist.query.media({ id: 1 }),
    );
    expect(refused.code).toBe('NETWORK_ERROR');
    expect(refused.reason).toContain(
      `proxy http://***@127.0.0.1:${guarded.port} refused CONNECT: 407 Proxy Authentication Required`,
    );
    expect(refused.reason).toContain(`tunnel to 127.0.0.1:${tls.port}`);
    expect(inspect(refused, { showHidden: true, depth: 5 }) + JSON.stringify(refused)).not.toContain('wrong-secret');
    expect(guarded.tunnels).toEqual([
      { method: 'CONNECT', target: `127.0.0.1:${tls.port}`, proxyAuthorization: basic('user:wrong-secret') },
    ]);
    expect(tls.requests).toBe(0);
  });

  it('speaks TLS to the origin inside the tunnel (this process does not trust the test CA)', async () => {
    const failure = await failureOf(aniListClient(tls, { proxy: guardedUrl('p@ss') }).anilist.query.media({ id: 1 }));
    expect(guarded.tunnels.map((t) => t.target)).toEqual([`127.0.0.1:${tls.port}`]);
    expect(failure.code).toBe('NETWORK_ERROR');
    expect(failure.reason).toContain('TLS handshake with 127.0.0.1 failed');
  });

  it('an unreachable proxy is a NETWORK_ERROR naming it without its credentials', async () => {
    const port = await closedPort();
    const aniLink = aniListClient(server, { proxy: `http://user:hunter2@127.0.0.1:${port}` });
    const failure = await failureOf(aniLink.anilist.query.media({ id: 1 }));
    expect(failure.code).toBe('NETWORK_ERROR');
    expect(failure.reason).toContain(`connect to proxy http://***@127.0.0.1:${port} failed`);
    expect(inspect(failure, { showHidden: true, depth: 5 }) + JSON.stringify(failure)).not.toContain('hunter2');
    expect(server.requests).toHaveLength(0);
  });

  it('a per-request proxy overrides the slot; proxy: false goes direct', async () => {
    const aniLink = aniListClient(server, { proxy: proxy.url });
    await aniLink.anilist.query.media({ id: 1 }, { proxy: false });
    expect(proxy.forwarded).toHaveLength(0);
    const direct = aniListClient(server);
    await direct.anilist.query.media({ id: 1 }, { proxy: proxy.url });
    expect(proxy.forwarded).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('invalid values are TypeErrors that never echo a password', async () => {
    expect(() => new AniLink({ anilist: { proxy: true as never } })).toThrow(
      new TypeError(
        'proxy must be false (no proxy) or an http:// proxy URL such as "http://proxy.example:3128" (received true).',
      ),
    );
    let thrown: unknown;
    try {
      new AniLink({ anilist: { proxy: 'socks5://user:hunter2@127.0.0.1:1080' } });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as TypeError).message).toContain('only http:// proxies are supported');
    expect((thrown as TypeError).message).not.toContain('hunter2');
    for (const url of ['127.0.0.1:3128', 'proxy.example', 'user:hunter2@proxy.example:3128', 'http//u:hunter2@@:x']) {
      const attempt = () => new AniLink({ anilist: { proxy: url } });
      expect(attempt).toThrow(TypeError);
      expect(attempt).toThrow('it has no scheme; write it in full as http://host:port');
      expect(attempt).not.toThrow(/hunter2|127\.0\.0\.1/);
    }
    expect(() => new AniLink({ anilist: { proxy: 'http://u:hunter2@@:x' } })).toThrow(
      /it has no host; write it as http:\/\/host:port\)\.$/,
    );
    for (const port of ['99999', '65536', '-1', '1e3']) {
      const url = `http://user:hunter2@127.0.0.1:${port}`;
      const rejected = 'it is a string that new URL() rejects; a port must be 0 to 65535).';
      expect(() => new AniLink({ anilist: { proxy: url } })).toThrow(TypeError);
      expect(() => new AniLink({ anilist: { proxy: url } })).toThrow(rejected);
      expect(() => new AniLink({ anilist: { proxy: url } })).not.toThrow(/hunter2/);
      await expect(aniListClient(server).anilist.query.media({ id: 1 }, { proxy: url })).rejects.toThrow(rejected);
      process.env.HTTP_PROXY = url;
      try {
        const attempt = () => new AniLink({ anilist: {} });
        expect(attempt).toThrow(TypeError);
        expect(attempt).toThrow(
          `The environment variable HTTP_PROXY is not a usable proxy URL: ${rejected.slice(0, -2)}`,
        );
        expect(attempt).not.toThrow(/hunter2/);
      } finally {
        delete process.env.HTTP_PROXY;
      }
    }
    const perRequest = aniListClient(server).anilist.query.media({ id: 1 }, { proxy: 3128 as never });
    await expect(perRequest).rejects.toThrow(TypeError);
    expect(server.requests).toHaveLength(0);
  });
});

describe('the environment', () => {
  const port = () => new URL(server.url).port;

  it('HTTP_PROXY proxies plain HTTP; lower case wins over upper case', async () => {
    const unreachable = `http://127.0.0.1:${await closedPort()}`;
    const run = await callInChild({ http_proxy: proxy.url, HTTP_PROXY: unreachable }, server.url);
    expect(run.outcomes).toEqual([{ ok: true, value: { id: 1 } }]);
    expect(proxy.forwarded.map((r) => r.target)).toEqual([`${server.url}/`]);
  });

  it('NO_PROXY bypasses a listed host:port', async () => {
    const run = await callInChild({ HTTP_PROXY: proxy.url, NO_PROXY: `example.com, 127.0.0.1:${port()}` }, server.url);
    expect(run.outcomes).toEqual([{ ok: true, value: { id: 1 } }]);
    expect(proxy.forwarded).toHaveLength(0);
    expect(server.requests).toHaveLength(1);
  });

  it('a variable without a scheme is a TypeError naming the variable, not its value, unless the slot sets proxy', () => {
    for (const [name, value] of [
      ['HTTP_PROXY', '127.0.0.1:3128'],
      ['https_proxy', 'user:hunter2@proxy.example:3128'],
    ]) {
      process.env[name] = value;
      try {
        const attempt = () => new AniLink({ anilist: {} });
        expect(attempt).toThrow(TypeError);
        expect(attempt).toThrow(
          `The environment variable ${name} is not a usable proxy URL: it has no scheme; write it in full as http://host:port`,
        );
        expect(attempt).not.toThrow(/hunter2|127\.0\.0\.1/);
        expect(() => new AniLink({ anilist: { proxy: false }, mal: { proxy: false } })).not.toThrow();
      } finally {
        delete process.env[name];
      }
    }
  });

  it('proxy: false ignores the environment', async () => {
    const unreachable = `http://127.0.0.1:${await closedPort()}`;
    const run = await callInChild({ HTTP_PROXY: unreachable }, server.url, { proxy: false });
    expect(run.outcomes).toEqual([{ ok: true, value: { id: 1 } }]);
  });

  it('is read when a slot is built: a later HTTP_PROXY applies to later clients only', async () => {
    const run = await callInChild({}, server.url, {}, proxy.url);
    expect(run.outcomes).toEqual([
      { ok: true, value: { id: 1 } },
      { ok: true, value: { id: 1 } },
    ]);
    expect(proxy.forwarded).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('HTTPS_PROXY tunnels https end to end, with the CA from NODE_EXTRA_CA_CERTS', async () => {
    const run = await callInChild({ HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: certificates.caFile }, tls.url);
    expect(run.outcomes).toEqual([{ ok: true, value: { id: 1 } }]);
    expect(proxy.tunnels.map((t) => t.target)).toEqual([`127.0.0.1:${tls.port}`]);
    expect(tls.requests).toBe(1);
  });
});
