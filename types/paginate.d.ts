// Pagination helpers (api.md §8): orchestration over a caller-supplied page fetcher.
// Implemented by lib/paginate.cjs.

import type { MalPage, MalPaging } from './mal';

/** The part of an AniList `pageInfo` the helpers read. */
interface PaginationPageInfo {
  hasNextPage?: boolean | null;
  lastPage?: number | null;
}

/** An AniList `Page` result: `pageInfo` plus one array of items. */
interface AniListPageShape {
  pageInfo: PaginationPageInfo;
}

/** A `MediaListCollection` chunk. */
interface AniListChunkShape {
  hasNextChunk?: boolean | null;
}

/** The element type of the array under `K`; `never` when `K` is not an array field of `T`. */
type ItemsOf<T, K extends string> = K extends keyof T
  ? NonNullable<T[K]> extends readonly (infer Item)[]
    ? Item
    : never
  : never;

/**
 * Fetches one page. Page numbers start at `startPage` and grow by one; the signal aborts when the
 * helper no longer needs the page (run ended, failed, or the caller's `signal` aborted).
 */
export type PageFetcher<TPage> = (page: number, perPage: number, signal: AbortSignal) => Promise<TPage>;

/** Fetches one `MediaListCollection` chunk (see {@link PageFetcher}). */
export type ChunkFetcher<TChunk> = (chunk: number, perChunk: number, signal: AbortSignal) => Promise<TChunk>;

/** Options every helper shares. Invalid numbers throw a `TypeError`; too-large ones are clamped. */
interface CommonPaginateOptions {
  /** Pages fetched at once, look-ahead included. `1` is sequential. Clamped to at most 8. */
  concurrency?: number;
  /** Aborts the run: passed on to every fetch, checked before each launch. */
  signal?: AbortSignal;
  /** Receives failures of `onPage` / `onChunk` (which never end the run). */
  onHookError?: (hookName: string, error: unknown) => void;
  /** Without `onHookError`: `"warn"` (default) logs a JSON diagnostic, the others stay quiet. */
  diagnostics?: 'warn' | 'hook' | 'silent';
}

export interface PaginateOptions<TPage = unknown> extends CommonPaginateOptions {
  /** Default 50, at most 50 (AniList's maximum). */
  perPage?: number;
  /** Default 1. */
  startPage?: number;
  /** Default 100. */
  maxPages?: number;
  /** Called once per page, in page order. Exceptions are reported, not thrown. */
  onPage?: (page: TPage, pageNumber: number) => void | Promise<void>;
}

export interface PaginateResult<TItem, TPage extends AniListPageShape = AniListPageShape> {
  items: TItem[];
  pages: { pageInfo: TPage['pageInfo']; items: TItem[] }[];
  pageCount: number;
  /** `maxPages` or the received `lastPage` stopped a run the API said goes on. */
  truncated: boolean;
}

export interface ChunkPaginateOptions<TChunk = unknown> extends CommonPaginateOptions {
  /** Default 500, at most 500. */
  perChunk?: number;
  /** Default 1. */
  startChunk?: number;
  /** Default 100. */
  maxChunks?: number;
  /** Called once per chunk, in chunk order. Exceptions are reported, not thrown. */
  onChunk?: (chunk: TChunk, chunkNumber: number) => void | Promise<void>;
}

export interface ChunkPaginateResult<TItem> {
  items: TItem[];
  chunks: { hasNextChunk: boolean; items: TItem[] }[];
  chunkCount: number;
  /** `maxChunks` stopped a run whose last chunk still said `hasNextChunk: true`. */
  truncated: boolean;
}

export interface MalPaginateOptions<TPage = unknown> extends CommonPaginateOptions {
  /** Default 100, at most 100. */
  perPage?: number;
  /** Default 1. */
  startPage?: number;
  /** Default 100. */
  maxPages?: number;
  /** Called once per page, in page order. Exceptions are reported, not thrown. */
  onPage?: (page: TPage, pageNumber: number) => void | Promise<void>;
}

export interface MalPaginateResult<TItem> {
  items: TItem[];
  pages: { paging?: MalPaging; items: TItem[] }[];
  pageCount: number;
  /** `maxPages` stopped a run whose last page still linked a next one. */
  truncated: boolean;
}

/**
 * Fetch every page of an AniList `Page` query and gather the items under `itemsKey`.
 *
 * `itemsKey` is any string, as in the original's `aniLink.anilist.paginate`: a key that is not
 * an array field of the page types the items as `never`. Constraining it to the page's array
 * keys would have TypeScript infer it before the page type of an unannotated fetcher
 * (`(page, perPage) => …`) and reject every key, the documentation's own calls included.
 */
export declare function paginate<TPage extends AniListPageShape, K extends string>(
  fetchPage: PageFetcher<TPage>,
  itemsKey: K,
  options?: PaginateOptions<TPage>,
): Promise<PaginateResult<ItemsOf<TPage, K>, TPage>>;

/** Yield the pages of an AniList `Page` query in order; leaving the loop aborts the look-ahead. */
export declare function paginatePages<TPage extends AniListPageShape>(
  fetchPage: PageFetcher<TPage>,
  options?: PaginateOptions<TPage>,
): AsyncGenerator<TPage, void, undefined>;

/** Fetch every `MediaListCollection` chunk and gather the items under `itemsKey` (usually "lists"). */
export declare function paginateChunks<TChunk extends AniListChunkShape, K extends string>(
  fetchChunk: ChunkFetcher<TChunk>,
  itemsKey: K,
  options?: ChunkPaginateOptions<TChunk>,
): Promise<ChunkPaginateResult<ItemsOf<TChunk, K>>>;

/** Fetch every page of a MyAnimeList listing and gather its `data` entries. */
export declare function malPaginate<TPage extends MalPage<unknown>>(
  fetchPage: PageFetcher<TPage>,
  options?: MalPaginateOptions<TPage>,
): Promise<MalPaginateResult<TPage['data'][number]>>;

/** Yield the `{ data, paging }` pages of a MyAnimeList listing in order. */
export declare function malPaginatePages<TPage extends MalPage<unknown>>(
  fetchPage: PageFetcher<TPage>,
  options?: MalPaginateOptions<TPage>,
): AsyncGenerator<TPage, void, undefined>;
