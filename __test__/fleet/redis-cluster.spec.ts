// Shared state on a Redis Cluster (issue 36): three masters started here (`--cluster-enabled yes`,
// joined by `redis-cli --cluster create`). A scope's keys share one hash slot (their hash tag),
// and a fleet given a node that does not hold it follows the cluster's MOVED answer to the one
// that does: calls shared, none failed, no 429. With a replica per master, the master holding
// the scope (the very node the fleet was given) is killed mid-run: the fleet rides out the
// failover on its shares (D39 c) while no node serves the slot, then finds the promoted replica
// through the nodes it learned from the cluster: no call failed.
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
import { type RedisCluster, type RedisServer, keysUnder, startRedisCluster } from '../support/redis-server';
import { startQuotaUpstream, startTestServer } from '../support/test-server';

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
      await readThenReadAgainElsewhere(fleet, ids, 1);
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

/** Whether `node` is a master now (`ROLE`; a replica promoted by a failover is one). */
async function isMaster(node: RedisServer): Promise<boolean> {
  const [role] = (await node.command('ROLE')) as string[];
  return role === 'master';
}

/** Poll `condition` every 50 ms until it holds; fail after `timeoutMs`. */
async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('sharedState on a Redis Cluster with replicas: the master holding the scope fails', () => {
  /** 3 masters, a replica each; a master silent for this long is replaced by its replica. */
  const NODE_TIMEOUT_MS = 500;
  const FLEET = 4;
  const FLEET_IN_FLIGHT = 8;
  /** Fewer than the 32 calls the fleet puts in flight; three windows of work. */
  const TIGHT_QUOTA = { limit: 30, windowMs: 3_000 };
  const JOBS = 3 * TIGHT_QUOTA.limit;
  const prefix = 'failover';
  let replicated: RedisCluster;
  beforeAll(async () => {
    replicated = await startRedisCluster(3, { replicas: 1, nodeTimeoutMs: NODE_TIMEOUT_MS });
  }, 30_000);
  afterAll(async () => {
    await replicated?.stop();
  });

  it('killed mid-run, the fleet given its URL: no call fails, the fleet follows the promoted replica', async () => {
    // A quota that reports its reset on every answer (as MAL does), counted here: a window's
    // end is then known to every copy of the state, whichever writes the failover lost.
    const { upstream, refused } = await startQuotaUpstream(TIGHT_QUOTA, 1);
    try {
      const masters: RedisServer[] = [];
      for (const node of replicated.nodes) if (await isMaster(node)) masters.push(node);
      // One call of this process puts the scope on its slot's master: the fleet is given that
      // node's URL, the one that fails (the other nodes it learns from the cluster itself).
      const probe = new AniLink(undefined, {
        baseUrl: upstream.url,
        retry: false,
        sharedState: { redis: masters[0].url, keyPrefix: prefix },
      });
      await probe.anilist.query.media({ id: 1 });
      const holders: RedisServer[] = [];
      for (const node of masters) if ((await keysUnder(node, prefix)).length > 0) holders.push(node);
      expect(holders).toHaveLength(1);
      const [holder] = holders;
      const keys = await keysUnder(holder, prefix);

      const sharedState = { redis: holder.url, keyPrefix: prefix };
      const fleet = await startFleet({ size: FLEET, slot: { baseUrl: upstream.url, sharedState } });
      try {
        const running = fleet.run(splitIds(JOBS, FLEET), FLEET_IN_FLIGHT);
        await waitFor(() => upstream.requests.length >= 10, 10_000);
        await holder.kill();
        const { reports } = await running;
        expect(reports.flatMap((report: WorkerReport) => report.failures)).toEqual([]);
        expect(reports.reduce((sum, report) => sum + report.served, 0)).toBe(JOBS);
        // Mostly 0. A failover that meets the end of a window can cost what is in flight then:
        // each process falls back on its share as of its last read of the fleet's state, and
        // the promoted replica may miss the failed master's last writes (README, "Where a
        // fleet can still overrun"). Retried, they cost no call.
        expect(refused()).toBeLessThanOrEqual(FLEET * FLEET_IN_FLIGHT);

        // The scope lives on the promoted replica now, and every worker decides there again.
        const survivors = replicated.nodes.filter((node) => node !== holder);
        let promoted: RedisServer | undefined;
        await waitFor(async () => {
          for (const node of survivors)
            if (!masters.includes(node) && (await isMaster(node)) && (await keysUnder(node, prefix)).length > 0)
              promoted = node;
          return promoted !== undefined;
        }, 10_000);
        expect(await keysUnder(promoted as RedisServer, prefix)).toEqual(keys);
        await waitFor(async () => {
          await fleet.run(splitIds(FLEET, FLEET), 1);
          const states = (await fleet.states()) as { sharedState: string }[];
          return states.every((state) => state.sharedState === 'redis');
        }, 10_000);
      } finally {
        await fleet.close();
      }
    } finally {
      await upstream.close();
    }
  }, 60_000);
});
