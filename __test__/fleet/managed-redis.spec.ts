// Managed Redis (issue 36): `rediss://` verified with the trust HTTPS uses (the system store and
// NODE_EXTRA_CA_CERTS), and ACL users limited to the commands the package needs, against a real
// redis-server started here with a TLS port and a certificate from a test CA made for this run.
// Trust is read once per process, so the trusting workers are child processes started with
// NODE_EXTRA_CA_CERTS; this process never trusts the test CA.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AniLink, destroyCachedAgents } from 'anilink-api-wrapper';
import { startSimulator } from '../../sim/anilist-simulator.mjs';
import {
  type DiagnosticRecord,
  type WorkerReport,
  splitIds,
  startFleet,
  readThenReadAgainElsewhere,
} from '../support/fleet';
import { type RedisServer, keysUnder, startRedisServer } from '../support/redis-server';
import { startTestServer } from '../support/test-server';
import { makeTestCertificates, type TestCertificates } from '../support/test-tls';

const WORKERS = 2;
const IN_FLIGHT = 4;
const QUOTA = { limit: 20, windowMs: 3_000 };
/** Generous on 2 loaded cores: a TLS handshake plus a script load must not look like an outage. */
const REDIS_TIMEOUT_MS = 2_000;
const ACL_USER = 'anilink-fleet';
const ACL_PASSWORD = 's3cret-acl-pw';
/** The ACL line of docs/fleet.md for a managed Redis, with this test's user, password and key prefix. */
const ACL_RULES =
  `on >${ACL_PASSWORD} resetkeys ~acl:* resetchannels -@all +hmget +evalsha +script|load +hget +hset +pexpire`.split(
    ' ',
  );

/** What the README adds to that line for a fleet-wide response cache (run inside its scripts). */
const FLEET_CACHE_COMMANDS =
  '+hincrby +hgetall +hdel +zscore +zadd +zcard +zrange +zrangebyscore +zremrangebyscore +zremrangebyrank +zrem +pttl +time';

let certificates: TestCertificates;
let redis: RedisServer;
beforeAll(async () => {
  certificates = makeTestCertificates();
  redis = await startRedisServer({ tls: certificates });
  await redis.command('ACL', 'SETUSER', ACL_USER, ...ACL_RULES);
});
afterAll(async () => {
  destroyCachedAgents();
  await redis?.stop();
  certificates?.remove();
});

/** Every job of a fleet of WORKERS on `sharedState`, against a simulator of QUOTA. */
async function runFleet(sharedState: Record<string, unknown>, env: Record<string, string> = {}) {
  const sim = await startSimulator({ quota: QUOTA });
  const fleet = await startFleet({ size: WORKERS, slot: { baseUrl: sim.url, retry: false, sharedState }, env });
  try {
    const { reports } = await fleet.run(splitIds(QUOTA.limit, WORKERS), IN_FLIGHT);
    const states = (await fleet.states()) as { sharedState: string }[];
    return { reports: reports as WorkerReport[], states, rateLimited: sim.stats().rateLimited };
  } finally {
    await fleet.close();
    await sim.close();
  }
}

function expectSharedWithoutTrouble(run: Awaited<ReturnType<typeof runFleet>>) {
  expect(run.reports.flatMap((report) => report.failures)).toEqual([]);
  expect(run.reports.reduce((sum, report) => sum + report.served, 0)).toBe(QUOTA.limit);
  for (const report of run.reports) expect(report.diagnostics).toEqual([]);
  for (const state of run.states) expect(state.sharedState).toBe('redis');
  expect(run.rateLimited).toBe(0);
}

/** Calls of one in-process client on `redis`: all served; the diagnostics it emitted. */
async function diagnosticsOfOneClient(redisUrl: string): Promise<DiagnosticRecord[]> {
  const upstream = await startTestServer();
  const diagnostics: DiagnosticRecord[] = [];
  try {
    const aniLink = new AniLink(undefined, {
      baseUrl: upstream.url,
      sharedState: { redis: redisUrl, timeoutMs: REDIS_TIMEOUT_MS },
      diagnostics: 'hook',
      onHookError: (_name, error) => diagnostics.push((error as { diagnostic: DiagnosticRecord }).diagnostic),
    });
    for (let id = 1; id <= 3; id++) await expect(aniLink.anilist.query.media({ id })).resolves.toBeDefined();
    expect(upstream.requests).toHaveLength(3);
  } finally {
    await upstream.close();
  }
  return diagnostics;
}

