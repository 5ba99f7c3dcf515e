// The workloads every client kind performs, and the check that the parsed answer is the Media
// object the server sends (so no client can skip the parse).
//
// - `media`: `query.media({ id: 1 })` for AniLink (its default document, ~5 KB); the other
//   clients POST the 730-byte query in workload/graphql-request.json. Answered with the
//   2 KB workload/media-response.json.
// - `custom`: a small query through `anilist.custom(CUSTOM_QUERY, { id: 1 })`; the other clients
//   POST the same body. Answered with the matching 0.1 KB workload/custom-response.json.
import { readFileSync } from 'node:fs';

const fixture = (name) => readFileSync(new URL(`../workload/${name}`, import.meta.url), 'utf8');

/** A few fields of one Media: the size of query users write by hand. */
export const CUSTOM_QUERY = 'query ($id: Int) { Media(id: $id) { id title { romaji english } episodes averageScore } }';

export const WORKLOADS = {
  media: { name: 'media', path: '/', requestBody: fixture('graphql-request.json') },
  custom: {
    name: 'custom',
    path: '/custom',
    requestBody: JSON.stringify({ query: CUSTOM_QUERY, variables: { id: 1 } }),
  },
};

export const REQUEST_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

/**
 * Returns `envelope.data.Media` after checking it is the fixture's Media object.
 * @param {any} envelope the parsed response body
 */
export function mediaFromEnvelope(envelope) {
  return checkedMedia(envelope?.data?.Media);
}

/** Throws unless `media` is the fixture's Media object (id 1). */
export function checkedMedia(media) {
  if (media?.id !== 1) {
    throw new Error(`unexpected response: ${JSON.stringify(media)?.slice(0, 200)}`);
  }
  return media;
}

/** Throws on a non-2xx status, naming the client kind. */
export function checkStatus(kind, status) {
  if (status < 200 || status > 299) throw new Error(`${kind}: unexpected status ${status}`);
}
