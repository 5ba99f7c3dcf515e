// The fixed workload every client kind performs: the same GraphQL POST, and a check that the
// parsed answer is the Media object the server sends (so no client can skip the parse).
import { readFileSync } from 'node:fs';

/** The request body, shared with the Rust floor client (bench/workload/). */
export const REQUEST_BODY = readFileSync(new URL('../workload/graphql-request.json', import.meta.url), 'utf8');

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
