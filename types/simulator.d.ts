// The AniList simulator's types (sim/anilist-simulator.mjs), in a .d.ts that CommonJS and ESM
// typings can both import: the /testing entry's CommonJS typings cannot import a .d.mts.

export interface SimulatorQuota {
  /** Requests allowed per window; default 90, as AniList. */
  limit?: number;
  /** Window length in ms; default 60000. Going over earns a timeout of one window. */
  windowMs?: number;
}

export interface SimulatorOptions {
  /** Port on 127.0.0.1; default 0 (any free port). */
  port?: number;
  quota?: SimulatorQuota;
  /** The `pageInfo.total` of every root `Page`; default 125. */
  pageTotal?: number;
  /** Epoch milliseconds for the quota and outage clocks; default `Date.now`. */
  now?: () => number;
  /** Introspection JSON of the schema; default `data/anilist-schema.json`. */
  schemaPath?: string | URL;
  /** Let the process exit while the simulator listens (its server and sockets are unref'd); default false. */
  unref?: boolean;
}

export interface SimulatorStats {
  /** API requests received (scripting calls excluded). */
  requests: number;
  /** Responses by HTTP status, e.g. `{ "200": 12, "429": 1 }`. */
  byStatus: Record<string, number>;
  /** 429 responses sent. */
  rateLimited: number;
}

export interface SimulatorScript {
  /** The next `count` requests fail with `status` (500-599, default 500); quota is not spent. */
  burst5xx(params: { count: number; status?: number }): void;
  /** Every request fails with 503 for the next `ms` milliseconds; `ms: 0` ends it. */
  outage(params: { ms: number }): void;
  /** Hold back the next `count` answers (default: all) by `ms`; `ms: 0` ends it. */
  slow(params: { ms: number; count?: number }): void;
  /** Replace the quota and start a fresh window; omitted fields take AniList's defaults. */
  setQuota(params: SimulatorQuota): void;
  /**
   * Degraded mode: enforce `enforce` requests per window while the headers keep announcing the
   * quota's limit; going over earns a window's timeout. `enforce: 0` ends it.
   */
  degrade(params: { enforce: number }): void;
  /** Refuse with 429 any request beyond `max` within `perMs` (no quota spent, no timeout); `max: 0` ends it. */
  burstLimit(params: { max: number; perMs?: number }): void;
  /**
   * Root lookups of these ids (`Media(id:)`, `User(id:)`, …) answer 404 until replaced; `ids: []`
   * ends it. Every other id of 1 or more exists; ids below 1 never do.
   */
  missing(params: { ids: number[] }): void;
  /** Clear every script, restore the quota given at start and zero the statistics. */
  reset(): void;
}

export interface Simulator {
  /** `http://127.0.0.1:<port>`; the GraphQL endpoint is `POST /`. */
  url: string;
  script: SimulatorScript;
  stats(): SimulatorStats;
  /** Stop listening and drop every connection. */
  close(): Promise<void>;
}
