// anilink-api-wrapper: AniList GraphQL and MyAnimeList REST client with a native transport.
export * from '../anilink';
export * from '../errors';
export * from '../transport';
/** The payloads of the diagnostics channels (docs/hooks-and-diagnostics.md, "Observability"). */
export type {
  AdmissionMessage,
  AttemptEndMessage,
  AttemptStartMessage,
  BreakerMessage,
  CallChannelContext,
  CallEvent,
  SharedStateMessage,
} from '../wire.generated';
export * from '../response-cache';
export * from '../paginate';
export * from '../helpers';
export * from '../mal';
export * from '../anilist.generated';
/** The schema-exact AniList result types (AniList's own nullability), opt-in: `AniListStrict.Media`. */
export * as AniListStrict from '../anilist.strict.generated';
