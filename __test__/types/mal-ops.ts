// Typing test for the MyAnimeList API types: the calls below must compile under
// `tsc --noEmit --strict`, and every line marked @ts-expect-error must fail to compile.
import type {
  MalAnime,
  MalAnimeListEntry,
  MalAnimeListStatus,
  MalAnimeNode,
  MalForumTopic,
  MalManga,
  MalMangaListStatus,
  MalPage,
  MalUser,
  MyAnimeListApi,
} from '../../types/mal';

declare const mal: MyAnimeListApi;

// Reads take `(params, options?)`; `fields` is a string or a string array.
export const title: Promise<string> = mal.anime.get({ id: 1 }).then((anime: MalAnime) => anime.title);
export const mean: Promise<number | undefined> = mal.anime
  .get({ id: 1 }, { fields: ['id', 'title', 'mean'], timeout: 5_000 })
  .then((anime) => anime.mean);
export const searched: Promise<MalPage<MalAnimeNode>> = mal.anime.search(
  { q: 'frieren', limit: 10, offset: 0, nsfw: false },
  { fields: 'id,title' },
);
export const seasonalYear = mal.anime
  .seasonal({ year: 2024, season: 'fall', sort: 'anime_score', limit: 500 })
  .then((page) => page.season?.year);
export const rank: Promise<number | undefined> = mal.anime
  .ranking({ rankingType: 'bypopularity' })
  .then((page) => page.data[0]?.ranking.rank);
export const mangaRanking = mal.manga.ranking({ rankingType: 'manhwa', offset: 500 });
export const manga: Promise<MalManga> = mal.manga.get({ id: 2 }, { fields: ['authors{first_name}'] });
export const mangaSearch = mal.manga.search({ q: 'berserk' });

// The object form takes `fields` in the params object too (D25), sent as `options.fields` is.
export const getWithFields: Promise<MalAnime> = mal.anime.get({ id: 21, fields: ['id', 'title'] });
export const mangaWithFields: Promise<MalManga> = mal.manga.get({ id: 2, fields: 'id,title' });
export const searchWithFields: Promise<MalPage<MalAnimeNode>> = mal.anime.search({ q: 'x', limit: 5, fields: ['id'] });
export const everyReadWithFields = [
  mal.anime.seasonal({ year: 2024, season: 'fall', fields: ['id'] }),
  mal.anime.ranking({ rankingType: 'all', fields: ['rank'] }),
  mal.manga.search({ q: 'x', fields: 'id' }),
  mal.manga.ranking({ rankingType: 'all', fields: ['id'] }),
  mal.user.get({ username: '@me', fields: ['anime_statistics'] }),
  mal.user.animeList({ username: 'x', fields: ['list_status'] }),
  mal.user.mangaList({ username: 'x', fields: ['list_status'] }),
  mal.forum.topics({ q: 'x', fields: ['id'] }),
  mal.forum.topic({ id: 1, fields: ['id'] }),
  mal.anime.updateMyListStatus({ id: 1, score: 8, fields: ['score'] }),
  mal.manga.updateMyListStatus({ id: 1, score: 8, fields: 'score' }),
];

// Options-first operations take the options object as their only argument.
export const suggestions: Promise<MalPage<MalAnimeNode>> = mal.anime.suggestions();
export const suggestionsWithFields = mal.anime.suggestions({ fields: ['id'] });
export const me: Promise<MalUser> = mal.user.me({ fields: 'id,name,anime_statistics' });
export const boards = mal.forum.boards().then((result) => result.categories[0]?.boards[0]?.subboards);

// List-status writes accept camelCase or MAL's snake_case keys.
export const updated: Promise<MalAnimeListStatus> = mal.anime.updateMyListStatus({
  id: 1,
  status: 'watching',
  numWatchedEpisodes: 3,
  is_rewatching: false,
  tags: ['favourite'],
});
export const mangaUpdated: Promise<MalMangaListStatus> = mal.manga.updateMyListStatus({
  id: 2,
  num_chapters_read: 12,
  isRereading: true,
  rereadValue: 3,
});
export const deleted: Promise<void> = mal.anime.deleteFromList({ id: 1 });
export const mangaDeleted: Promise<void> = mal.manga.deleteFromList({ id: 2 });

