/**
 * A real `redis-server` for the shared-state tests (the demo's launcher, demo/redis-server.mjs,
 * under typed names): a free port on 127.0.0.1, a temporary directory, no persistence; killed
 * and restarted on the same port for the outage tests.
 */
import { startRedisCluster as startCluster, startRedisServer as start } from '../../demo/redis-server.mjs';

export interface RedisServer {
  /** The port clients dial (the TLS port of a TLS-only server). */
  readonly port: number;
  /**
   * `redis://127.0.0.1:<port>` (no password in it, even when the server has one);
   * `rediss://…` for a TLS-only server.
   */
  readonly url: string;
  /** With the `tls` option: the TLS port and `rediss://127.0.0.1:<tlsPort>`. */
  readonly tlsPort?: number;
  readonly tlsUrl?: string;
  /** One command; resolves to the reply (string, number, null or array), rejects on a Redis error. */
  command(...args: string[]): Promise<unknown>;
  /** SIGKILL the server: the port refuses connections until `restart()`. */
  kill(): Promise<void>;
  /** Start it again on the same port, empty. */
  restart(): Promise<void>;
  /** Kill it and remove its directory. */
  stop(): Promise<void>;
}

export function startRedisServer(
  options: {
    port?: number;
    password?: string;
    /** `only`: TLS only (the CA's `caFile` then required); otherwise a TLS port besides the plain one. */
    tls?: { keyFile: string; certFile: string; caFile?: string; only?: boolean };
    cluster?: boolean;
    clusterNodeTimeoutMs?: number;
  } = {},
): Promise<RedisServer> {
  return start(options) as Promise<RedisServer>;
}

export interface RedisCluster {
  /** Every server of the cluster, masters and replicas, each in cluster mode. */
  readonly nodes: RedisServer[];
  stop(): Promise<void[]>;
}

/**
 * A Redis Cluster of `masters` masters (at least 3) on 127.0.0.1, each with `replicas` replicas,
 * ready to serve every slot; `nodeTimeoutMs` (`cluster-node-timeout`) bounds how long a dead
 * master goes unnoticed before its replica takes over. With `tls`, every node speaks TLS only
 * (`tls-cluster`, `tls-replication`) with that key and certificate, trusting that CA.
 */
export function startRedisCluster(
  masters = 3,
  options: {
    replicas?: number;
    nodeTimeoutMs?: number;
    tls?: { keyFile: string; certFile: string; caFile: string };
  } = {},
): Promise<RedisCluster> {
  return startCluster(masters, options) as Promise<RedisCluster>;
}

/** The keys under `prefix` (`KEYS`, fine for a test server holding a handful). */
export async function keysUnder(redis: RedisServer, prefix: string): Promise<string[]> {
  const keys = (await redis.command('KEYS', `${prefix}:*`)) as string[];
  return keys.sort();
}
