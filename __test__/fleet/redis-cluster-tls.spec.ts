// Redis Cluster over TLS (issue 36): 3 masters and 3 replicas that speak only TLS, to clients and
// to each other (`port 0`, `tls-port`, `tls-cluster yes`, `tls-replication yes`), certified by a
// test CA made for this run, the workers trusting it through NODE_EXTRA_CA_CERTS. The certificate
// names only `localhost` and the fleet is given `rediss://localhost:<port>`, while the cluster
// announces its nodes as 127.0.0.1 (MOVED, CLUSTER SLOTS), as managed clusters announce IP
// addresses under one certified name: the nodes learned that way are verified for the URL's host.
// The scenarios are the plain cluster's (support/cluster-scenarios.ts), on one cluster: shared
// admission through another node first, then the scope's master killed mid-run.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type ClusterAccess, failOverMidRun, shareThroughAnotherNode } from '../support/cluster-scenarios';
import { type RedisCluster, startRedisCluster } from '../support/redis-server';
import { type TestCertificates, makeTestCertificates } from '../support/test-tls';

let certificates: TestCertificates;
let cluster: RedisCluster;
let access: ClusterAccess;
beforeAll(async () => {
  certificates = makeTestCertificates('DNS:localhost');
  cluster = await startRedisCluster(3, { replicas: 1, nodeTimeoutMs: 500, tls: certificates });
  access = {
    cluster,
    urlOf: (node) => `rediss://localhost:${node.port}`,
    env: { NODE_EXTRA_CA_CERTS: certificates.caFile },
  };
}, 45_000);
afterAll(async () => {
  await cluster?.stop();
  certificates?.remove();
});

describe('sharedState on a TLS-only Redis Cluster', () => {
  it('a fleet given another node by host name shares through the holder the cluster names by address', async () => {
    await shareThroughAnotherNode(access, 'tls-cluster');
  }, 60_000);

  it('the master holding the scope killed mid-run: no call fails, the fleet follows the promoted replica over TLS', async () => {
    await failOverMidRun(access, 'tls-failover');
  }, 60_000);
});
