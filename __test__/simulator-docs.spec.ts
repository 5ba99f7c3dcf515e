// Programs written for the real AniList API run against the simulator unchanged: the AniList
// calls the original's documentation pages show (getting started, querying, page queries,
// mutations, custom queries, pagination, helpers), written anew, with the client pointed at the
// simulator only through ANILINK_ANILIST_URL, as a user would run them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { AniLink, AniLinkAuthError } from 'anilink-api-wrapper';
import { startSimulator, type Simulator } from '../sim/anilist-simulator.mjs';

let sim: Simulator;
let previousUrl: string | undefined;
beforeAll(async () => {
  sim = await startSimulator({ quota: { limit: 1_000, windowMs: 60_000 } });
  previousUrl = process.env.ANILINK_ANILIST_URL;
  process.env.ANILINK_ANILIST_URL = sim.url;
});
afterAll(async () => {
  if (previousUrl === undefined) delete process.env.ANILINK_ANILIST_URL;
  else process.env.ANILINK_ANILIST_URL = previousUrl;
  await sim.close();
});

describe('getting started and querying', () => {
  it('a first media query, no token', async () => {
    const aniLink = new AniLink();
    const anime = await aniLink.anilist.query.media({ id: 21, type: 'ANIME' });
    const romaji: string = anime.title.romaji;
    expect(anime.id).toBe(21);
    expect(romaji).toEqual(expect.any(String));
  });

  it('real-world ids: a user id in the hundreds of thousands, a staff id, a studio', async () => {
    const aniLink = new AniLink();
    const user = await aniLink.anilist.query.user({ id: 542_244 });
    expect(user.id).toBe(542_244);
    expect(user.name.length).toBeGreaterThan(0);
    expect((await aniLink.anilist.query.staff({ id: 95_011 })).id).toBe(95_011);
    const studio = await aniLink.anilist.query.studio({ id: 1 });
    expect(typeof studio.isAnimationStudio).toBe('boolean');
    const character = await aniLink.anilist.query.character({ search: 'Spike Spiegel' });
    expect(character.id).toBeGreaterThan(0);
    const genres = await aniLink.anilist.query.genreCollection();
    expect(genres.length).toBeGreaterThan(0);
  });

  it("a character with its media connection sorted and paged (the original's nested-connection variables)", async () => {
    const aniLink = new AniLink();
    const character = await aniLink.anilist.query.character({
      id: 1,
      mediaSort: ['POPULARITY_DESC'],
      mediaPage: 1,
      mediaPerPage: 5,
    });
    const fullName: string = character.name.full;
    expect(character.id).toBe(1);
    expect(fullName).toEqual(expect.any(String));
    expect(character.media.nodes.length).toBeGreaterThan(0);
    expect(character.media.nodes.length).toBeLessThanOrEqual(5);
  });

  it('the viewer needs a token; with one it resolves', async () => {
    await expect(new AniLink().anilist.query.viewer()).rejects.toBeInstanceOf(AniLinkAuthError);
    const viewer = await new AniLink('anilist-token').anilist.query.viewer();
    expect(viewer.id).toBeGreaterThan(0);
  });
});

describe('page queries', () => {
  it('one known page with pageInfo', async () => {
    const aniLink = new AniLink();
    const page = await aniLink.anilist.query.page.medias({
      page: 1,
      perPage: 10,
      type: 'ANIME',
      sort: ['POPULARITY_DESC'],
    });
    expect(page.pageInfo.hasNextPage).toBe(true);
    expect(page.pageInfo.currentPage).toBe(1);
    expect(page.media).toHaveLength(10);
  });
});

describe('mutations', () => {
  it('saveMediaListEntry with a token echoes what it saved', async () => {
    const aniLink = new AniLink('anilist-token');
    const entry = await aniLink.anilist.mutation.saveMediaListEntry({
      mediaId: 143_271,
      status: 'CURRENT',
      score: 8.5,
      progress: 3,
    });
    expect(entry).toMatchObject({ mediaId: 143_271, status: 'CURRENT', score: 8.5, progress: 3 });
  });

  it('with fuzzyDate for startedAt', async () => {
    const aniLink = new AniLink('anilist-token');
    const startedAt = aniLink.anilist.fuzzyDate({ year: 2024, month: 4, day: 15 });
    const entry = await aniLink.anilist.mutation.saveMediaListEntry({ mediaId: 1, status: 'COMPLETED', startedAt });
    expect(entry.startedAt).toEqual({ year: 2024, month: 4, day: 15 });
  });

  it('without a token: AniLinkAuthError', async () => {
    await expect(new AniLink().anilist.mutation.deleteMediaListEntry({ id: 1 })).rejects.toBeInstanceOf(
      AniLinkAuthError,
    );
  });
});