// Users, lists and the forum.
export const someone: Promise<MalUser> = mal.user.get({ username: '@me' });
export const watching: Promise<MalPage<MalAnimeListEntry>> = mal.user.animeList({
  username: 'someone',
  status: 'watching',
  sort: 'list_updated_at',
  limit: 1000,
});
export const reading = mal.user.mangaList({ username: '@me', sort: 'manga_title' });
export const topics: Promise<MalPage<MalForumTopic>> = mal.forum.topics();
export const filteredTopics = mal.forum.topics({ boardId: 5, topicUserName: 'someone', sort: 'recent' });
export const posts = mal.forum.topic({ id: 481, limit: 10 }).then((topic) => topic.data.posts[0]?.body);

// Pagination helpers infer the item type from the fetcher.
export const allWatching: Promise<MalAnimeListEntry[]> = mal
  .paginate((page, perPage) => mal.user.animeList({ username: '@me', limit: perPage, offset: (page - 1) * perPage }), {
    perPage: 100,
    maxPages: 5,
    concurrency: 2,
    onPage: (page) => void page.data.length,
  })
  .then((result) => result.items);
export async function firstTitles(): Promise<string[]> {
  const titles: string[] = [];
  for await (const page of mal.paginatePages((page, perPage) =>
    mal.anime.search({ q: 'x', limit: perPage, offset: (page - 1) * perPage }),
  )) {
    titles.push(...page.data.map((entry) => entry.node.title));
  }
  return titles;
}

// ---- wrong calls ----

// @ts-expect-error id is required
mal.anime.get({});
// @ts-expect-error id is a number
mal.anime.get({ id: '1' });
// @ts-expect-error fields are strings
mal.anime.get({ id: 1 }, { fields: [1] });
// @ts-expect-error fields in the params object are strings too
mal.anime.get({ id: 1, fields: [1] });
// @ts-expect-error fields in the params object are strings too
mal.anime.search({ q: 'x', fields: 5 });
// @ts-expect-error q is required
mal.anime.search({ limit: 5 });
// @ts-expect-error limit is a number
mal.manga.search({ q: 'x', limit: '5' });
// @ts-expect-error "autumn" is not a MAL season
mal.anime.seasonal({ year: 2024, season: 'autumn' });
// @ts-expect-error "novels" is a manga ranking
mal.anime.ranking({ rankingType: 'novels' });
// @ts-expect-error "tv" is an anime ranking
mal.manga.ranking({ rankingType: 'tv' });
// @ts-expect-error anime list statuses differ from manga ones
mal.anime.updateMyListStatus({ id: 1, status: 'reading' });
// @ts-expect-error episode counts belong to anime entries
mal.manga.updateMyListStatus({ id: 1, numWatchedEpisodes: 1 });
// @ts-expect-error tags are strings
mal.anime.updateMyListStatus({ id: 1, tags: [1] });
// @ts-expect-error deleteFromList resolves nothing
export const notAnEntry: Promise<MalAnimeListStatus> = mal.anime.deleteFromList({ id: 1 });
// @ts-expect-error options-first operations take options, not params
mal.anime.suggestions({ fields: 5 });
// @ts-expect-error username is required
mal.user.get({});
// @ts-expect-error manga sorts do not apply to anime lists
mal.user.animeList({ username: 'x', sort: 'manga_title' });
// @ts-expect-error the only forum topic sort is "recent"
mal.forum.topics({ sort: 'oldest' });
// @ts-expect-error a MAL page has data, not items
mal.paginate(async () => ({ items: [] }));
// @ts-expect-error items keep their type
export const wrongItems: Promise<number[]> = mal
  .paginate(() => mal.anime.search({ q: 'x' }))
  .then((result) => result.items);
