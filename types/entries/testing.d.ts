// anilink-api-wrapper/testing: local AniList and MAL upstreams for users' tests.
export * from '../testing';
