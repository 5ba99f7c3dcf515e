// The original's nested-connection variables, end to end against the AniList simulator (which
// validates and executes documents with graphql-js against AniList's schema, and pages
// connections by their `page`/`perPage` arguments): the default documents of single results
// select the connections, and the variables reach them. A page past the end is empty, so an
// empty list proves the page variable was bound to that connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AniLink, destroyCachedAgents } from 'anilink-api-wrapper';
import { startSimulator, type Simulator } from '../sim/anilist-simulator.mjs';

let sim: Simulator;
let aniLink: AniLink;

beforeAll(async () => {
  sim = await startSimulator({});
  aniLink = new AniLink(undefined, { baseUrl: sim.url, retry: false });
});
afterAll(async () => {
  destroyCachedAgents();
  await sim.close();
});

const PAST_THE_END = 99;

describe('nested connections against the simulator', () => {
  it('character: its media appearances, paged by mediaPage', async () => {
    const character = await aniLink.anilist.query.character({
      id: 5,
      mediaSort: ['POPULARITY_DESC'],
      mediaOnList: false,
    });
    expect(character.media.nodes.length).toBeGreaterThan(0);
    expect(typeof character.media.nodes[0]?.title.romaji).toBe('string');

    const paged = await aniLink.anilist.query.character({ id: 5, mediaPage: PAST_THE_END, mediaPerPage: 1 });
    expect(paged.media.nodes).toEqual([]);
  });

  it('staff: staffMedia, characters and characterMedia, each paged by its own variables', async () => {
    const staff = await aniLink.anilist.query.staff({
      id: 7,
      staffMediaType: 'ANIME',
      charactersSort: ['FAVOURITES_DESC'],
    });
    expect(
      staff.staffMedia.nodes.length * staff.characters.nodes.length * staff.characterMedia.nodes.length,
    ).toBeGreaterThan(0);

    const paged = await aniLink.anilist.query.staff({
      id: 7,
      staffMediaPage: PAST_THE_END,
      characterMediaPage: PAST_THE_END,
    });
    expect(paged.staffMedia.nodes).toEqual([]);
    expect(paged.characterMedia.nodes).toEqual([]);
    expect(paged.characters.nodes.length).toBeGreaterThan(0);
  });

  it('studio: its media, paged by mediaPage', async () => {
    const studio = await aniLink.anilist.query.studio({ id: 3, mediaIsMain: true, mediaPage: PAST_THE_END });
    expect(studio.media.nodes).toEqual([]);
  });

  it('page items reach a connection through fields', async () => {
    const page = await aniLink.anilist.query.page.characters(
      { page: 1, perPage: 2, mediaPage: PAST_THE_END },
      { fields: ['name.full', 'media.nodes.title.romaji'] },
    );
    expect(page.characters).toHaveLength(2);
    for (const character of page.characters) expect(character.media.nodes).toEqual([]);
  });

  it('siteStatistics: the trend connections, paged by usersPage', async () => {
    const statistics = await aniLink.anilist.query.siteStatistics({
      usersSort: ['DATE_DESC'],
      usersPage: PAST_THE_END,
    });
    expect(statistics.users.nodes).toEqual([]);
    expect(statistics.anime.nodes.length).toBeGreaterThan(0);
  });
});
