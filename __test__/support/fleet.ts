/**
 * Worker processes sharing one upstream (the demo's fleet, demo/fleet.mjs, under typed names):
 * each runs an `AniLink` with the AniList slot it is given and reports what it saw.
 */
import { expect } from 'vitest';
import { quotaUsed as used, splitIds as split, startFleet as start } from '../../demo/fleet.mjs';

/** A diagnostic record as the slot emitted it (`code` for the shared-state ones). */
export interface DiagnosticRecord {
  code?: string;
  kind?: string;
  message: string;
  [field: string]: unknown;
}

export interface WorkerReport {
  served: number;
  failures: { id: number; code?: string; status?: number; message: string }[];
  /** 429 answers the worker's hooks saw, retried or terminal. */
  rateLimited: number;
  pacedMs: number;
  paceWaits: number;
  /** Every diagnostic of the worker's life so far. */
  diagnostics: DiagnosticRecord[];
  elapsedMs: number;
}

export interface FleetWorker {
  readonly pid: number;
  request(message: object, replyType: string): Promise<{ type: string; report?: WorkerReport; state?: unknown }>;
  send(message: object): void;
  kill(): Promise<void>;
  exit(graceMs?: number): Promise<void>;
}

export interface Fleet {
  workers: FleetWorker[];
  run(shares: number[][], concurrency: number): Promise<{ reports: WorkerReport[]; wallMs: number }>;
  states(): Promise<Record<string, unknown>[]>;
  close(): Promise<void[]>;
}

/** `slot`: plain-data AniList slot options (the worker adds its own hooks); `env`: added to the workers' environment. */
export function startFleet(options: {
  size: number;
  slot: Record<string, unknown>;
  env?: Record<string, string>;
}): Promise<Fleet> {
  return start(options) as Promise<Fleet>;
}

export function splitIds(count: number, size: number): number[][] {
  return split(count, size) as number[][];
}

/** The share of the simulator's quota a run used (whole windows of `quota.windowMs` over `wallMs`). */
export function quotaUsed(served: number, wallMs: number, quota: { limit: number; windowMs: number }): number {
  return used(served, wallMs, quota) as number;
}

/**
 * The shared response cache's round trip: the first worker reads `ids`, then the second reads
 * the same ones; no call may fail and no diagnostic may come in either run.
 */
export async function readThenReadAgainElsewhere(fleet: Fleet, ids: number[], concurrency: number): Promise<void> {
  const first = await fleet.run([ids, []], concurrency);
  const second = await fleet.run([[], ids], concurrency);
  for (const { reports } of [first, second]) {
    expect(reports.flatMap((report) => report.failures)).toEqual([]);
    for (const report of reports) expect(report.diagnostics).toEqual([]);
  }
}
