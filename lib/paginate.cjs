'use strict';

/**
 * Pagination helpers (api.md §8): pure orchestration over a caller-supplied page fetcher.
 *
 * They hold no transport state; the fetcher does the requests. One engine serves three page
 * families (AniList pages, AniList list chunks, MyAnimeList pages). It keeps up to
 * `concurrency` fetches in flight, hands pages back strictly in page order, never launches a
 * page beyond the smallest `pageInfo.lastPage` it has received, and aborts the look-ahead it
 * no longer needs, through the AbortSignal each fetch receives, when the run ends early (end of
 * data, a failure, or a consumer leaving a generator). It then waits for those fetches to
 * settle, so nothing it started is still running once it returns.
 */

const { callHook, reportDiagnostic } = require('./diagnostics.cjs');
const { describeKind } = require('./helpers.cjs');

const DIAGNOSTICS_MODES = ['warn', 'hook', 'silent'];

/** Concurrency is capped so a look-ahead can never turn into a burst against the API. */
const MAX_CONCURRENCY = 8;

/**
 * What a family calls its options and results; the AniList and MyAnimeList page families share
 * these, `MediaListCollection` chunks have their own.
 */
const PAGE_NAMES = {
  sizeOption: 'perPage',
  firstOption: 'startPage',
  countOption: 'maxPages',
  hookOption: 'onPage',
  entriesKey: 'pages',
  countKey: 'pageCount',
};

/** AniList `Page` queries: `pageInfo.hasNextPage` ends the run, `pageInfo.lastPage` bounds it. */
const ANILIST_PAGES = {
  ...PAGE_NAMES,
  defaultSize: 50,
  maxSize: 50,
  defaultConcurrency: 3,
  hasNext(page, pageNumber, helper) {
    const pageInfo = requireObject(page, pageNumber, helper).pageInfo;
    if (pageInfo === null || typeof pageInfo !== 'object') {
      throw new TypeError(`${helper}: page ${pageNumber} has no pageInfo object`);
    }
    return pageInfo.hasNextPage === true;
  },
  lastPageOf(page) {
    const lastPage = page?.pageInfo?.lastPage;
    return Number.isInteger(lastPage) ? lastPage : undefined;
  },
  entryOf(page, pageNumber, helper, itemsKey) {
    return { pageInfo: page.pageInfo, items: itemsUnder(helper, page, itemsKey, pageNumber) };
  },
};

/** AniList `MediaListCollection` chunks: `hasNextChunk` ends the run. */
const ANILIST_CHUNKS = {
  sizeOption: 'perChunk',
  firstOption: 'startChunk',
  countOption: 'maxChunks',
  hookOption: 'onChunk',
  entriesKey: 'chunks',
  countKey: 'chunkCount',
  defaultSize: 500,
  maxSize: 500,
  defaultConcurrency: 3,
  hasNext(chunk, chunkNumber, helper) {
    return requireObject(chunk, chunkNumber, helper).hasNextChunk === true;
  },
  lastPageOf() {
    return undefined;
  },
  entryOf(chunk, chunkNumber, helper, itemsKey) {
    return {
      hasNextChunk: chunk.hasNextChunk === true,
      items: itemsUnder(helper, chunk, itemsKey, chunkNumber),
    };
  },
};

/**
 * MyAnimeList `{ data, paging }` pages: when `paging` is present its `next` link decides;
 * without it, a short page is the last one.
 */
const MAL_PAGES = {
  ...PAGE_NAMES,
  defaultSize: 100,
  maxSize: 100,
  defaultConcurrency: 1,
  hasNext(page, pageNumber, helper, perPage) {
    const { data, paging } = requireObject(page, pageNumber, helper);
    if (!Array.isArray(data)) {
      throw new TypeError(`${helper}: page ${pageNumber} has no data array`);
    }
    if (paging !== undefined && paging !== null) {
      return typeof paging.next === 'string' && paging.next !== '';
    }
    return data.length >= perPage;
  },
  lastPageOf() {
    return undefined;
  },
  entryOf(page) {
    return { paging: page.paging, items: page.data };
  },
};

/**
 * Fetch an AniList paginated query page by page and gather the items under `itemsKey`.
 * Resolves `{ items, pages: [{ pageInfo, items }], pageCount, truncated }`.
 */
