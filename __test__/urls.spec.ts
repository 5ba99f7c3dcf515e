// URLs by the WHATWG rules (decisions D30) and secrets never echoed in TypeErrors (D31): a
// baseUrl that `new URL` rejects is a TypeError at construction (never port 80), userinfo is
// reported as `***`, and a message about a credential or a URL describes the value's kind only.
import { describe, expect, it } from 'vitest';
import {
  AniLink,
  getAccessToken,
  getMalAccessToken,
  refreshAccessToken,
  refreshMalAccessToken,
} from 'anilink-api-wrapper';
import { contextRecorder, malClient, useTestServer } from './support/helpers';
import type { TestServer } from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

const Untyped = AniLink as unknown as new (...args: unknown[]) => AniLink;
const SECRET = 'sEcReT-0123456789';

/** Whether `new URL` accepts `url` as an http(s) URL: the rule the constructor must follow. */
function whatwgAccepts(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const { protocol } = new URL(url);
  return protocol === 'http:' || protocol === 'https:';
}

describe('baseUrl by the WHATWG rules', () => {
  const candidates = [
    'http://127.0.0.1:65536',
    'http://127.0.0.1:99999/v2',
    'http://127.0.0.1:65535',
    'http://127.0.0.1:0',
    'http://127.0.0.1:/',
    'http://127.0.0.1:08080',
    'http://[::1]:8080',
    'http://[::1',
    'https://user:pw@example.com',
    'http://exa mple.com',
    'http://example.com/pa th',
    'HTTP://EXAMPLE.COM',
    'http://例え.jp',
    'ftp://example.com',
    'file:///etc/passwd',
    'not a url',
    'http://',
    'https://example.com:443',
    'http://1.2.3.4.5',
    'http://256.1.1.1',
  ];

  it.each(candidates)('%s is accepted exactly when new URL accepts it', (url) => {
    for (const provider of ['anilist', 'mal']) {
      const construct = () => new Untyped({ [provider]: { baseUrl: url } });
      if (whatwgAccepts(url)) expect(construct).not.toThrow();
      else expect(construct).toThrow(TypeError);
    }
  });

  it('a port above 65535 is a TypeError that names the rule, and nothing is sent to port 80', () => {
    expect(() => new AniLink({ anilist: { baseUrl: 'http://127.0.0.1:99999' } })).toThrow(
      'anilist baseUrl must be an absolute http:// or https:// URL (received a string that new URL() rejects; a port must be 0 to 65535).',
    );
    expect(() => new AniLink('token', { baseUrl: 'http://127.0.0.1:65536' })).toThrow(TypeError);
  });

  it('userinfo is reported as *** in every hook', async () => {
    const starts = contextRecorder<{ url: string }>();
    const responses = contextRecorder<{ url: string }>();
    const urlWithPassword = server.url.replace('http://', `http://me:${SECRET}@`);
    const client = new AniLink({
      anilist: { baseUrl: urlWithPassword, retry: false, onRequestStart: starts.hook, onResponse: responses.hook },
    });
    await client.anilist.query.media({ id: 1 });
    expect(starts.contexts[0].url).toBe(server.url.replace('http://', 'http://***@'));
    expect(responses.contexts[0].url).toBe(starts.contexts[0].url);
    expect(JSON.stringify(client.getTransportState())).not.toContain(SECRET);
  });
});

describe('no secret in a TypeError', () => {
  const bad = [[SECRET], { token: SECRET }, 42, true];

  it.each(['authToken', 'refreshToken', 'clientSecret', 'clientId'])(
    'anilist %s of the wrong type is described, not echoed',
    (field) => {
      for (const value of bad) {
        expect(() => new Untyped({ anilist: { [field]: value } })).toThrow(
          /must be a string \(received (an array|an object|a number|a boolean)\)/,
        );
        try {
          new Untyped({ anilist: { [field]: value } });
        } catch (error) {
          expect((error as Error).message).not.toContain(SECRET);
        }
      }
    },
  );

  it('mal accessToken, a password in an invalid baseUrl and a misplaced token string are not echoed', () => {
    const attempts = [
      () => new Untyped({ mal: { accessToken: [SECRET] } }),
      () => new Untyped({ anilist: { baseUrl: `http://u:${SECRET}@127.0.0.1:99999` } }),
      () => new Untyped({ mal: { baseUrl: `ftp://u:${SECRET}@example.com` } }),
      () => new Untyped('token', SECRET),
      () => new Untyped({ anilist: SECRET }),
      () => new Untyped(42, SECRET),
    ];
    for (const attempt of attempts) {
      expect(attempt).toThrow(TypeError);
      try {
        attempt();
      } catch (error) {
        expect((error as Error).message).not.toContain(SECRET);
      }
    }
  });
});

