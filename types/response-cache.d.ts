// The opt-in response cache (api.md §7, transport.md 1.12). Pass one as the `responseCache`
// option of a provider slot or of a single request; the transport reads and writes it natively.
// Its counters' shape is generated from the binding's declaration (wire.generated.d.ts).

import type { ResponseCacheStats } from './wire.generated';

export type { ResponseCacheStats } from './wire.generated';

export interface ResponseCacheOptions {
  /** How long an entry lives after it is written, in ms (finite ≥ 0). Default 60000; 0 stores nothing. */
  ttlMs?: number;
  /** Entries kept before the least recently used one is evicted (integer ≥ 1). Default 128. */
  maxEntries?: number;
  /**
   * Accepted for compatibility (boolean). Entries are stored as JSON text, so every read
   * returns a fresh copy whatever this says.
   */
  cloneOnRead?: boolean;
  /**
   * Fleet-wide (our extension, boolean, default false): on a slot with `sharedState`, entries
   * live in that Redis, so identical reads across processes cost one request per TTL. While
   * Redis answers, every cacheable read costs one Redis round trip (the local copy is not read);
   * while it is away, the process's own cache serves. `maxEntries` is also the cap per Redis
   * scope (provider and host); answers over 1 MiB are not shared. On a slot without
   * `sharedState` the cache is local.
   */
  shared?: boolean;
}

/**
 * An LRU cache with a TTL for GETs and GraphQL queries. Keys are
 * `METHOD:canonicalUrl:bodyHash:authKey`; values must be JSON-serialisable (every API result is).
 * Successful writes through the transport invalidate what they may have changed.
 */
export declare class ResponseCache {
  /** @throws {TypeError} for an invalid option. */
  constructor(options?: ResponseCacheOptions);
  /** A fresh copy of the cached value, or undefined (a miss, or an expired entry, which is deleted). */
  get<T = unknown>(method: string, url: string, data?: object | string, authKey?: string): T | undefined;
  /**
   * Stores what the transport itself could store: a GET, or a GraphQL POST whose `query` is a
   * query document (a mutation or any other request is not stored). A value JSON or
   * `structuredClone` cannot carry is not stored either, and an entry already there stays.
   */
  set<T>(
    method: string,
    url: string,
    data: object | string | undefined,
    authKey: string | undefined,
    response: T,
  ): void;
  /** Stores unless an invalidation affecting this key happened after `generationAtRead`; returns whether it stored. */
  setIfFresh<T>(
    method: string,
    url: string,
    data: object | string | undefined,
    authKey: string | undefined,
    generationAtRead: number,
    response: T,
  ): boolean;
  /** Bumped by every invalidation. */
  getGeneration(): number;
  /** Returns whether the entry existed. */
  delete(method: string, url: string, data?: object | string, authKey?: string): boolean;
  /** Deletes every entry at or under the prefix (`/anime/21` does not match `/anime/212`); returns how many. */
  deleteMatching(urlPrefix: string): number;
  /** Deletes every entry for the URL, whatever its query string, method, body or auth; returns how many. */
  deleteAllForUrl(url: string): number;
  clear(): void;
  stats(): Readonly<ResponseCacheStats>;
}
