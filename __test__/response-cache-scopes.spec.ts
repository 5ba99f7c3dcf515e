// Entries stored by hand with `ResponseCache.set` are scoped like the transport's own AniList
// queries (transport.md 1.12): a mapped mutation through the transport drops a hand-stored
// query only when its root field is in the mutation's table, or when it has no single root field.
import { describe, expect, it } from 'vitest';
import { AniLink, ResponseCache } from 'anilink-api-wrapper';
import { useTestServer } from './support/helpers';
import { graphqlData, type TestServer } from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

describe('hand-stored entries and the invalidation of a mutation', () => {
  it('keep the root field of their query as their scope', async () => {
    const cache = new ResponseCache();
    const aniLink = new AniLink({
      anilist: { baseUrl: server.url, retry: false, authToken: 'token', responseCache: cache },
    });
    server.setDefault({ body: graphqlData('SaveMediaListEntry', { id: 1 }) });
    const stored = (query: string) => {
      cache.set('POST', server.url, { query, variables: {} }, undefined, { stored: query });
      return () => cache.get('POST', server.url, { query, variables: {} });
    };
    const media = stored('{ Media(id: 1) { id } }');
    const character = stored('{ Character(id: 1) { id } }');
    const twoRoots = stored('{ Character(id: 2) { id } Staff(id: 2) { id } }');
    const unparseable = stored('{ Character(id: 3) { id }');

    await aniLink.anilist.mutation.saveMediaListEntry({ mediaId: 1, status: 'CURRENT' });

    expect(server.requests).toHaveLength(1);
    expect(media()).toBeUndefined();
    expect(character()).toEqual({ stored: '{ Character(id: 1) { id } }' });
    expect(twoRoots()).toBeUndefined();
    expect(unparseable()).toBeUndefined();
  });
});