async function paginate(fetchPage, itemsKey, options) {
  requireItemsKey('paginate', itemsKey);
  return collect('paginate', fetchPage, options, ANILIST_PAGES, itemsKey);
}

/** Yield the raw pages of an AniList paginated query, in page order. */
async function* paginatePages(fetchPage, options) {
  yield* rawPages('paginatePages', fetchPage, options, ANILIST_PAGES);
}

/**
 * Fetch `MediaListCollection` chunk by chunk and gather the items under `itemsKey`
 * (typically "lists"). Resolves `{ items, chunks: [{ hasNextChunk, items }], chunkCount, truncated }`.
 */
async function paginateChunks(fetchChunk, itemsKey, options) {
  requireItemsKey('paginateChunks', itemsKey);
  return collect('paginateChunks', fetchChunk, options, ANILIST_CHUNKS, itemsKey);
}

/**
 * Fetch a MyAnimeList listing page by page and gather its `data` entries.
 * Resolves `{ items, pages: [{ paging, items }], pageCount, truncated }`.
 */
async function malPaginate(fetchPage, options) {
  return collect('malPaginate', fetchPage, options, MAL_PAGES);
}

/** Yield the raw `{ data, paging }` pages of a MyAnimeList listing, in page order. */
async function* malPaginatePages(fetchPage, options) {
  yield* rawPages('malPaginatePages', fetchPage, options, MAL_PAGES);
}

/**
 * The engine: yields `{ pageNumber, page, truncated }` in page order. `truncated` is set on the
 * last record when a limit (maxPages or the received lastPage) ended a run the API says goes on.
 */
async function* walk(helper, fetchPage, run, family) {
  // The highest page that may be launched: maxPages' limit, lowered by any lastPage received.
  let bound = run.first + run.count - 1;
  let nextPage = run.first;
  const inFlight = [];

  const launch = () => {
    const pageNumber = nextPage++;
    const controller = new AbortController();
    const signal = run.signal ? AbortSignal.any([run.signal, controller.signal]) : controller.signal;
    let promise;
    try {
      promise = Promise.resolve(fetchPage(pageNumber, run.size, signal));
    } catch (error) {
      promise = Promise.reject(error);
    }
    // Learn the bound as soon as any page arrives, so look-ahead stops early; a failure is
    // handled when its page reaches the head, or ignored if its page is never needed.
    promise.then(
      (page) => {
        const lastPage = family.lastPageOf(page);
        if (lastPage !== undefined) bound = Math.min(bound, lastPage);
      },
      () => {},
    );
    inFlight.push({ pageNumber, controller, promise });
  };

  try {
    for (;;) {
      run.signal?.throwIfAborted();
      while (inFlight.length < run.concurrency && nextPage <= bound) launch();
      const head = inFlight.shift();
      const page = await head.promise;
      run.signal?.throwIfAborted();
      const hasNext = family.hasNext(page, head.pageNumber, helper, run.size);
      const isLast = !hasNext || head.pageNumber >= bound;
      runPageHook(run, page, head.pageNumber);
      yield { pageNumber: head.pageNumber, page, truncated: hasNext && isLast };
      if (isLast) return;
    }
  } finally {
    for (const pending of inFlight) pending.controller.abort();
    await Promise.allSettled(inFlight.map((pending) => pending.promise));
  }
}

/**
 * Run a page family to its end and gather its items, keeping the family's entry for each page
 * (AniList families take the items from under `itemsKey`). Resolves
 * `{ items, [entriesKey]: entries, [countKey]: entries.length, truncated }`.
 */
async function collect(helper, fetchPage, options, family, itemsKey) {
  const run = resolveRun(helper, fetchPage, options, family);
  const items = [];
  const entries = [];
  let truncated = false;
  for await (const record of walk(helper, fetchPage, run, family)) {
    const entry = family.entryOf(record.page, record.pageNumber, helper, itemsKey);
    entries.push(entry);
    for (const item of entry.items) items.push(item);
    truncated = record.truncated;
  }
  return { items, [family.entriesKey]: entries, [family.countKey]: entries.length, truncated };
}

