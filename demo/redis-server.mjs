/**
 * A throwaway `redis-server` on 127.0.0.1 for the fleet demo and the shared-state tests: a free
 * port, a temporary directory, no persistence (`--save '' --appendonly no`), ready once it
 * answers PING. `kill()` and `restart()` keep the port, so a client configured with the URL sees
 * an outage and then the same server back (empty, as after a real restart without persistence).
 *
 *   const redis = await startRedisServer();
 *   new AniLink({ anilist: { sharedState: { redis: redis.url } } });
 *   await redis.command('KEYS', '*');
 *   await redis.stop();
 *
 * With `tls` (PEM files of a key and a certificate), it also listens for TLS on `tlsPort`
 * (`tlsUrl`, clients need no certificate of their own); `command()` keeps using the plain port.
 * With `tls.only` (and the CA's `caFile`) it listens for TLS only: `port` is the TLS port, `url`
 * a `rediss://` URL, and `command()` speaks TLS; cluster nodes then talk TLS to each other too.
 * `startRedisCluster()` starts several in cluster mode and joins them into one Redis Cluster.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const HOST = '127.0.0.1';
// A cluster's nodes agree on its state in well under a second when the machine is idle, but
// several seconds on 2 busy cores (a TLS cluster's gossip included): the wait ends when they do.
const READY_TIMEOUT_MS = 25_000;
const READY_POLL_MS = 25;

/** The server binary: `redis-server` on the PATH unless `ANILINK_REDIS_SERVER` names another. */
function redisServerBinary() {
  return process.env.ANILINK_REDIS_SERVER ?? 'redis-server';
}

/** The client binary, for `--cluster create`: `redis-cli` on the PATH unless `ANILINK_REDIS_CLI` names another. */
function redisCliBinary() {
  return process.env.ANILINK_REDIS_CLI ?? 'redis-cli';
}