describe('custom queries', () => {
  it('a single root resolves its value; several roots the envelope', async () => {
    const aniLink = new AniLink('anilist-token');
    const media = await aniLink.anilist.custom<{ id: number; title: { romaji: string } }>(
      'query ($id: Int) { Media(id: $id) { id title { romaji } } }',
      { id: 21 },
    );
    expect(media.id).toBe(21);
    expect(media.title.romaji).toEqual(expect.any(String));
    const both = await aniLink.anilist.custom<{ data: { Media: { id: number }; Viewer: { id: number } } }>(
      'query { Media(id: 1) { id } Viewer { id } }',
      undefined,
      { timeout: 10_000 },
    );
    expect(both.data.Media.id).toBe(1);
    expect(both.data.Viewer.id).toBeGreaterThan(0);
  });
});

describe('pagination', () => {
  it('paginate collects every page', async () => {
    const aniLink = new AniLink();
    const result = await aniLink.anilist.paginate(
      (page, perPage) => aniLink.anilist.query.page.medias({ page, perPage, type: 'ANIME' }),
      'media',
      { perPage: 50, maxPages: 10, concurrency: 4 },
    );
    expect(result.items).toHaveLength(125);
    expect(result.pageCount).toBe(3);
    expect(result.truncated).toBe(false);
  });

  it('paginatePages streams and stops early, cancelling the look-ahead', async () => {
    const aniLink = new AniLink();
    const controller = new AbortController();
    const seen: number[] = [];
    for await (const page of aniLink.anilist.paginatePages(
      (page, perPage, signal) => aniLink.anilist.query.page.medias({ page, perPage, type: 'ANIME' }, { signal }),
      { signal: controller.signal, concurrency: 4 },
    )) {
      seen.push(page.pageInfo.currentPage);
      if (page.media[0]?.id === 1) {
        controller.abort();
        break;
      }
    }
    expect(seen).toEqual([1]);
  });

  it('paginateChunks walks a list collection of a real-world user id', async () => {
    const aniLink = new AniLink();
    const chunked = await aniLink.anilist.paginateChunks(
      (chunk, perChunk) =>
        aniLink.anilist.query.mediaListCollection({ userId: 542_244, type: 'ANIME', chunk, perChunk }),
      'lists',
      { perChunk: 500, maxChunks: 20 },
    );
    expect(chunked.items.length).toBeGreaterThan(0);
    expect(chunked.chunkCount).toBe(1);
    expect(chunked.truncated).toBe(false);
  });
});

describe('helpers', () => {
  it('fuzzyDateInt as a query filter', async () => {
    const aniLink = new AniLink();
    const full = aniLink.anilist.fuzzyDateInt({ year: 2024, month: 4, day: 15 });
    expect(full).toBe(20_240_415);
    const page = await aniLink.anilist.query.page.medias({ page: 1, perPage: 50, type: 'ANIME', startDate: full });
    expect(page.media).toHaveLength(50);
  });

  it('flattenMediaListCollection and crossLink over fetched data', async () => {
    const aniLink = new AniLink();
    const collection = await aniLink.anilist.query.mediaListCollection({ userId: 542_244, type: 'ANIME' });
    const entries = aniLink.anilist.flattenMediaListCollection(collection);
    expect(entries.length).toBeGreaterThan(0);
    expect(entries[0]?.listNames.length).toBeGreaterThan(0);

    const page = await aniLink.anilist.query.page.medias({ page: 1, perPage: 50, type: 'ANIME' });
    const { anilistToMal, unmapped } = aniLink.anilist.crossLink(page.media);
    expect(anilistToMal.size + unmapped.length).toBe(50);
  });
});
