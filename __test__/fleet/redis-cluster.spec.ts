// Shared state on a Redis Cluster (issue 36): three masters started here (`--cluster-enabled yes`,
// joined by `redis-cli --cluster create`). A scope's keys share one hash slot (their hash tag),
// and a fleet given a node that does not hold it follows the cluster's MOVED answer to the one
// that does: calls shared, none failed, no 429.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AniLink, destroyCachedAgents } from 'anilink-api-wrapper';
import { startSimulator } from '../../sim/anilist-simulator.mjs';
import { type DiagnosticRecord, splitIds, startFleet } from '../support/fleet';
import { type RedisCluster, type RedisServer, keysUnder, startRedisCluster } from '../support/redis-server';
import { startTestServer } from '../support/test-server';

const WORKERS = 2;
const IN_FLIGHT = 4;
const QUOTA = { limit: 20, windowMs: 3_000 };
const REDIS_TIMEOUT_MS = 2_000;
const PREFIX = 'cluster';

let cluster: RedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster(3);
}, 30_000);
afterAll(async () => {
  destroyCachedAgents();
  await cluster?.stop();
});

describe('sharedState on a Redis Cluster', () => {
  it('the scope on one slot of one node; a fleet given another node shares through the one holding it', async () => {
    const sim = await startSimulator({ quota: QUOTA });
    try {
      // One call of this process puts the scope where its slot lives, whichever node it asks.
      const diagnostics: DiagnosticRecord[] = [];
      const sharedState = { redis: cluster.nodes[0].url, keyPrefix: PREFIX, timeoutMs: REDIS_TIMEOUT_MS };
      const probe = new AniLink(undefined, {
        baseUrl: sim.url,
        retry: false,
        sharedState,
        diagnostics: 'hook',
        onHookError: (_name, error) => diagnostics.push((error as { diagnostic: DiagnosticRecord }).diagnostic),
      });
      await probe.anilist.query.media({ id: 1 });
      expect(diagnostics).toEqual([]);
      const keysByNode = await Promise.all(cluster.nodes.map((node) => keysUnder(node, PREFIX)));
      const holders = cluster.nodes.filter((_node, index) => keysByNode[index].length > 0);
      expect(holders).toHaveLength(1);
      const [holder] = holders;
      const keys = await keysUnder(holder, PREFIX);
      const slots = await Promise.all(keys.map((key) => holder.command('CLUSTER', 'KEYSLOT', key)));
      expect(new Set(slots).size).toBe(1);

      const elsewhere = cluster.nodes.find((node) => node !== holder)?.url as string;
      const fleet = await startFleet({
        size: WORKERS,
        slot: { baseUrl: sim.url, retry: false, sharedState: { ...sharedState, redis: elsewhere } },
      });
      try {
        const { reports } = await fleet.run(splitIds(QUOTA.limit, WORKERS), IN_FLIGHT);
        expect(reports.flatMap((report) => report.failures)).toEqual([]);
        expect(reports.reduce((sum, report) => sum + report.served, 0)).toBe(QUOTA.limit);
        for (const report of reports) expect(report.diagnostics).toEqual([]);
        const states = (await fleet.states()) as { sharedState: string }[];
        for (const state of states) expect(state.sharedState).toBe('redis');
      } finally {
        await fleet.close();
      }
      expect(sim.stats().rateLimited).toBe(0);
      expect(await keysUnder(holder, PREFIX)).toEqual(keys);
    } finally {
      await sim.close();
    }
  }, 60_000);

  it('a fleet-wide response cache: its scope on one slot, shared through the node that holds it', async () => {
    const upstream = await startTestServer();
    upstream.handle((request) => {
      const { id } = (request.json as { variables: { id: number } }).variables;
      return { body: { data: { Media: { id } } } };
    });
    const prefix = 'cluster-cache';
    const index = `${prefix}:{anilist:${upstream.host}:cache}:index`;
    // The node that answers for the scope's key (the others answer MOVED); the fleet is given another.
    const holds = async (node: RedisServer) =>
      node.command('EXISTS', index).then(
        () => true,
        () => false,
      );
    const owners = await Promise.all(cluster.nodes.map(holds));
    const holder = cluster.nodes[owners.indexOf(true)];
    const elsewhere = cluster.nodes[owners.indexOf(false)];
    const fleet = await startFleet({
      size: WORKERS,
      slot: {
        baseUrl: upstream.url,
        retry: false,
        sharedState: { redis: elsewhere.url, keyPrefix: prefix, timeoutMs: REDIS_TIMEOUT_MS },
        responseCache: { ttlMs: 60_000, shared: true },
      },
    });
    try {
      const ids = [1, 2, 3];
      const first = await fleet.run([ids, []], 1);
      const second = await fleet.run([[], ids], 1);
      for (const { reports } of [first, second]) {
        expect(reports.flatMap((report) => report.failures)).toEqual([]);
        for (const report of reports) expect(report.diagnostics).toEqual([]);
      }
      expect(upstream.requests).toHaveLength(ids.length);
      const cacheKeys = (await keysUnder(holder, prefix)).filter((key) => key.includes(':cache}'));
      expect(cacheKeys).toHaveLength(3);
      const slots = await Promise.all(cacheKeys.map((key) => holder.command('CLUSTER', 'KEYSLOT', key)));
      expect(new Set(slots).size).toBe(1);
    } finally {
      await fleet.close();
      await upstream.close();
    }
  }, 60_000);
});