/** Yield the pages of a family's run as the fetcher resolved them, in page order. */
async function* rawPages(helper, fetchPage, options, family) {
  const run = resolveRun(helper, fetchPage, options, family);
  for await (const { page } of walk(helper, fetchPage, run, family)) {
    yield page;
  }
}

/** Validate the fetcher and options (TypeError naming the option and rule) and apply defaults. */
function resolveRun(helper, fetchPage, options, family) {
  if (typeof fetchPage !== 'function') {
    throw new TypeError(`${helper}: the page fetcher must be a function, received ${describe(fetchPage)}`);
  }
  if (options !== undefined && options !== null && typeof options !== 'object') {
    throw new TypeError(`${helper}: options must be an object, received ${describe(options)}`);
  }
  const given = options ?? {};
  const diagnostics = given.diagnostics ?? 'warn';
  if (!DIAGNOSTICS_MODES.includes(diagnostics)) {
    throw new TypeError(
      `${helper}: diagnostics must be one of "warn", "hook" or "silent", received ${describe(diagnostics)}`,
    );
  }
  if (given.signal !== undefined && !(given.signal instanceof AbortSignal)) {
    throw new TypeError(`${helper}: signal must be an AbortSignal, received ${describe(given.signal)}`);
  }
  const { sizeOption, firstOption, countOption } = family;
  const onHookError = optionalFunction(helper, 'onHookError', given.onHookError);
  const route = { onHookError, diagnostics };
  const count = (name, fallback, max) => pageCount(helper, name, given[name], fallback, max, route);
  return {
    size: count(sizeOption, family.defaultSize, family.maxSize),
    first: count(firstOption, 1),
    count: count(countOption, 100),
    concurrency: count('concurrency', family.defaultConcurrency, MAX_CONCURRENCY),
    signal: given.signal,
    hookName: family.hookOption,
    hook: optionalFunction(helper, family.hookOption, given[family.hookOption]),
    route,
  };
}

/**
 * A page size, count or number: a positive integer, clamped to the documented maximum. Any
 * other defined value falls back to the default, as the original does (decisions D26), and
 * the fallback is reported through the diagnostics channel (`warn` by default), never silently.
 */
function pageCount(helper, name, value, fallback, max, route) {
  if (value === undefined) return fallback;
  if (Number.isInteger(value) && value >= 1) return Math.min(value, max ?? Infinity);
  reportDiagnostic(
    {
      source: 'anilink',
      kind: 'invalid-option',
      hookName: helper,
      message: `${helper}: ${name} must be a positive integer, received ${describe(value)}; using the default ${fallback}.`,
    },
    undefined,
    route,
  );
  return fallback;
}

function optionalFunction(helper, name, value) {
  if (value !== undefined && typeof value !== 'function') {
    throw new TypeError(`${helper}: ${name} must be a function, received ${describe(value)}`);
  }
  return value;
}

function requireItemsKey(helper, itemsKey) {
  if (typeof itemsKey !== 'string' || itemsKey === '') {
    throw new TypeError(`${helper}: itemsKey must be a non-empty string, received ${describe(itemsKey)}`);
  }
}

function requireObject(page, pageNumber, helper) {
  if (page === null || typeof page !== 'object') {
    throw new TypeError(`${helper}: page ${pageNumber} resolved ${describe(page)} instead of an object`);
  }
  return page;
}

function itemsUnder(helper, page, itemsKey, pageNumber) {
  const items = page[itemsKey];
  if (!Array.isArray(items)) {
    throw new TypeError(`${helper}: page ${pageNumber} has no array under "${itemsKey}"`);
  }
  return items;
}

/**
 * Run the caller's onPage/onChunk observer. Its failures, thrown or as a rejected promise, must
 * never end the run: they go to onHookError, or to the console in "warn" mode without one.
 */
function runPageHook(run, page, pageNumber) {
  if (run.hook === undefined) return;
  callHook(run.hookName, run.hook, [page, pageNumber], run.route);
}

/** A value as the pagination messages show it (these options hold no secrets). */
function describe(value) {
  return describeKind(value, { literal: true });
}

module.exports = { paginate, paginatePages, paginateChunks, malPaginate, malPaginatePages };
