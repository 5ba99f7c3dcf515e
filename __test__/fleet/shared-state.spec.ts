// A fleet of worker processes sharing one AniList quota through a real redis-server (issue 15,
// the `sharedState` slot option): admission is fleet-wide (no 429 where unshared workers earn
// them), a Redis outage costs no call and ends in a rejoin, a crashed worker's reservations
// expire after `leaseMs`, different tokens never share, and an unreachable Redis costs nothing.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AniLink, destroyCachedAgents } from 'anilink-api-wrapper';
import { startSimulator } from '../../sim/anilist-simulator.mjs';
import { type DiagnosticRecord, type WorkerReport, quotaUsed, splitIds, startFleet } from '../support/fleet';
import { closedPort } from '../support/helpers';
import { startLatencyProxy } from '../support/latency-proxy';
import { type RedisServer, keysUnder, startRedisServer } from '../support/redis-server';
import { rateLimitHeaders, startQuotaUpstream, startTestServer } from '../support/test-server';

const WORKERS = 4;
const IN_FLIGHT = 8;
/**
 * More than the 32 calls the fleet puts in flight before anyone has seen a quota header (so the
 * first window cannot overrun either way), and small enough that the job spans two windows.
 */
const QUOTA = { limit: 40, windowMs: 4_000 };
/** Two windows' worth: the run ends at a window boundary, so "quota used" is exact. */
const JOBS = 2 * QUOTA.limit;
/** Generous on 2 loaded cores: a Redis answer slower than this would decide locally and could overrun. */
const REDIS_TIMEOUT_MS = 1_000;

/** Fewer than the 32 calls the fleet puts in flight at once (decisions D39). */
const TIGHT_QUOTA = { limit: 30, windowMs: 3_000 };

const UNAVAILABLE = 'SHARED_STATE_UNAVAILABLE';
const REJOINED = 'SHARED_STATE_REJOINED';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  destroyCachedAgents();
  await redis?.stop();
});

function withCode(diagnostics: DiagnosticRecord[], code: string): DiagnosticRecord[] {
  return diagnostics.filter((record) => record.code === code);
}

function totals(reports: WorkerReport[]) {
  return {
    served: reports.reduce((sum, report) => sum + report.served, 0),
    failures: reports.flatMap((report) => report.failures),
  };
}

/** A worker's transport state, as far as these tests read it. */
type AdmissionOnly = { admission: { otherClients: boolean; learnedLimit: number | null }[] };

async function runFleet(slot: Record<string, unknown>, baseUrl: string) {
  const fleet = await startFleet({ size: WORKERS, slot: { baseUrl, retry: false, ...slot } });
  try {
    return await fleet.run(splitIds(JOBS, WORKERS), IN_FLIGHT);
  } finally {
    await fleet.close();
  }
}

