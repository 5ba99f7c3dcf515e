// The pagination helpers of lib/paginate.cjs, driven by stub fetchers (no network).
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type * as Paginate from '../types/paginate';

const require = createRequire(import.meta.url);
const { paginate, paginatePages, paginateChunks, malPaginate, malPaginatePages } =
  require('../lib/paginate.cjs') as typeof Paginate;

afterEach(() => {
  vi.restoreAllMocks();
});

/** One turn of the event loop: lets fetches complete in a chosen order without timers. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Request {
  page: number;
  perPage: number;
  signal: AbortSignal;
}

/**
 * A fetcher that records its requests and how many ran at once. Page `n` completes after
 * `turnsFor(n)` event-loop turns, so completion order can differ from page order.
 */
function trackedFetcher<T>(build: (page: number, perPage: number) => T, turnsFor: (page: number) => number = () => 1) {
  const requests: Request[] = [];
  let active = 0;
  let maxActive = 0;
  const fetch = async (page: number, perPage: number, signal: AbortSignal): Promise<T> => {
    requests.push({ page, perPage, signal });
    active += 1;
    maxActive = Math.max(maxActive, active);
    try {
      for (let i = 0; i < turnsFor(page); i += 1) await turn();
      return build(page, perPage);
    } finally {
      active -= 1;
    }
  };
  return {
    fetch,
    requests,
    pages: () => requests.map((request) => request.page),
    maxActive: () => maxActive,
  };
}

/** Rejects with the abort reason once `signal` aborts (at once if it already has); never settles otherwise. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** An AniList `Page` over `total` media ids; `lastPage` may be overridden to lie. */
function aniListPage(page: number, perPage: number, total: number, lastPage = Math.ceil(total / perPage)) {
  const first = (page - 1) * perPage;
  const count = Math.max(0, Math.min(perPage, total - first));
  return {
    pageInfo: { currentPage: page, perPage, lastPage, hasNextPage: first + perPage < total },
    media: Array.from({ length: count }, (_, index) => ({ id: first + index + 1 })),
  };
}

/** A page that always claims there is more. */
function endlessPage(page: number, lastPage: number | null = null) {
  return { pageInfo: { currentPage: page, lastPage, hasNextPage: true }, media: [{ id: page }] };
}

/** A MAL listing page over `total` ids, with or without `paging`. */
function malPage(page: number, perPage: number, total: number, withPaging = true) {
  const first = (page - 1) * perPage;
  const count = Math.max(0, Math.min(perPage, total - first));
  const data = Array.from({ length: count }, (_, index) => ({ node: { id: first + index + 1 } }));
  if (!withPaging) return { data };
  return { data, paging: first + perPage < total ? { next: `https://mal.test/next?offset=${first + perPage}` } : {} };
}

const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => ({ id: from + index }));

