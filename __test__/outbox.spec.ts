// The outbox hands JavaScript its batches as ASCII JSON text where it pays: the non-ASCII
// characters of a result (unless most of its bytes are), a failure or a hook event are escaped
// natively (src/outbox.rs) and must come back as the exact same string, whichever message of a
// batch they are in; a mostly non-ASCII result is sent as UTF-8 and must too.
import { describe, expect, it } from 'vitest';
import type { AniLinkGraphQLError } from 'anilink-api-wrapper';
import { aniListClient, rejectionOf, useTestServer } from './support/helpers';
import { graphqlData, type TestServer } from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

/** Text that takes every escape form: BMP characters, a pair beyond the BMP, JavaScript's line separators. */
const WIDE = 'カウボーイビバップ é ß 🎬 \u2028\u2029 end';
/** Already-escaped text inside the JSON string stays literal backslashes. */
const LITERAL = 'a literal \\u00e9 and \\\\';
/** Enough ASCII beside WIDE for the result to be escaped (at most a quarter of non-ASCII bytes). */
const DESCRIPTION = 'Enough plain English beside the title to keep the wide characters a small share. '.repeat(4);

describe('non-ASCII text through the outbox', () => {
  it('results arrive exactly as the upstream sent them, escaped or not, each in its own call of one batch', async () => {
    const calls = 16;
    for (let id = 1; id <= calls; id += 1) {
      const native = id === calls ? WIDE.repeat(8) : `${WIDE} #${id}`;
      const description = id === calls ? undefined : DESCRIPTION;
      server.enqueue({ body: graphqlData('Media', { id, description, title: { native, romaji: LITERAL } }) });
    }
    const client = aniListClient(server);

    const media = await Promise.all(Array.from({ length: calls }, (_, i) => client.anilist.query.media({ id: i + 1 })));

    const natives = media.map((m) => (m as { title: { native: string } }).title.native).sort();
    const expected = Array.from({ length: calls }, (_, i) =>
      i + 1 === calls ? WIDE.repeat(8) : `${WIDE} #${i + 1}`,
    ).sort();
    expect(natives).toEqual(expected);
    for (const m of media) expect((m as { title: { romaji: string } }).title.romaji).toBe(LITERAL);
  });

  it('a batch of one result arrives intact whether its text is all ASCII or UTF-8', async () => {
    // One call at a time, so each result is a batch of its own: an escaped one is handed over
    // as ASCII (Latin-1) text, a mostly non-ASCII one as UTF-8; Latin-1 letters tell them apart.
    const client = aniListClient(server);
    for (const native of ['é'.repeat(40), `é ${DESCRIPTION}`, 'plain ASCII only']) {
      server.enqueue({ body: graphqlData('Media', { id: 1, title: { native } }) });
      const media = (await client.anilist.query.media({ id: 1 })) as { title: { native: string } };
      expect(media.title.native).toBe(native);
    }
  });

  it('failures and hook events carry non-ASCII messages unchanged', async () => {
    const errors = [{ message: `Média introuvable: ${WIDE}`, status: 404 }];
    server.enqueue({ body: { data: { Media: null }, errors } });
    const hookMessages: string[] = [];
    const client = aniListClient(server, { onError: (error) => hookMessages.push(error.message) });

    const error = await rejectionOf<AniLinkGraphQLError>(client.anilist.query.media({ id: 1 }));

    expect(error.graphqlErrors).toEqual(errors);
    expect(error.message).toBe(`The request failed with GraphQL errors: ${errors[0].message}`);
    expect(hookMessages).toEqual([error.message]);
  });
});
