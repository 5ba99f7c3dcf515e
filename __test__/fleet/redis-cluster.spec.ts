// Shared state on a Redis Cluster (issue 36): three masters started here (`--cluster-enabled yes`,
// joined by `redis-cli --cluster create`). A scope's keys share one hash slot (their hash tag),
// and a fleet given a node that does not hold it follows the cluster's MOVED answer to the one
// that does: calls shared, none failed, no 429. With a replica per master, the master holding
// the scope (the very node the fleet was given) is killed mid-run: the fleet rides out the
// failover on its shares (D39 c) while no node serves the slot, then finds the promoted replica
// through the nodes it learned from the cluster: no call failed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyCachedAgents } from 'anilink-api-wrapper';
import { failOverMidRun, shareThroughAnotherNode } from '../support/cluster-scenarios';
import { startFleet, readThenReadAgainElsewhere } from '../support/fleet';
import { type RedisCluster, type RedisServer, keysUnder, startRedisCluster } from '../support/redis-server';
import { startTestServer } from '../support/test-server';

const WORKERS = 2;
const REDIS_TIMEOUT_MS = 2_000;

let cluster: RedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster(3);
}, 45_000);
afterAll(async () => {
  destroyCachedAgents();
  await cluster?.stop();
});

describe('sharedState on a Redis Cluster', () => {
  it('the scope on one slot of one node; a fleet given another node shares through the one holding it', async () => {
    await shareThroughAnotherNode({ cluster, urlOf: (node) => node.url }, 'cluster');
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

describe('sharedState on a Redis Cluster with replicas: the master holding the scope fails', () => {
  let replicated: RedisCluster;
  beforeAll(async () => {
    // A master silent for 500 ms is replaced by its replica.
    replicated = await startRedisCluster(3, { replicas: 1, nodeTimeoutMs: 500 });
  }, 45_000);
  afterAll(async () => {
    await replicated?.stop();
  });

  it('killed mid-run, the fleet given its URL: no call fails, the fleet follows the promoted replica', async () => {
    await failOverMidRun({ cluster: replicated, urlOf: (node) => node.url }, 'failover');
  }, 60_000);
});