describe('sharedState on a managed Redis', () => {
  it('rediss:// with the CA in NODE_EXTRA_CA_CERTS: the fleet shares through TLS', async () => {
    const tlsUrl = redis.tlsUrl as string;
    const run = await runFleet(
      { redis: tlsUrl, keyPrefix: 'tls', timeoutMs: REDIS_TIMEOUT_MS },
      { NODE_EXTRA_CA_CERTS: certificates.caFile },
    );
    expectSharedWithoutTrouble(run);
    // Only the TLS port was given: the state there came through it.
    expect(await keysUnder(redis, 'tls')).not.toEqual([]);
  }, 60_000);

  it(`an ACL user allowed only the package's commands: the fleet shares as that user`, async () => {
    const run = await runFleet({
      redis: `redis://${ACL_USER}:${ACL_PASSWORD}@127.0.0.1:${redis.port}`,
      keyPrefix: 'acl',
      timeoutMs: REDIS_TIMEOUT_MS,
    });
    expectSharedWithoutTrouble(run);
    expect(await keysUnder(redis, 'acl')).not.toEqual([]);
    // The user really is that narrow: nothing else, no other prefix.
    expect(await redis.command('ACL', 'DRYRUN', ACL_USER, 'GET', 'acl:x')).toMatch(/no permissions/);
    expect(await redis.command('ACL', 'DRYRUN', ACL_USER, 'HMGET', 'other:x', 'v')).toMatch(/no permissions/);
  }, 60_000);

  it('a fleet-wide response cache through rediss:// as an ACL user given the cache commands of the README', async () => {
    const cacheUser = 'anilink-cache';
    const cacheRules = [
      ...ACL_RULES.map((rule) => (rule.startsWith('~') ? '~cache:*' : rule)),
      ...FLEET_CACHE_COMMANDS.split(' '),
    ];
    await redis.command('ACL', 'SETUSER', cacheUser, ...cacheRules);
    const upstream = await startTestServer();
    upstream.handle((request) => {
      const { id } = (request.json as { variables: { id: number } }).variables;
      return { body: { data: { Media: { id } } } };
    });
    const fleet = await startFleet({
      size: WORKERS,
      slot: {
        baseUrl: upstream.url,
        retry: false,
        sharedState: {
          redis: `rediss://${cacheUser}:${ACL_PASSWORD}@127.0.0.1:${redis.tlsPort}`,
          keyPrefix: 'cache',
          timeoutMs: REDIS_TIMEOUT_MS,
        },
        responseCache: { ttlMs: 60_000, shared: true },
      },
      env: { NODE_EXTRA_CA_CERTS: certificates.caFile },
    });
    try {
      const ids = [1, 2, 3];
      await readThenReadAgainElsewhere(fleet, ids, 1);
      expect(upstream.requests).toHaveLength(ids.length);
      const states = (await fleet.states()) as { responseCache: { fleetHits: number } }[];
      expect(states.map((state) => state.responseCache.fleetHits)).toEqual([0, ids.length]);
    } finally {
      await fleet.close();
      await upstream.close();
    }
  }, 60_000);

  it('a certificate this process does not trust: calls go on, one diagnostic saying so, no password', async () => {
    const tlsPort = redis.tlsPort as number;
    const diagnostics = await diagnosticsOfOneClient(`rediss://${ACL_USER}:${ACL_PASSWORD}@127.0.0.1:${tlsPort}`);
    expect(diagnostics.map((record) => record.code)).toEqual(['SHARED_STATE_UNAVAILABLE']);
    expect(diagnostics[0].message).toContain(`127.0.0.1:${tlsPort}`);
    expect(diagnostics[0].message).toContain('not trusted');
    expect(diagnostics[0].message).toContain('NODE_EXTRA_CA_CERTS');
    expect(JSON.stringify(diagnostics)).not.toContain(ACL_PASSWORD);
  });

  it('a certificate from a trusted CA but for another name: the name is verified, one diagnostic', async () => {
    const otherName = makeTestCertificates('DNS:redis.elsewhere.test');
    const server = await startRedisServer({ tls: otherName });
    const sim = await startSimulator({ quota: QUOTA });
    try {
      const fleet = await startFleet({
        size: 1,
        slot: {
          baseUrl: sim.url,
          retry: false,
          sharedState: { redis: server.tlsUrl, timeoutMs: REDIS_TIMEOUT_MS },
        },
        env: { NODE_EXTRA_CA_CERTS: otherName.caFile },
      });
      try {
        const { reports } = await fleet.run(splitIds(3, 1), 1);
        const [report] = reports as WorkerReport[];
        expect(report.failures).toEqual([]);
        expect(report.served).toBe(3);
        expect(report.diagnostics.map((record) => record.code)).toEqual(['SHARED_STATE_UNAVAILABLE']);
        expect(report.diagnostics[0].message).toContain('certificate not valid for name "127.0.0.1"');
      } finally {
        await fleet.close();
      }
    } finally {
      await sim.close();
      await server.stop();
      otherName.remove();
    }
  }, 60_000);

  it('a wrong password: calls go on, one diagnostic saying the login failed, no password', async () => {
    const wrongPassword = 'not-the-acl-pw';
    const diagnostics = await diagnosticsOfOneClient(`redis://${ACL_USER}:${wrongPassword}@127.0.0.1:${redis.port}`);
    expect(diagnostics.map((record) => record.code)).toEqual(['SHARED_STATE_UNAVAILABLE']);
    expect(diagnostics[0].message).toContain('Password authentication failed');
    expect(JSON.stringify(diagnostics)).not.toContain(wrongPassword);
  });
});
