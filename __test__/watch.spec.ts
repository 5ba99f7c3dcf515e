// The pollers aniLink.anilist.watch.notifications / .activity (api.md §9.1): new items only,
// oldest first, a baseline without `since`, option checks, and a clean end on abort.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AniLink } from 'anilink-api-wrapper';
import type { RecordedRequest, TestServer } from './support/test-server';
import { useTestServer } from './support/helpers';

let server: TestServer;
useTestServer((started) => {
  server = started;
});
afterEach(() => {
  vi.useRealTimers();
});

interface Item {
  id: number;
  createdAt: number;
}

/** The upstream's items, newest first, served in pages like AniList. */
let feed: Item[] = [];
function serveFeed(itemsKey: string): void {
  server.handle((request: RecordedRequest) => {
    const { page, perPage } = (request.json as { variables: { page: number; perPage: number } }).variables;
    const slice = feed.slice((page - 1) * perPage, page * perPage);
    return {
      body: {
        data: {
          Page: { pageInfo: { currentPage: page, hasNextPage: page * perPage < feed.length }, [itemsKey]: slice },
        },
      },
    };
  });
}

const client = () => new AniLink({ anilist: { baseUrl: server.url, authToken: 'token' } });
const item = (id: number, createdAt: number): Item => ({ id, createdAt });

describe('watch.notifications', () => {
  it('yields the items newer than `since`, oldest first, across pages', async () => {
    feed = [item(5, 500), item(4, 400), item(3, 300), item(2, 200), item(1, 100)];
    serveFeed('notifications');
    const controller = new AbortController();
    const watch = client().anilist.watch.notifications({
      since: 200,
      perPage: 2,
      signal: controller.signal,
      type: 'AIRING',
    });

    const seen: Item[] = [];
    for await (const notification of watch) {
      seen.push(notification as Item);
      if (seen.length === 4) controller.abort();
    }

    expect(seen.map((n) => n.id)).toEqual([2, 3, 4, 5]);
    const variables = server.requests.map((r) => (r.json as { variables: Record<string, unknown> }).variables);
    expect(variables[0]).toMatchObject({ page: 1, perPage: 2, type: 'AIRING' });
    expect(variables.map((v) => v.page)).toEqual([1, 2, 3]);
  });

  it('without `since`, the first poll is a baseline and later polls yield only what is new', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    feed = [item(2, 200), item(1, 100)];
    serveFeed('notifications');
    const controller = new AbortController();
    const watch = client().anilist.watch.notifications({ intervalMs: 1, signal: controller.signal });

    const next = watch.next();
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
    feed = [item(4, 400), item(3, 300), ...feed];
    await vi.advanceTimersByTimeAsync(10_000); // intervalMs is clamped to 10 s
    await expect(next).resolves.toEqual({ done: false, value: item(3, 300) });
    await expect(watch.next()).resolves.toEqual({ done: false, value: item(4, 400) });
    controller.abort();
    await expect(watch.next()).resolves.toEqual({ done: true, value: undefined });
    expect(server.requests).toHaveLength(2);
  });

  it('rejects invalid options with a TypeError before any request', () => {
    const watch = client().anilist.watch;
    expect(() => watch.notifications({ intervalMs: 0 })).toThrow(
      'watch.notifications: intervalMs must be a finite number > 0',
    );
    expect(() => watch.notifications({ since: -1 })).toThrow(
      'watch.notifications: since must be a Unix time in seconds',
    );
    expect(() => watch.activity({ userID: 1 } as never)).toThrow('watch.activity: unknown option "userID"');
    expect(server.requests).toHaveLength(0);
  });
});

describe('watch.activity', () => {
  it('polls page.activities sorted newest first by default', async () => {
    feed = [item(9, 900)];
    serveFeed('activities');
    const controller = new AbortController();

    for await (const activity of client().anilist.watch.activity({ since: 0, userId: 7, signal: controller.signal })) {
      expect(activity).toEqual(item(9, 900));
      controller.abort();
    }

    const { query, variables } = server.requests[0].json as { query: string; variables: Record<string, unknown> };
    expect(query).toContain('activities');
    expect(variables).toMatchObject({ userId: 7, sort: ['ID_DESC'], page: 1 });
  });
});
