// An example for Jest users (CommonJS, no transform): the code under test talks to a local
// upstream, never the network.
const { AniLinkGraphQLError, AniLinkNetworkError, destroyCachedAgents } = require('anilink-api-wrapper');
const { startTestUpstream } = require('anilink-api-wrapper/testing');
const { animeCard } = require('./anime-card.cjs');

let upstream;
beforeAll(async () => {
  upstream = await startTestUpstream();
});
beforeEach(() => upstream.reset());
afterAll(async () => {
  destroyCachedAgents();
  await upstream.close();
});

test('combines the AniList title and the MAL score', async () => {
  upstream.anilist.reply('Media', { data: { Media: { id: 1, idMal: 1, title: { romaji: 'Cowboy Bebop' } } } });
  upstream.mal.reply('/anime/1', { body: { id: 1, mean: 8.75 } });

  await expect(animeCard(upstream.client(), 1)).resolves.toEqual({ title: 'Cowboy Bebop', malScore: 8.75 });
  upstream.assertDone();
});

test('rides out a 429: the client waits for Retry-After and retries', async () => {
  upstream.anilist.reply(
    'Media',
    { status: 429, retryAfter: 0.1, errors: [{ message: 'Too Many Requests.', status: 429 }] },
    { data: { Media: { id: 2, idMal: null, title: { romaji: 'Trigun' } } } },
  );

  await expect(animeCard(upstream.client(), 2)).resolves.toEqual({ title: 'Trigun', malScore: null });
  expect(upstream.anilist.requests).toHaveLength(2);
});

test('passes a GraphQL error envelope on', async () => {
  upstream.anilist.reply('Media', { status: 200, errors: [{ message: 'Private media.', status: 403 }] });

  await expect(animeCard(upstream.client({ anilist: { retry: false } }), 3)).rejects.toBeInstanceOf(
    AniLinkGraphQLError,
  );
});

test('shows no score when MAL answers 404', async () => {
  upstream.anilist.reply('Media', { data: { Media: { id: 4, idMal: 404, title: { romaji: 'Lost' } } } });
  upstream.mal.reply('/anime/404', { status: 404 });

  await expect(animeCard(upstream.client(), 4)).resolves.toEqual({ title: 'Lost', malScore: null });
});

test('fails with a network error when the connection drops', async () => {
  upstream.anilist.replyAlways('Media', { drop: 'before-response' });

  await expect(animeCard(upstream.client({ anilist: { retry: false } }), 5)).rejects.toBeInstanceOf(
    AniLinkNetworkError,
  );
});