describe('paginate', () => {
  it('returns items and pages in page order even when later pages finish first', async () => {
    const source = trackedFetcher(
      (page, perPage) => aniListPage(page, perPage, 23),
      (page) => 7 - page,
    );
    const result = await paginate(source.fetch, 'media', { perPage: 5 });
    expect(result.items).toEqual(ids(1, 23));
    expect(result.pageCount).toBe(5);
    expect(result.pages.map((entry) => entry.pageInfo.currentPage)).toEqual([1, 2, 3, 4, 5]);
    expect(result.pages[4]?.items).toEqual(ids(21, 23));
    expect(result.truncated).toBe(false);
    expect(source.requests.every((request) => request.perPage === 5 && request.signal instanceof AbortSignal)).toBe(
      true,
    );
  });

  it('asks for 50 per page by default and clamps larger sizes to 50', async () => {
    const byDefault = trackedFetcher((page, perPage) => aniListPage(page, perPage, 10));
    await paginate(byDefault.fetch, 'media');
    expect(byDefault.requests[0]?.perPage).toBe(50);
    const clamped = trackedFetcher((page, perPage) => aniListPage(page, perPage, 10));
    await paginate(clamped.fetch, 'media', { perPage: 80 });
    expect(clamped.requests[0]?.perPage).toBe(50);
  });

  it('keeps at most `concurrency` fetches in flight: 3 by default, clamped to 8', async () => {
    const slowFirst = (page: number) => (page % 4) + 1;
    const byDefault = trackedFetcher((page, perPage) => aniListPage(page, perPage, 200), slowFirst);
    await paginate(byDefault.fetch, 'media', { perPage: 10 });
    expect(byDefault.maxActive()).toBe(3);

    const sequential = trackedFetcher((page, perPage) => aniListPage(page, perPage, 200), slowFirst);
    await paginate(sequential.fetch, 'media', { perPage: 10, concurrency: 1 });
    expect(sequential.maxActive()).toBe(1);
    expect(sequential.pages()).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));

    const clamped = trackedFetcher((page, perPage) => aniListPage(page, perPage, 500), slowFirst);
    const result = await paginate(clamped.fetch, 'media', { perPage: 10, concurrency: 50 });
    expect(clamped.maxActive()).toBe(8);
    expect(result.items).toEqual(ids(1, 500));
  });

  it('stops at hasNextPage: false and aborts the look-ahead it launched past the end', async () => {
    // Without a lastPage hint the look-ahead cannot know where the data ends.
    const source = trackedFetcher((page, perPage) => aniListPage(page, perPage, 9, Number.NaN));
    const result = await paginate(source.fetch, 'media', { perPage: 2, concurrency: 4 });
    expect(result.items).toEqual(ids(1, 9));
    expect(result.pageCount).toBe(5);
    expect(result.truncated).toBe(false);
    const beyondEnd = source.requests.filter((request) => request.page > 5);
    expect(beyondEnd.length).toBeGreaterThan(0);
    expect(beyondEnd.every((request) => request.signal.aborted)).toBe(true);
    expect(source.requests.filter((request) => request.page <= 5).some((request) => request.signal.aborted)).toBe(
      false,
    );
  });

  it('never launches past the smallest lastPage received, and reports the cut as truncated', async () => {
    const source = trackedFetcher((page) => endlessPage(page, page === 2 ? 3 : 10));
    const result = await paginate(source.fetch, 'media', { concurrency: 2 });
    expect(source.pages()).toEqual([1, 2, 3]);
    expect(result.items).toEqual(ids(1, 3));
    expect(result.truncated).toBe(true);
  });

  it('is not truncated when lastPage ends a run that also says hasNextPage: false', async () => {
    const source = trackedFetcher((page, perPage) => aniListPage(page, perPage, 6));
    const result = await paginate(source.fetch, 'media', { perPage: 2, concurrency: 1 });
    expect(source.pages()).toEqual([1, 2, 3]);
    expect(result.truncated).toBe(false);
  });

  it('stops at maxPages from startPage and marks the result truncated', async () => {
    const source = trackedFetcher((page) => endlessPage(page));
    const result = await paginate(source.fetch, 'media', { startPage: 3, maxPages: 4, concurrency: 8 });
    expect(source.pages()).toEqual([3, 4, 5, 6]);
    expect(result.items).toEqual(ids(3, 6));
    expect(result.truncated).toBe(true);
  });

  it('is not truncated when maxPages coincides with the last page', async () => {
    const source = trackedFetcher((page, perPage) => aniListPage(page, perPage, 4));
    const result = await paginate(source.fetch, 'media', { perPage: 2, maxPages: 2 });
    expect(result.truncated).toBe(false);
    expect(result.pageCount).toBe(2);
  });

  it('rejects with the failing page error and aborts the other pages in flight', async () => {
    const requests: Request[] = [];
    const failure = new Error('page 2 failed');
    const fetch = async (page: number, perPage: number, signal: AbortSignal) => {
      requests.push({ page, perPage, signal });
      if (page === 1) return endlessPage(1);
      if (page === 2) throw failure;
      return untilAborted(signal);
    };
    await expect(paginate(fetch, 'media', { concurrency: 3 })).rejects.toBe(failure);
    // Page 1 done frees a slot for page 4 before page 2 is looked at.
    expect(requests.map((request) => request.page)).toEqual([1, 2, 3, 4]);
    expect(requests.slice(2).every((request) => request.signal.aborted)).toBe(true);
  });

  it('passes the caller signal to every fetch and stops when it aborts', async () => {
    const caller = new AbortController();
    const requests: Request[] = [];
    const fetch = async (
      page: number,
      perPage: number,
      signal: AbortSignal,
    ): Promise<ReturnType<typeof endlessPage>> => {
      requests.push({ page, perPage, signal });
      if (page === 2) caller.abort(new Error('caller gave up'));
      return untilAborted(signal);
    };
    await expect(paginate(fetch, 'media', { signal: caller.signal, concurrency: 2 })).rejects.toThrow('caller gave up');
    expect(requests.map((request) => request.page)).toEqual([1, 2]);
    expect(requests.every((request) => request.signal.aborted)).toBe(true);
  });

  it('rejects before any fetch when the caller signal is already aborted', async () => {
    const fetch = vi.fn(async (page: number) => endlessPage(page));
    const reason = new Error('too late');
    await expect(paginate(fetch, 'media', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(fetch).not.toHaveBeenCalled();
  });

  it('rejects a page without pageInfo or without an array under itemsKey', async () => {
    await expect(paginate(async () => ({ media: [] }) as never, 'media' as never)).rejects.toThrow(
      new TypeError('paginate: page 1 has no pageInfo object'),
    );
    await expect(paginate(async (page) => aniListPage(page, 2, 1), 'users' as never)).rejects.toThrow(
      new TypeError('paginate: page 1 has no array under "users"'),
    );
  });
});

