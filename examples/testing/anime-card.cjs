'use strict';
// The code under test in these examples: a card that combines an AniList title with the MAL score.
const { AniLinkRestError } = require('anilink-api-wrapper');

/**
 * @param {import('anilink-api-wrapper').AniLink} aniLink
 * @param {number} aniListId
 */
async function animeCard(aniLink, aniListId) {
  const media = await aniLink.anilist.query.media({ id: aniListId }, { fields: ['id', 'idMal', 'title.romaji'] });
  let malScore = null;
  if (media.idMal) {
    try {
      malScore = (await aniLink.mal.anime.get({ id: media.idMal }, { fields: ['mean'] })).mean ?? null;
    } catch (error) {
      // An entry MAL does not know just has no score; anything else is the caller's problem.
      if (!(error instanceof AniLinkRestError && error.status === 404)) throw error;
    }
  }
  return { title: media.title.romaji, malScore };
}

module.exports = { animeCard };
