// Typing test for the generated AniList operation types: the calls below must compile under
// `tsc --noEmit --strict`, and every line marked @ts-expect-error must fail to compile.
import type {
  AniListMutationOperations,
  AniListPageOperations,
  AniListQueryOperations,
  FuzzyDateInput,
  Media,
  MediaListStatus,
} from '../../types/anilist.generated';

declare const query: AniListQueryOperations;
declare const page: AniListPageOperations;
declare const mutation: AniListMutationOperations;

// Results: every field is a plain T, as in the original's typings (AniListStrict has the nulls).
export const romaji: Promise<string> = query.media({ id: 1 }).then((media) => media.title.romaji);
export const mediaId: Promise<number> = query
  .media({ search: 'Frieren', type: 'ANIME' })
  .then((media: Media) => media.id);
export const tagNames: Promise<string[]> = query
  .media({ id: 1 }, { fields: ['tags.name'], timeout: 5_000 })
  .then((media) => media.tags.map((tag) => tag.name));

// Operations whose variables are all optional take `variables?`.
export const viewerName: Promise<string> = query.viewer().then((user) => user.name);
export const genres: Promise<string[]> = query.genreCollection();

// Page operations return `{ pageInfo, <items> }`.
export const hasNextPage: Promise<boolean> = page
  .medias({ page: 1, perPage: 50, sort: ['POPULARITY_DESC'], genre_in: ['Action'] })
  .then((result) => result.pageInfo.hasNextPage);
export const firstTitle = page.medias().then((result) => result.media[0]?.title.english);
export const followerNames = page.followers({ userId: 1 }).then((result) => result.followers.map((user) => user.name));

// Unions come back as unions.
export const activityKind = query.activity({ id: 1 }).then((activity) => activity.type);

// Mutations: enums are string unions, FuzzyDateInput is an object.
const completedAt: FuzzyDateInput = { year: 2024, month: 3 };
const status: MediaListStatus = 'COMPLETED';
export const saved = mutation.saveMediaListEntry({ mediaId: 1, status, completedAt, customLists: ['Favourites'] });
export const deleted: Promise<boolean> = mutation.deleteMediaListEntry({ id: 1 }).then((result) => result.deleted);

// Wrong variable type.
// @ts-expect-error id is an Int
query.media({ id: '1' });
// @ts-expect-error status is a MediaListStatus
mutation.saveMediaListEntry({ mediaId: 1, status: 'FINISHED' });
// @ts-expect-error sort is a list of MediaSort
page.medias({ sort: 'POPULARITY_DESC' });

// Unknown variable.
// @ts-expect-error idd is not a variable of query.media
query.media({ idd: 1 });
// @ts-expect-error viewer takes no variables
query.viewer({ id: 1 });

// Missing required variable.
// @ts-expect-error Follower needs userId (Int!)
query.follower({});
// @ts-expect-error Markdown needs markdown (String!)
query.markdown();
// @ts-expect-error query.media requires a variables object
query.media();

// `fields` only exists on the operations that accept it.
// @ts-expect-error query.viewer does not accept fields
query.viewer(undefined, { fields: ['id'] });