describe('sharedState: a fleet of processes on one quota', () => {
  it(`${WORKERS} workers × ${IN_FLIGHT} in flight: no 429 and the quota used up with Redis, 429s without`, async () => {
    const sim = await startSimulator({ quota: QUOTA });
    try {
      const sharedState = { redis: redis.url, keyPrefix: 'fleet-a', timeoutMs: REDIS_TIMEOUT_MS };
      const shared = await runFleet({ sharedState }, sim.url);
      const sharedStats = sim.stats();
      const sharedTotals = totals(shared.reports);
      expect(sharedTotals.failures).toEqual([]);
      expect(sharedTotals.served).toBe(JOBS);
      expect(sharedStats.rateLimited).toBe(0);
      expect(sharedStats.requests).toBe(JOBS);
      expect(quotaUsed(sharedTotals.served, shared.wallMs, QUOTA)).toBeGreaterThanOrEqual(0.9);
      for (const report of shared.reports) expect(report.diagnostics).toEqual([]);
      expect(await keysUnder(redis, 'fleet-a')).not.toEqual([]);

      // The same run, each worker on its own: together they overrun the quota. Each sees the
      // others' requests counted on the token (D43), so its 429s teach no limit and the
      // one-at-a-time step past 30 (D42) holds nothing back.
      sim.script.reset();
      const aloneFleet = await startFleet({ size: WORKERS, slot: { baseUrl: sim.url, retry: false } });
      try {
        const alone = await aloneFleet.run(splitIds(JOBS, WORKERS), IN_FLIGHT);
        expect(sim.stats().rateLimited).toBeGreaterThan(0);
        expect(totals(alone.reports).failures.some((failure) => failure.status === 429)).toBe(true);
        const states = (await aloneFleet.states()) as AdmissionOnly[];
        const hosts = states.map((state) => state.admission[0]);
        expect(hosts.filter((host) => host.otherClients).length).toBeGreaterThan(0);
        for (const host of hosts) expect(host.learnedLimit).toBeNull();
      } finally {
        await aloneFleet.close();
      }
    } finally {
      await sim.close();
    }
  }, 60_000);

  it(`${WORKERS} × ${IN_FLIGHT} in flight started together against ${TIGHT_QUOTA.limit} per 3 s, default timeoutMs: no 429`, async () => {
    const sim = await startSimulator({ quota: TIGHT_QUOTA });
    try {
      const { reports } = await runFleet({ sharedState: { redis: redis.url, keyPrefix: 'fleet-e' } }, sim.url);
      const { served, failures } = totals(reports);
      expect(failures).toEqual([]);
      expect(served).toBe(JOBS);
      expect(sim.stats()).toMatchObject({ rateLimited: 0, requests: JOBS });
    } finally {
      await sim.close();
    }
  }, 60_000);

  it('4 × 8 in flight beside two CPU-bound processes (both cores busy), default timeoutMs: no 429', async () => {
    const sim = await startSimulator({ quota: TIGHT_QUOTA });
    const busy = [startBusyLoop(), startBusyLoop()];
    try {
      const { reports } = await runFleet({ sharedState: { redis: redis.url, keyPrefix: 'fleet-h' } }, sim.url);
      const { served, failures } = totals(reports);
      expect(failures).toEqual([]);
      expect(served).toBe(JOBS);
      expect(sim.stats()).toMatchObject({ rateLimited: 0, requests: JOBS });
    } finally {
      await Promise.all(busy.map(stopBusyLoop));
      await sim.close();
    }
  }, 90_000);

  it('Redis 150 ms away (a latency proxy), default timeoutMs: still shared, no 429', async () => {
    const sim = await startSimulator({ quota: TIGHT_QUOTA });
    const far = await startLatencyProxy(redis.port, 150);
    try {
      const sharedState = { redis: `redis://127.0.0.1:${far.port}`, keyPrefix: 'fleet-f' };
      const fleet = await startFleet({ size: WORKERS, slot: { baseUrl: sim.url, retry: false, sharedState } });
      try {
        const { reports } = await fleet.run(splitIds(TIGHT_QUOTA.limit, WORKERS), IN_FLIGHT);
        expect(totals(reports)).toEqual({ served: TIGHT_QUOTA.limit, failures: [] });
        expect(sim.stats().rateLimited).toBe(0);
        for (const report of reports) expect(withCode(report.diagnostics, UNAVAILABLE)).toEqual([]);
      } finally {
        await fleet.close();
      }
    } finally {
      await far.close();
      await sim.close();
    }
  }, 90_000);

  it('Redis gone mid-job: each worker admits only its share of the quota, no 429', async () => {
    // A quota that reports its reset on every answer (as MAL does), so every worker, alone,
    // knows when the window ends; counted here, 429 beyond it.
    const { upstream, refused } = await startQuotaUpstream(TIGHT_QUOTA, 3);
    const sharedState = { redis: redis.url, keyPrefix: 'fleet-g' };
    const fleet = await startFleet({ size: WORKERS, slot: { baseUrl: upstream.url, retry: false, sharedState } });
    try {
      // Shared first: the fleet learns the quota and its workers; then one call each, so every
      // worker's last read of the fleet's state counts all of them (a worker counts the
      // processes it saw in its last read: one that went idle earlier would count fewer).
      const first = await fleet.run(splitIds(WORKERS * 2, WORKERS), IN_FLIGHT);
      expect(totals(first.reports).failures).toEqual([]);
      const settled = await fleet.run(splitIds(WORKERS, WORKERS), 1);
      expect(totals(settled.reports).failures).toEqual([]);
      await redis.kill();
      // Alone, each worker would take everything the quota has left; its share is a quarter.
      const alone = await fleet.run(splitIds(2 * TIGHT_QUOTA.limit, WORKERS), IN_FLIGHT);
      expect(totals(alone.reports).failures).toEqual([]);
      expect(refused()).toBe(0);
      const states = (await fleet.states()) as { sharedState: string }[];
      for (const state of states) expect(state.sharedState).toBe('local-fallback');
    } finally {
      await redis.restart();
      await fleet.close();
      await upstream.close();
    }
  }, 90_000);

  it('Redis killed mid-run and restarted: no call fails, one diagnostic each way per worker, then shared again', async () => {
    const sim = await startSimulator({ quota: QUOTA });
    const prefix = 'fleet-b';
    const fleet = await startFleet({
      size: WORKERS,
      slot: {
        baseUrl: sim.url,
        retry: false,
        sharedState: { redis: redis.url, keyPrefix: prefix, timeoutMs: REDIS_TIMEOUT_MS },
      },
    });
    try {
      // A steady trickle under the quota (one call per worker every ~half second), so the outage
      // meets calls in flight but no admission wait could hide a failure.
      const steady = fleet.workers.map((worker) =>
        worker.request({ type: 'steady', concurrency: 1, pauseMs: 500 }, 'ran'),
      );
      await waitFor(async () => (await keysUnder(redis, prefix)).length > 0, 5_000);
      await redis.kill();
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      await redis.restart();
      await waitFor(async () => (await keysUnder(redis, prefix)).length > 0, 5_000);
      // Rejoining is retried at most about once a second: every worker has had its chance after 3 s.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      for (const worker of fleet.workers) worker.send({ type: 'stop' });
      const reports = (await Promise.all(steady)).map((reply) => reply.report as WorkerReport);

      expect(totals(reports).failures).toEqual([]);
      for (const report of reports) {
        expect(report.served).toBeGreaterThan(5);
        expect(withCode(report.diagnostics, UNAVAILABLE)).toHaveLength(1);
        expect(withCode(report.diagnostics, REJOINED)).toHaveLength(1);
        expect(report.diagnostics.findIndex((record) => record.code === UNAVAILABLE)).toBeLessThan(
          report.diagnostics.findIndex((record) => record.code === REJOINED),
        );
      }

      // Shared again: the state is back in Redis with an expiry, every worker says so, and all
      // follow one admission window (alone, each would derive its own end from the moment of
      // its own first answer; the counts may differ by the last update each one read).
      const keys = await keysUnder(redis, prefix);
      expect(keys).not.toEqual([]);
      for (const key of keys) expect(await redis.command('PTTL', key)).toBeGreaterThan(0);
      const states = (await fleet.states()) as { sharedState: string; admission: { windowEndsAt: number }[] }[];
      const windowEnds = states.map((state) => state.admission.map((host) => host.windowEndsAt));
      for (const [index, state] of states.entries()) {
        expect(state.sharedState).toBe('redis');
        expect(windowEnds[index]).toHaveLength(1);
        expect(windowEnds[index]).toEqual(windowEnds[0]);
      }
    } finally {
      await fleet.close();
      await sim.close();
    }
  }, 60_000);

  it('a worker SIGKILLed holding reservations blocks the others no longer than leaseMs', async () => {
    const upstream = await startTestServer();
    const leaseMs = 1_500;
    const sharedState = { redis: redis.url, keyPrefix: 'fleet-c', timeoutMs: REDIS_TIMEOUT_MS, leaseMs };
    const fleet = await startFleet({ size: 1, slot: { baseUrl: upstream.url, retry: false, sharedState } });
    const survivor = new AniLink(undefined, { baseUrl: upstream.url, retry: false, sharedState });
    try {
      // The quota as the fleet learns it: 8 left of 10. Then the doomed worker's 8 calls hang, so
      // its reservations take everything that is left.
      let answered = 0;
      upstream.handle(() => {
        answered += 1;
        if (answered === 1 || answered > 1 + IN_FLIGHT)
          return { body: { data: { Media: { id: 1 } } }, headers: rateLimitHeaders(10, 8) };
        return { hang: true };
      });
      const [doomed] = fleet.workers;
      await doomed.request({ type: 'run', ids: [1], concurrency: 1 }, 'ran');
      doomed.send({ type: 'run', ids: Array.from({ length: IN_FLIGHT }, () => 1), concurrency: IN_FLIGHT });
      await upstream.waitForRequests(1 + IN_FLIGHT, 10_000);
      const heldSince = performance.now();
      await doomed.kill();

      await survivor.anilist.query.media({ id: 1 });
      const waitedMs = performance.now() - heldSince;
      // It waited for the leases (the reservations were shared), and not much longer.
      expect(waitedMs).toBeGreaterThanOrEqual(leaseMs - 250);
      expect(waitedMs).toBeLessThan(leaseMs + 3_000);
      expect(upstream.requests).toHaveLength(2 + IN_FLIGHT);
    } finally {
      await fleet.close();
      await upstream.close();
    }
  }, 30_000);

  it('two slots with different tokens do not share: different keys, each its own quota', async () => {
    const upstream = await startTestServer();
    const sharedState = { redis: redis.url, keyPrefix: 'fleet-d', timeoutMs: REDIS_TIMEOUT_MS };
    try {
      // Token A's quota is spent until a reset far away; token B's is not.
      const resetInAMinute = Math.ceil(Date.now() / 1000) + 60;
      upstream.handle((request) => {
        const spent = request.headers.authorization === 'Bearer token-a';
        return {
          body: { data: { Media: { id: 1 } } },
          headers: spent ? rateLimitHeaders(10, 0, resetInAMinute) : rateLimitHeaders(10, 9),
        };
      });
      const a = new AniLink('token-a', { baseUrl: upstream.url, retry: false, sharedState });
      const b = new AniLink('token-b', { baseUrl: upstream.url, retry: false, sharedState });
      await a.anilist.query.media({ id: 1 });
      await b.anilist.query.media({ id: 1 });
      // B is not held back by A's spent quota…
      const startedAt = performance.now();
      await b.anilist.query.media({ id: 2 });
      expect(performance.now() - startedAt).toBeLessThan(1_000);
      // …while another client on token A shares A's: it waits (aborted here after 300 ms).
      const sameTokenAsA = new AniLink('token-a', { baseUrl: upstream.url, retry: false, sharedState });
      const held = await sameTokenAsA.anilist.query.media({ id: 3 }, { signal: AbortSignal.timeout(300) }).then(
        () => undefined,
        (error: { abortedDuringPacing?: boolean }) => error,
      );
      expect(held?.abortedDuringPacing).toBe(true);

      const keys = await keysUnder(redis, 'fleet-d');
      const scopes = new Set(keys.map((key) => /\{[^}]*\}/.exec(key)?.[0]));
      expect(scopes.size).toBe(2);
      for (const key of keys) expect(key).not.toMatch(/token-[ab]/);
    } finally {
      await upstream.close();
    }
  });

  it('an unreachable Redis from the start: calls succeed, one diagnostic, no password in it', async () => {
    const upstream = await startTestServer();
    const diagnostics: DiagnosticRecord[] = [];
    try {
      const port = await closedPort();
      const aniLink = new AniLink(undefined, {
        baseUrl: upstream.url,
        sharedState: { redis: `redis://worker:hunter2@127.0.0.1:${port}` },
        diagnostics: 'hook',
        onHookError: (_name, error) => diagnostics.push((error as { diagnostic: DiagnosticRecord }).diagnostic),
      });
      // Spread over more than a second, so retries of the connection have happened meanwhile.
      for (let id = 1; id <= 6; id++) {
        await expect(aniLink.anilist.query.media({ id })).resolves.toBeDefined();
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(withCode(diagnostics, UNAVAILABLE)).toHaveLength(1);
      expect(diagnostics).toHaveLength(1);
      expect(diagnostics[0].message).toContain(`127.0.0.1:${port}`);
      expect(JSON.stringify(diagnostics)).not.toContain('hunter2');
    } finally {
      await upstream.close();
    }
  });
});

/** A child process spinning one core until killed (a busy neighbour on the machine). */
function startBusyLoop(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
}

async function stopBusyLoop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** Poll `condition` every 50 ms until it holds; fail after `timeoutMs`. */
async function waitFor(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
