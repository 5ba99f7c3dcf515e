// Typing test through the package entry, as a user writes it: the typed calls on an `AniLink`
// instance (AniList queries, page queries, mutations, custom documents, MAL operations) must
// compile under --strict, and every line marked @ts-expect-error must fail to compile
// (npm run test:types).
import { AniLink, AniLinkValidationError, type MalAnime, type Media, type MediaList } from 'anilink-api-wrapper';

export async function typedCalls(aniLink: AniLink): Promise<unknown[]> {
  // Queries resolve the root value, typed from the schema.
  const romaji: string | null = (await aniLink.anilist.query.media({ id: 1 })).title.romaji;
  const media: Media = await aniLink.anilist.query.media({
    search: 'Frieren',
    type: 'ANIME',
    sort: ['POPULARITY_DESC'],
  });
  const narrowed = await aniLink.anilist.query.media(
    { id: 1 },
    { fields: ['title.romaji', 'tags.name'], timeout: 5_000 },
  );
  const viewerName: string = (await aniLink.anilist.query.viewer()).name;
  const followerName: string = (await aniLink.anilist.query.follower({ userId: 1 })).name;

  // Page queries resolve the Page object.
  const page = await aniLink.anilist.query.page.medias({ page: 1, perPage: 50, genre_in: ['Action'] });
  const hasNextPage: boolean | null = page.pageInfo.hasNextPage;
  const firstEnglish: string | null | undefined = page.media[0]?.title.english;
  const followers = (await aniLink.anilist.query.page.followers({ userId: 1 })).followers.map((user) => user.id);

  // Mutations: enum strings, FuzzyDateInput objects, typed results.
  const entry: MediaList = await aniLink.anilist.mutation.saveMediaListEntry({
    mediaId: 1,
    status: 'CURRENT',
    progress: 3,
    startedAt: { year: 2024, month: 3 },
    customLists: ['Favourites'],
  });
  const deleted: boolean | null = (await aniLink.anilist.mutation.deleteMediaListEntry({ id: entry.id })).deleted;

  // Custom documents take the caller's result type.
  const custom = await aniLink.anilist.custom<{ id: number }>('query ($id: Int) { Media(id: $id) { id } }', { id: 1 });
  const customId: number = custom.id;
  const walked = await aniLink.anilist.customPage<{ id: number }>(
    'query ($page: Int, $perPage: Int) { Page(page: $page, perPage: $perPage) { pageInfo { hasNextPage } media { id } } }',
    'media',
    undefined,
    { perPage: 50, transportOptions: { timeout: 5_000 } },
  );
  const walkedIds: number[] = walked.items.map((item) => item.id);

  // MyAnimeList operations.
  const anime: MalAnime = await aniLink.mal.anime.get({ id: 1 }, { fields: ['id', 'title'] });
  const malTitle: string = anime.title;
  const searchTitle: string | undefined = (await aniLink.mal.anime.search({ q: 'frieren', limit: 10 })).data[0]?.node
    .title;
  const me = await aniLink.mal.user.me({ fields: 'id,name' });
  const updated = await aniLink.mal.anime.updateMyListStatus({ id: 1, status: 'watching', tags: ['comfy'] });
  const removed: void = await aniLink.mal.manga.deleteFromList({ id: 2 });

  return [
    romaji,
    media,
    narrowed,
    viewerName,
    followerName,
    hasNextPage,
    firstEnglish,
    followers,
    deleted,
    customId,
    walkedIds,
    malTitle,
    searchTitle,
    me,
    updated,
    removed,
  ];
}

export function detailsOf(error: unknown): readonly string[] {
  return error instanceof AniLinkValidationError ? error.details : [];
}

export async function wrongCalls(aniLink: AniLink): Promise<void> {
  // Wrong variable types.
  // @ts-expect-error id is an Int
  await aniLink.anilist.query.media({ id: '1' });
  // @ts-expect-error type is a MediaType
  await aniLink.anilist.query.media({ id: 1, type: 'TV' });
  // @ts-expect-error sort is a list of MediaSort values
  await aniLink.anilist.query.page.medias({ sort: ['NOT_A_SORT'] });
  // @ts-expect-error perPage is an Int
  await aniLink.anilist.query.page.medias({ perPage: '50' });
  // @ts-expect-error status is a MediaListStatus
  await aniLink.anilist.mutation.saveMediaListEntry({ mediaId: 1, status: 'FINISHED' });
  // @ts-expect-error FuzzyDateInput fields are Ints
  await aniLink.anilist.mutation.saveMediaListEntry({ mediaId: 1, startedAt: { year: '2024' } });
  // @ts-expect-error fields are dot-path strings
  await aniLink.anilist.query.media({ id: 1 }, { fields: [1] });

  // Unknown variables.
  // @ts-expect-error idd is not a variable of media
  await aniLink.anilist.query.media({ idd: 1 });
  // @ts-expect-error bogus is not a variable of page.followers
  await aniLink.anilist.query.page.followers({ userId: 1, bogus: true });
  // @ts-expect-error toggleFollow takes userId
  await aniLink.anilist.mutation.toggleFollow({ user: 1 });

  // Missing required variables.
  // @ts-expect-error follower needs userId
  await aniLink.anilist.query.follower({});

  // Results keep their types.
  // @ts-expect-error a title is a string or null, not a number
  const notANumber: number = (await aniLink.anilist.query.media({ id: 1 })).title.romaji;
  // @ts-expect-error a page has no `items`; its list is named after the Page field
  await aniLink.anilist.query.page.medias().then((result) => result.items);

  // Missing required MAL params.
  // @ts-expect-error anime.get needs id
  await aniLink.mal.anime.get({});
  // @ts-expect-error anime.search needs q
  await aniLink.mal.anime.search({ limit: 5 });
  // @ts-expect-error anime.ranking needs rankingType
  await aniLink.mal.anime.ranking({ limit: 5 });
  // @ts-expect-error anime.seasonal needs season
  await aniLink.mal.anime.seasonal({ year: 2024 });
  // @ts-expect-error user.animeList needs username
  await aniLink.mal.user.animeList({ status: 'watching' });
  // @ts-expect-error forum.topic needs id
  await aniLink.mal.forum.topic({ limit: 10 });

  void notANumber;
}
