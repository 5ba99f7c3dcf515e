// anilink-api-wrapper: AniList GraphQL and MyAnimeList REST client with a native transport.
export * from './types/anilink';
export * from './types/errors';
export * from './types/transport';
export type * from './types/channels';
export * from './types/response-cache';
export * from './types/paginate';
export * from './types/helpers';
export * from './types/mal';
export * from './types/anilist.generated';
/** The schema-exact AniList result types (AniList's own nullability), opt-in: `AniListStrict.Media`. */
export * as AniListStrict from './types/anilist.strict.generated';
