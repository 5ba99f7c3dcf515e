/**
 * A fleet of worker processes (demo/fleet-worker.mjs) driven from one parent: the `--fleet`
 * demo and the shared-state tests start N of them against one upstream, give each a share of
 * the job at the same moment, and collect what each saw.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';

const WORKER = new URL('./fleet-worker.mjs', import.meta.url);

class FleetWorker {
  #child;
  /** Replies not yet taken, by type (a worker answers each request once, in order). */
  #waiting = new Map();

  constructor(child) {
    this.#child = child;
    child.on('message', (message) => {
      const queue = this.#waiting.get(message.type);
      queue?.shift()?.resolve(message);
    });
    child.once('exit', (code, signal) => {
      const reason = new Error(`fleet worker ${child.pid} exited (${signal ?? code}) before answering`);
      for (const queue of this.#waiting.values()) for (const pending of queue.splice(0)) pending.reject(reason);
    });
  }

  get pid() {
    return this.#child.pid;
  }

  /** Send `message` and resolve with the next reply of type `replyType`. */
  request(message, replyType) {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null)
      return Promise.reject(new Error(`fleet worker ${this.pid} has exited`));
    const reply = new Promise((resolve, reject) => {
      const queue = this.#waiting.get(replyType) ?? [];
      queue.push({ resolve, reject });
      this.#waiting.set(replyType, queue);
    });
    this.#child.send(message);
    return reply;
  }

  send(message) {
    this.#child.send(message);
  }

  /** SIGKILL, as a crash would: nothing is closed or released on the way out. */
  async kill() {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    const exited = once(this.#child, 'exit');
    this.#child.kill('SIGKILL');
    await exited;
  }

  /** Let it close its connections and exit; killed if it has not within `graceMs`. */
  async exit(graceMs = 5_000) {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    const exited = once(this.#child, 'exit');
    const killer = setTimeout(() => this.#child.kill('SIGKILL'), graceMs);
    this.#child.send({ type: 'exit' });
    await exited;
    clearTimeout(killer);
  }
}

/**
 * Start `size` workers, each with the AniList slot options `slot` (plain data: hooks are the
 * worker's own), and wait until every one is ready. `env` is added to the workers' environment
 * (e.g. `NODE_EXTRA_CA_CERTS`, which a process reads when it starts).
 * @param {{ size: number, slot: object, env?: Record<string, string> }} options
 */
export async function startFleet({ size, slot, env = {} }) {
  const workers = Array.from(
    { length: size },
    () =>
      new FleetWorker(
        fork(WORKER, [], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
      ),
  );
  try {
    const replies = await Promise.all(workers.map((worker) => worker.request({ type: 'init', slot }, 'ready')));
    const refused = replies.find((reply) => reply.error !== undefined);
    if (refused !== undefined) throw new Error(`a fleet worker refused its slot options: ${refused.error}`);
  } catch (error) {
    await Promise.all(workers.map((worker) => worker.kill()));
    throw error;
  }
  return {
    workers,
    /**
     * Give worker i the ids `shares[i]` with `concurrency` calls in flight, all at once.
     * @returns {Promise<{ reports: object[], wallMs: number }>}
     */
    async run(shares, concurrency) {
      const startedAt = performance.now();
      const replies = await Promise.all(
        workers.map((worker, index) => worker.request({ type: 'run', ids: shares[index], concurrency }, 'ran')),
      );
      return { reports: replies.map((reply) => reply.report), wallMs: performance.now() - startedAt };
    },
    /** Every worker's transport state for its AniList slot. */
    async states() {
      const replies = await Promise.all(workers.map((worker) => worker.request({ type: 'state' }, 'state')));
      return replies.map((reply) => reply.state);
    },
    /** Let every worker still running exit. */
    close: () => Promise.all(workers.map((worker) => worker.exit())),
  };
}

/** `count` media ids split into `size` interleaved shares (1, 1+size, …; 2, 2+size, …). */
export function splitIds(count, size) {
  return Array.from({ length: size }, (_, worker) =>
    Array.from({ length: Math.ceil((count - worker) / size) }, (_, index) => 1 + worker + index * size),
  );
}

/**
 * The share of a simulator quota a run used. The simulator's window starts with its first
 * request and its reset is announced in whole seconds (rounded up), so a run that keeps the
 * quota busy ends within `windows × windowMs`; each window more is a window's quota left unused.
 * @param {number} served successful answers
 * @param {number} wallMs
 * @param {{ limit: number, windowMs: number }} quota
 */
export function quotaUsed(served, wallMs, quota) {
  const windows = Math.max(1, Math.ceil(wallMs / quota.windowMs));
  return served / (windows * quota.limit);
}