async function freePort() {
  const probe = net.createServer();
  await new Promise((resolve) => probe.listen(0, HOST, resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * Send one command (after an AUTH when `password` is given, on the same connection) and read
 * its reply (RESP2): enough for PING, KEYS, PTTL, GET and friends. With `ca` (PEM), over TLS:
 * the chain is verified, not the name (the client under test is what checks names).
 * @param {number} port
 * @param {string[]} args
 * @param {{ password?: string, timeoutMs?: number, ca?: Buffer }} [options]
 * @returns {Promise<unknown>} strings, integers, null, arrays; a Redis error rejects
 */
export function redisCommand(port, args, { password, timeoutMs = 2_000, ca } = {}) {
  const commands = password === undefined ? [args] : [['AUTH', password], args];
  return new Promise((resolve, reject) => {
    const socket =
      ca === undefined
        ? net.connect({ host: HOST, port })
        : tls.connect({ host: HOST, port, ca, checkServerIdentity: () => undefined });
    let buffered = Buffer.alloc(0);
    const fail = (error) => {
      socket.destroy();
      reject(error);
    };
    socket.setTimeout(timeoutMs, () =>
      fail(new Error(`redis ${args[0]} on port ${port}: no answer in ${timeoutMs} ms`)),
    );
    socket.on('error', fail);
    socket.on(ca === undefined ? 'connect' : 'secureConnect', () => {
      const parts = [];
      for (const command of commands) {
        parts.push(`*${command.length}\r\n`);
        for (const arg of command) parts.push(`$${Buffer.byteLength(arg)}\r\n${arg}\r\n`);
      }
      socket.write(parts.join(''));
    });
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      const replies = [];
      for (let offset = 0; replies.length < commands.length; ) {
        const parsed = parseReply(buffered, offset);
        if (parsed === undefined) return;
        replies.push(parsed.value);
        offset = parsed.next;
      }
      socket.end();
      const failed = replies.find((reply) => reply instanceof Error);
      if (failed === undefined) resolve(replies.at(-1));
      else reject(failed);
    });
  });
}

/** One RESP2 reply starting at `offset`, or undefined when more bytes are needed. */
function parseReply(buffer, offset) {
  const lineEnd = buffer.indexOf('\r\n', offset);
  if (lineEnd === -1) return undefined;
  const type = String.fromCharCode(buffer[offset]);
  const line = buffer.toString('utf8', offset + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case '+':
      return { value: line, next };
    case '-':
      return { value: new Error(`redis: ${line}`), next };
    case ':':
      return { value: Number(line), next };
    case '$': {
      const length = Number(line);
      if (length === -1) return { value: null, next };
      if (buffer.length < next + length + 2) return undefined;
      return { value: buffer.toString('utf8', next, next + length), next: next + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count === -1) return { value: null, next };
      const items = [];
      let position = next;
      for (let index = 0; index < count; index += 1) {
        const item = parseReply(buffer, position);
        if (item === undefined) return undefined;
        items.push(item.value);
        position = item.next;
      }
      return { value: items, next: position };
    }
    default:
      return { value: new Error(`redis: unexpected reply type ${JSON.stringify(type)}`), next };
  }
}

/**
 * Start `redis-server` on a free port (or `port`) in a new temporary directory.
 * @param {{ port?: number, password?: string, tls?: { keyFile: string, certFile: string, caFile?: string, only?: boolean }, cluster?: boolean, clusterNodeTimeoutMs?: number }} [options]
 *   `password` sets `requirepass`; `tls` adds a TLS port (`tls.only`: TLS only, `caFile` required);
 *   `cluster` starts it in cluster mode (no slots yet),
 *   with `cluster-node-timeout` set to `clusterNodeTimeoutMs` when given
 */
export async function startRedisServer(options = {}) {
  const tlsOnly = options.tls?.only === true;
  const port = options.port ?? (await freePort());
  const tlsPort = options.tls === undefined ? undefined : tlsOnly ? port : await freePort();
  // Its own port for the cluster bus: the default (port + 10000) is refused above 55535.
  const clusterPort = options.cluster ? await freePort() : undefined;
  const ca = tlsOnly ? readFileSync(options.tls.caFile) : undefined;
  const dir = await mkdtemp(join(tmpdir(), 'anilink-redis-'));
  let child;

  /** One command to this server (authenticated when it has a password). */
  const command = (...args) => redisCommand(port, args, { password: options.password, ca });

  const launch = async () => {
    const args = ['--port', tlsOnly ? '0' : String(port), '--bind', HOST, '--dir', dir];
    args.push('--save', '', '--appendonly', 'no');
    if (options.password !== undefined) args.push('--requirepass', options.password);
    if (options.tls !== undefined) {
      const { keyFile, certFile, caFile } = options.tls;
      args.push('--tls-port', String(tlsPort), '--tls-key-file', keyFile, '--tls-cert-file', certFile);
      args.push('--tls-auth-clients', 'no');
      if (tlsOnly) args.push('--tls-ca-cert-file', caFile, '--tls-cluster', 'yes', '--tls-replication', 'yes');
    }
    if (options.cluster) {
      args.push('--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf');
      args.push('--cluster-port', String(clusterPort));
    }
    if (options.clusterNodeTimeoutMs !== undefined)
      args.push('--cluster-node-timeout', String(options.clusterNodeTimeoutMs));
    child = spawn(redisServerBinary(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text) => {
      stderr += text;
    });
    const spawned = once(child, 'spawn').then(
      () => undefined,
      (error) => {
        throw new Error(`could not start ${redisServerBinary()} (install redis-server): ${error.message}`);
      },
    );
    await spawned;
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}: ${stderr.trim()}`);
      try {
        const reply = await redisCommand(port, ['PING'], { password: options.password, timeoutMs: 500, ca });
        if (reply === 'PONG') return;
      } catch {
        // Not listening yet.
      }
      if (Date.now() > deadline)
        throw new Error(`redis-server on port ${port} did not answer PING in ${READY_TIMEOUT_MS} ms`);
      await sleep(READY_POLL_MS);
    }
  };

  const kill = async () => {
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  };

  await launch();
  return {
    port,
    url: `${tlsOnly ? 'rediss' : 'redis'}://${HOST}:${port}`,
    tlsPort,
    tlsUrl: tlsPort === undefined ? undefined : `rediss://${HOST}:${tlsPort}`,
    command,
    /** SIGKILL the server (an outage: the port refuses connections until `restart()`). */
    kill,
    /** Start it again on the same port (empty: nothing was persisted). */
    restart: async () => {
      await kill();
      await launch();
    },
    /** Kill it and remove its directory. */
    stop: async () => {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `masters` servers in cluster mode joined into one Redis Cluster, the slots spread by
 * `redis-cli --cluster create`, each master with `replicas` replicas (another server each);
 * ready once every node reports `cluster_state:ok` and every replica is in sync with its
 * master. `nodeTimeoutMs` (`cluster-node-timeout`) is how long a master may be silent before
 * its replica takes over: short here, so a failover takes about a second or two. With `tls`
 * (key, certificate and CA files), every node speaks TLS only, to clients and to each other.
 * @param {number} [masters] at least 3, as `--cluster create` requires
 * @param {{ replicas?: number, nodeTimeoutMs?: number, tls?: { keyFile: string, certFile: string, caFile: string } }} [options]
 */
export async function startRedisCluster(masters = 3, { replicas = 0, nodeTimeoutMs, tls: certificates } = {}) {
  const nodes = [];
  const stop = () => Promise.all(nodes.map((node) => node.stop()));
  const tlsOptions = certificates === undefined ? undefined : { ...certificates, only: true };
  try {
    for (let index = 0; index < masters * (1 + replicas); index += 1)
      nodes.push(await startRedisServer({ cluster: true, clusterNodeTimeoutMs: nodeTimeoutMs, tls: tlsOptions }));
    const addresses = nodes.map((node) => `${HOST}:${node.port}`);
    const tlsArgs = certificates === undefined ? [] : ['--tls', '--cacert', certificates.caFile];
    await promisify(execFile)(redisCliBinary(), [
      ...tlsArgs,
      '--cluster',
      'create',
      ...addresses,
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
    const deadline = Date.now() + READY_TIMEOUT_MS;
    const ready = async (node) => {
      if (!String(await node.command('CLUSTER', 'INFO')).includes('cluster_state:ok')) return false;
      const replication = String(await node.command('INFO', 'replication'));
      return replication.includes('role:master') || replication.includes('master_link_status:up');
    };
    for (const node of nodes) {
      while (!(await ready(node))) {
        if (Date.now() > deadline) throw new Error(`the cluster was not ready in ${READY_TIMEOUT_MS} ms`);
        await sleep(READY_POLL_MS);
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes, stop };
}