describe('onPage failures', () => {
  const twoPages = (page: number, perPage: number) => aniListPage(page, perPage, 4);

  it('go to onHookError with a diagnostic error, and the run completes', async () => {
    const reported: [string, unknown][] = [];
    const original = new Error('metrics down');
    const source = trackedFetcher(twoPages);
    const seen: number[] = [];
    const result = await paginate(source.fetch, 'media', {
      perPage: 2,
      onPage: (_page, pageNumber) => {
        seen.push(pageNumber);
        throw original;
      },
      onHookError: (hookName, error) => reported.push([hookName, error]),
    });
    expect(result.items).toEqual(ids(1, 4));
    expect(seen).toEqual([1, 2]);
    expect(reported).toHaveLength(2);
    const [hookName, error] = reported[0] ?? [];
    expect(hookName).toBe('onPage');
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('The onPage hook threw and was ignored: metrics down');
    expect((error as Error).cause).toBe(original);
    expect((error as Error & { diagnostic: unknown }).diagnostic).toEqual({
      source: 'anilink',
      kind: 'hook-failure',
      hookName: 'onPage',
      message: 'The onPage hook threw and was ignored: metrics down',
    });
  });

  it('include a rejected promise returned by an async onPage', async () => {
    const onHookError = vi.fn();
    const source = trackedFetcher(twoPages);
    await paginate(source.fetch, 'media', {
      perPage: 4,
      onPage: async () => {
        throw new Error('async failure');
      },
      onHookError,
    });
    await turn();
    expect(onHookError).toHaveBeenCalledTimes(1);
    expect(onHookError.mock.calls[0]?.[1]).toMatchObject({
      message: 'The onPage hook threw and was ignored: async failure',
    });
  });

  it('are logged as one JSON line without an observer in the default "warn" mode', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const source = trackedFetcher(twoPages);
    const result = await paginate(source.fetch, 'media', {
      perPage: 4,
      onPage: () => {
        throw 'plain string';
      },
    });
    expect(result.items).toEqual(ids(1, 4));
    expect(warn).toHaveBeenCalledTimes(1);
    expect(JSON.parse(String(warn.mock.calls[0]?.[0]))).toEqual({
      source: 'anilink',
      kind: 'hook-failure',
      hookName: 'onPage',
      message: 'The onPage hook threw and was ignored: plain string',
    });
  });

  it('stay quiet in "silent" and "hook" modes without an observer', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    for (const diagnostics of ['silent', 'hook'] as const) {
      const source = trackedFetcher(twoPages);
      await paginate(source.fetch, 'media', {
        perPage: 4,
        diagnostics,
        onPage: () => {
          throw new Error('ignored');
        },
      });
    }
    expect(warn).not.toHaveBeenCalled();
  });

  it('survive an observer that throws too', async () => {
    const source = trackedFetcher(twoPages);
    const result = await paginate(source.fetch, 'media', {
      perPage: 2,
      onPage: () => {
        throw new Error('first');
      },
      onHookError: () => {
        throw new Error('second');
      },
    });
    expect(result.items).toEqual(ids(1, 4));
  });
});

