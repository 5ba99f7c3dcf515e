// An example for vitest users: the code under test talks to a local upstream, never the network.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AniLinkGraphQLError, AniLinkNetworkError, destroyCachedAgents } from 'anilink-api-wrapper';
import { startTestUpstream, type TestUpstream } from 'anilink-api-wrapper/testing';
import { animeCard } from './anime-card.cjs';

let upstream: TestUpstream;
beforeAll(async () => {
  upstream = await startTestUpstream();
});
beforeEach(() => upstream.reset());
afterAll(async () => {
  destroyCachedAgents();
  await upstream.close();
});

describe('animeCard', () => {
  it('combines the AniList title and the MAL score', async () => {
    upstream.anilist.reply('Media', { data: { Media: { id: 1, idMal: 1, title: { romaji: 'Cowboy Bebop' } } } });
    upstream.mal.reply('/anime/1', { body: { id: 1, mean: 8.75 } });

    expect(await animeCard(upstream.client(), 1)).toEqual({ title: 'Cowboy Bebop', malScore: 8.75 });
    expect(upstream.anilist.requests[0].variables).toEqual({ id: 1 });
    upstream.assertDone();
  });

  it('rides out a 429: the client waits for Retry-After and retries', async () => {
    upstream.anilist.reply(
      'Media',
      {
        status: 429,
        retryAfter: 0.1,
        rateLimit: { limit: 90, remaining: 0 },
        errors: [{ message: 'Too Many Requests.', status: 429 }],
      },
      { data: { Media: { id: 2, idMal: null, title: { romaji: 'Trigun' } } } },
    );

    expect(await animeCard(upstream.client(), 2)).toEqual({ title: 'Trigun', malScore: null });
    expect(upstream.anilist.requests).toHaveLength(2);
  });

  it('passes a GraphQL error envelope on', async () => {
    upstream.anilist.reply('Media', { status: 200, errors: [{ message: 'Private media.', status: 403 }] });

    await expect(animeCard(upstream.client({ anilist: { retry: false } }), 3)).rejects.toBeInstanceOf(
      AniLinkGraphQLError,
    );
  });

  it('shows no score when MAL answers 404', async () => {
    upstream.anilist.reply('Media', { data: { Media: { id: 4, idMal: 404, title: { romaji: 'Lost' } } } });
    upstream.mal.reply('/anime/404', { status: 404 });

    expect(await animeCard(upstream.client(), 4)).toEqual({ title: 'Lost', malScore: null });
  });

  it('fails with a network error when the connection drops', async () => {
    upstream.anilist.replyAlways('Media', { drop: 'before-response' });

    await expect(animeCard(upstream.client({ anilist: { retry: false } }), 5)).rejects.toBeInstanceOf(
      AniLinkNetworkError,
    );
  });
});