describe('a secret of any type is described by kind, never echoed (D31)', () => {
  // Each value carries the secret in the rendering a careless describer would use.
  const DIGITS = '8675309123';
  const values: Array<[string, unknown]> = [
    ['a number', Number(DIGITS)],
    ['a bigint', BigInt(DIGITS)],
    ['a boolean', true],
    ['an object', { token: SECRET, toString: () => SECRET }],
    ['an array', [SECRET]],
    ['a symbol', Symbol(SECRET)],
    ['a function', () => SECRET],
  ];
  const untyped = (f: unknown) => f as (...args: unknown[]) => Promise<unknown>;
  const entryPoints: Array<[string, (secret: unknown) => unknown]> = [
    ['new AniLink(token)', (v) => new Untyped(v)],
    ['new AniLink({ anilist: { authToken } })', (v) => new Untyped({ anilist: { authToken: v } })],
    ['new AniLink({ mal: { accessToken } })', (v) => new Untyped({ mal: { accessToken: v } })],
    ['new AniLink({ mal: { clientSecret } })', (v) => new Untyped({ mal: { clientId: 'id', clientSecret: v } })],
    ['getAccessToken clientSecret', (v) => untyped(getAccessToken)('1', v, 'code')],
    ['getAccessToken code', (v) => untyped(getAccessToken)('1', 'secret', v)],
    ['refreshAccessToken clientSecret', (v) => untyped(refreshAccessToken)('1', v, 'refresh')],
    ['refreshAccessToken refreshToken', (v) => untyped(refreshAccessToken)('1', 'secret', v)],
    [
      'getMalAccessToken clientSecret',
      (v) => untyped(getMalAccessToken)({ clientId: 'id', clientSecret: v, code: 'c', codeVerifier: 'v' }),
    ],
    ['getMalAccessToken code', (v) => untyped(getMalAccessToken)({ clientId: 'id', code: v, codeVerifier: 'v' })],
    [
      'getMalAccessToken codeVerifier',
      (v) => untyped(getMalAccessToken)({ clientId: 'id', code: 'c', codeVerifier: v }),
    ],
    [
      'refreshMalAccessToken clientSecret',
      (v) => untyped(refreshMalAccessToken)({ clientId: 'id', clientSecret: v, refreshToken: 'r' }),
    ],
    ['refreshMalAccessToken refreshToken', (v) => untyped(refreshMalAccessToken)({ clientId: 'id', refreshToken: v })],
  ];

  it.each(entryPoints)('%s', async (_label, call) => {
    for (const [kind, value] of values) {
      let thrown: unknown;
      try {
        await call(value);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, kind).toBeInstanceOf(TypeError);
      const { message } = thrown as TypeError;
      // An object in the token's place is read as a credentials object, whose keys are named.
      expect(message, kind).toMatch(/\(received (a|an) [^)]+\)|unknown credentials key "token"/);
      for (const echo of [DIGITS, SECRET, 'true']) expect(message, `${kind}: ${message}`).not.toContain(echo);
    }
  });
});

describe('MAL path segments from caller values', () => {
  it.each([
    ['..', '/v2/users/%2E%2E/animelist'],
    ['.', '/v2/users/%2E/animelist'],
    ['../../anime/1', '/v2/users/..%2F..%2Fanime%2F1/animelist'],
  ])('username %j cannot change the path', async (username, path) => {
    server.setDefault({ body: { data: [] } });
    const client = malClient({ url: `${server.url}/v2` }, { accessToken: 't' });
    await client.mal.user.animeList({ username });
    expect(server.requests[0].url.split('?')[0]).toBe(path);
  });
});