describe('paginatePages', () => {
  it('yields the raw pages in order', async () => {
    const source = trackedFetcher(
      (page, perPage) => aniListPage(page, perPage, 5),
      (page) => 4 - page,
    );
    const pages = [];
    for await (const page of paginatePages(source.fetch, { perPage: 2 })) pages.push(page);
    expect(pages.map((page) => page.pageInfo.currentPage)).toEqual([1, 2, 3]);
    expect(pages.flatMap((page) => page.media)).toEqual(ids(1, 5));
  });

  it('aborts the in-flight look-ahead when the loop is left early, and waits for it to settle', async () => {
    const requests: Request[] = [];
    const settled: number[] = [];
    const fetch = async (page: number, perPage: number, signal: AbortSignal) => {
      requests.push({ page, perPage, signal });
      try {
        if (page === 1) return endlessPage(1);
        // Winding down takes a turn, as a real request would: the helper must wait for it.
        return await untilAborted(signal).catch(async (reason: unknown) => {
          await turn();
          throw reason;
        });
      } finally {
        settled.push(page);
      }
    };
    const seen: number[] = [];
    for await (const page of paginatePages(fetch, { concurrency: 3 })) {
      seen.push(page.pageInfo.currentPage);
      break;
    }
    expect(seen).toEqual([1]);
    expect(requests.map((request) => request.page)).toEqual([1, 2, 3]);
    expect(requests.slice(1).every((request) => request.signal.aborted)).toBe(true);
    expect(settled.sort()).toEqual([1, 2, 3]);
  });

  it('calls onPage for each yielded page', async () => {
    const source = trackedFetcher((page, perPage) => aniListPage(page, perPage, 3));
    const onPage = vi.fn();
    for await (const page of paginatePages(source.fetch, { perPage: 1, onPage })) void page;
    expect(onPage.mock.calls.map((call) => call[1])).toEqual([1, 2, 3]);
  });
});

describe('paginateChunks', () => {
  const chunkOf = (chunk: number, perChunk: number, total: number) => ({
    hasNextChunk: chunk < total,
    lists: [{ name: `chunk ${chunk}`, size: perChunk }],
  });

  it('gathers the lists of every chunk until hasNextChunk is false', async () => {
    const source = trackedFetcher(
      (chunk, perChunk) => chunkOf(chunk, perChunk, 4),
      (chunk) => 5 - chunk,
    );
    const result = await paginateChunks(source.fetch, 'lists');
    expect(result.items.map((list) => list.name)).toEqual(['chunk 1', 'chunk 2', 'chunk 3', 'chunk 4']);
    expect(result.chunks.map((chunk) => chunk.hasNextChunk)).toEqual([true, true, true, false]);
    expect(result.chunkCount).toBe(4);
    expect(result.truncated).toBe(false);
    expect(source.requests[0]?.perPage).toBe(500);
    expect(source.maxActive()).toBe(3);
  });

  it('clamps perChunk to 500, honours startChunk and truncates at maxChunks', async () => {
    const source = trackedFetcher((chunk, perChunk) => chunkOf(chunk, perChunk, 100));
    const result = await paginateChunks(source.fetch, 'lists', { perChunk: 1000, startChunk: 2, maxChunks: 2 });
    expect(source.pages()).toEqual([2, 3]);
    expect(source.requests[0]?.perPage).toBe(500);
    expect(result.truncated).toBe(true);
  });

  it('reports onChunk failures under the onChunk hook name', async () => {
    const onHookError = vi.fn();
    const source = trackedFetcher((chunk, perChunk) => chunkOf(chunk, perChunk, 1));
    await paginateChunks(source.fetch, 'lists', {
      onChunk: () => {
        throw new Error('x');
      },
      onHookError,
    });
    expect(onHookError).toHaveBeenCalledWith('onChunk', expect.any(Error));
  });
});

describe('malPaginate', () => {
  it('follows paging.next, fetching sequentially with 100 per page by default', async () => {
    const source = trackedFetcher(
      (page, perPage) => malPage(page, perPage, 250),
      (page) => 4 - page,
    );
    const result = await malPaginate(source.fetch);
    expect(source.requests.map((request) => request.perPage)).toEqual([100, 100, 100]);
    expect(source.maxActive()).toBe(1);
    expect(result.items.map((entry) => entry.node.id)).toEqual(Array.from({ length: 250 }, (_, index) => index + 1));
    expect(result.pageCount).toBe(3);
    expect(result.pages[0]?.paging?.next).toBe('https://mal.test/next?offset=100');
    expect(result.truncated).toBe(false);
  });

  it('treats present paging as authoritative: no next ends a full page, a next continues a short one', async () => {
    const fullWithoutNext = trackedFetcher((page) => ({ data: [{ page }, { page }], paging: {} }));
    expect((await malPaginate(fullWithoutNext.fetch, { perPage: 2 })).pageCount).toBe(1);

    const shortWithNext = trackedFetcher((page) => ({
      data: [{ page }],
      paging: page < 3 ? { next: 'https://mal.test/more' } : {},
    }));
    expect((await malPaginate(shortWithNext.fetch, { perPage: 2 })).pageCount).toBe(3);
  });

  it('ends on a short page when paging is absent', async () => {
    const source = trackedFetcher((page, perPage) => malPage(page, perPage, 5, false));
    const result = await malPaginate(source.fetch, { perPage: 2 });
    expect(source.pages()).toEqual([1, 2, 3]);
    expect(result.items).toHaveLength(5);
  });

  it('clamps perPage to 100 and concurrency to 8, and truncates at maxPages', async () => {
    const source = trackedFetcher(
      (page, perPage) => malPage(page, perPage, 100_000),
      (page) => (page % 3) + 1,
    );
    const result = await malPaginate(source.fetch, { perPage: 1000, concurrency: 9, maxPages: 20 });
    expect(source.requests[0]?.perPage).toBe(100);
    expect(source.maxActive()).toBe(8);
    expect(result.pageCount).toBe(20);
    expect(result.items).toHaveLength(2000);
    expect(result.truncated).toBe(true);
  });

  it('rejects a page without a data array', async () => {
    await expect(malPaginate(async () => ({ paging: {} }) as never)).rejects.toThrow(
      new TypeError('malPaginate: page 1 has no data array'),
    );
  });
});

describe('malPaginatePages', () => {
  it('yields the raw MAL pages in order', async () => {
    const source = trackedFetcher((page, perPage) => malPage(page, perPage, 3));
    const pages = [];
    for await (const page of malPaginatePages(source.fetch, { perPage: 1, concurrency: 2 })) pages.push(page);
    expect(pages.map((page) => page.data[0]?.node.id)).toEqual([1, 2, 3]);
  });
});

describe('option validation', () => {
  const neverCalled = async (): Promise<never> => {
    throw new Error('the fetcher must not run');
  };
  const invalidNumbers = [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '3'];
  const shown = (value: unknown) => (typeof value === 'string' ? `"${value}"` : String(value));

  /** Run `call` with console.warn captured; returns what it resolved and the warnings. */
  async function warnedAbout<T>(call: () => Promise<T>): Promise<{ result: T; warnings: Record<string, unknown>[] }> {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const result = await call();
      return { result, warnings: warn.mock.calls.map(([text]) => JSON.parse(String(text))) };
    } finally {
      warn.mockRestore();
    }
  }

  it.each([
    ['perPage', 50],
    ['maxPages', 100],
    ['startPage', 1],
    ['concurrency', 3],
  ])('paginate falls back to the default %s (%d) and warns (D26)', async (option, fallback) => {
    for (const value of invalidNumbers) {
      const source = trackedFetcher((page, perPage) => aniListPage(page, perPage, 1));
      const { result, warnings } = await warnedAbout(() => paginate(source.fetch, 'media', { [option]: value }));
      expect(result.pageCount).toBe(1);
      if (option === 'perPage') expect(source.requests[0].perPage).toBe(50);
      expect(warnings).toEqual([
        {
          source: 'anilink',
          kind: 'invalid-option',
          hookName: 'paginate',
          message: `paginate: ${option} must be a positive integer, received ${shown(value)}; using the default ${fallback}.`,
        },
      ]);
    }
  });

  it('an odd perPage of the MAL helpers falls back to 100; maxChunks of paginateChunks to 100', async () => {
    const mal = trackedFetcher((page, perPage) => malPage(page, perPage, 3));
    const { warnings } = await warnedAbout(() => malPaginate(mal.fetch, { perPage: 2.5 }));
    expect(mal.requests.map((request) => request.perPage)).toEqual([100]);
    expect(warnings.map((warning) => warning.message)).toEqual([
      'malPaginate: perPage must be a positive integer, received 2.5; using the default 100.',
    ]);
    const chunks = await warnedAbout(() =>
      paginateChunks(async () => ({ hasNextChunk: false, lists: [] }), 'lists', { maxChunks: 0 }),
    );
    expect(chunks.warnings.map((warning) => warning.message)).toEqual([
      'paginateChunks: maxChunks must be a positive integer, received 0; using the default 100.',
    ]);
  });

  it('routes the fallback to onHookError when given, and nowhere in silent mode', async () => {
    const reported: [string, Error][] = [];
    const source = trackedFetcher((page, perPage) => aniListPage(page, perPage, 1));
    const { warnings } = await warnedAbout(() =>
      paginate(source.fetch, 'media', {
        perPage: 0,
        onHookError: (name, error) => reported.push([name, error as Error]),
      }),
    );
    expect(warnings).toEqual([]);
    expect(reported.map(([name, error]) => [name, error.message])).toEqual([
      ['paginate', 'paginate: perPage must be a positive integer, received 0; using the default 50.'],
    ]);
    const silent = await warnedAbout(() => paginate(source.fetch, 'media', { maxPages: -1, diagnostics: 'silent' }));
    expect(silent.warnings).toEqual([]);
    expect(silent.result.pageCount).toBe(1);
  });

  it('the generators fall back too', async () => {
    const source = trackedFetcher((page, perPage) => malPage(page, perPage, 3));
    const { result, warnings } = await warnedAbout(async () => {
      const pages = [];
      for await (const page of malPaginatePages(source.fetch, { perPage: 1, maxPages: 0.5 })) pages.push(page);
      return pages;
    });
    expect(result).toHaveLength(3);
    expect(warnings.map((warning) => warning.hookName)).toEqual(['malPaginatePages']);
  });

  it('rejects bad diagnostics, signals, callbacks, fetchers and item keys', async () => {
    await expect(paginate(neverCalled, 'media' as never, { diagnostics: 'loud' as never })).rejects.toThrow(
      new TypeError('paginate: diagnostics must be one of "warn", "hook" or "silent", received "loud"'),
    );
    await expect(paginate(neverCalled, 'media' as never, { signal: {} as never })).rejects.toThrow(
      new TypeError('paginate: signal must be an AbortSignal, received an object'),
    );
    await expect(paginate(neverCalled, 'media' as never, { onPage: 'x' as never })).rejects.toThrow(
      new TypeError('paginate: onPage must be a function, received "x"'),
    );
    await expect(paginateChunks(neverCalled, 'lists' as never, { onHookError: 1 as never })).rejects.toThrow(
      new TypeError('paginateChunks: onHookError must be a function, received 1'),
    );
    await expect(malPaginate(null as never)).rejects.toThrow(
      new TypeError('malPaginate: the page fetcher must be a function, received null'),
    );
    await expect(paginate(neverCalled, '' as never)).rejects.toThrow(
      new TypeError('paginate: itemsKey must be a non-empty string, received ""'),
    );
    await expect(malPaginate(neverCalled, 5 as never)).rejects.toThrow(
      new TypeError('malPaginate: options must be an object, received 5'),
    );
  });
});
