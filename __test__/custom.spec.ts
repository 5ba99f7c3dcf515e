// `anilist.custom` and `anilist.customPage` end to end (api.md §9.1, §8; decisions D1): a
// caller-written document goes out verbatim with its variables; one root resolves its value,
// several roots the `{ data }` envelope; malformed documents are rejected locally; mutation
// documents are not retried by default; customPage walks `$page`/`$perPage` until
// `pageInfo.hasNextPage` is false and refuses documents it cannot walk, before any request.
import { describe, expect, it } from 'vitest';
import { AniLink, AniLinkApiError, AniLinkGraphQLError, AniLinkValidationError } from 'anilink-api-wrapper';
import { rejectionOf, sentBody, useTestServer } from './support/helpers';
import { graphqlData, type TestServer } from './support/test-server';

const TOKEN = 'anilist-token';
const unavailable = { status: 503, body: { errors: [{ message: 'Service Unavailable', status: 503 }] } };

let server: TestServer;
let aniLink: AniLink;
useTestServer((started) => {
  server = started;
  aniLink = new AniLink({ anilist: { baseUrl: server.url, authToken: TOKEN } });
});

describe('anilist.custom', () => {
  it('sends the document and variables verbatim and resolves the single root value', async () => {
    const document = 'query ($id: Int) { Media(id: $id) { id title { romaji } } }';
    const media = { id: 1, title: { romaji: 'Cowboy Bebop' } };
    server.enqueue({ body: graphqlData('Media', media) });

    await expect(aniLink.anilist.custom(document, { id: 1 })).resolves.toEqual(media);

    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toMatch(/^application\/json\b/);
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(sentBody(request)).toEqual({ query: document, variables: { id: 1 } });
  });

  it('sends no variables as an empty object', async () => {
    server.enqueue({ body: graphqlData('GenreCollection', ['Action']) });

    await expect(aniLink.anilist.custom('{ GenreCollection }')).resolves.toEqual(['Action']);

    expect(sentBody(server.requests[0])).toEqual({ query: '{ GenreCollection }', variables: {} });
  });

  it('unwraps a single aliased root under its alias', async () => {
    server.enqueue({ body: graphqlData('bebop', { id: 1 }) });

    await expect(aniLink.anilist.custom('query { bebop: Media(id: 1) { id } }')).resolves.toEqual({ id: 1 });
  });

  it('resolves the { data } envelope when the document has several roots', async () => {
    const envelope = { data: { first: { id: 1 }, second: { id: 5 } } };
    server.enqueue({ body: envelope });

    const result = await aniLink.anilist.custom('query { first: Media(id: 1) { id } second: Media(id: 5) { id } }');

    expect(result).toEqual(envelope);
  });

  it('rejects GraphQL errors as AniLinkGraphQLError', async () => {
    server.enqueue({ body: { data: { Media: null }, errors: [{ message: 'Not Found.', status: 404 }] } });

    const error = await rejectionOf<AniLinkGraphQLError>(aniLink.anilist.custom('query { Media(id: -1) { id } }'));

    expect(error).toBeInstanceOf(AniLinkGraphQLError);
    expect(error.status).toBe(404);
    expect(error.message).toBe('The request failed with GraphQL errors: Not Found.');
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    ['an empty document', ''],
    ['unbalanced braces', 'query { Media(id: 1) { id }'],
    ['a stray closing brace', 'query { Media(id: 1) { id } } }'],
    ['text that is not GraphQL', 'give me the media with id 1'],
    ['an empty selection', 'query { }'],
    ['two anonymous operations', '{ Media(id: 1) { id } } { Viewer { id } }'],
    ['a fragment without an operation', 'fragment F on Media { id }'],
  ])('rejects %s with AniLinkValidationError, nothing sent', async (_label, document) => {
    const error = await rejectionOf(aniLink.anilist.custom(document));

    expect(error).toBeInstanceOf(AniLinkValidationError);
    expect((error as AniLinkValidationError).details.length).toBeGreaterThan(0);
    expect(server.requests).toHaveLength(0);
  });

  it('sends a repeated document whole each time, and a document one character apart as itself', async () => {
    // The client keeps documents it has checked (prepared_documents.rs): repeats must still go
    // out verbatim, and a near-identical document must not be taken for a kept one.
    const first = 'query ($id: Int) { Media(id: $id) { id } }';
    const second = 'query ($id: Int) { Media(id: $id) { idx } }';
    for (let i = 0; i < 3; i += 1) server.enqueue({ body: graphqlData('Media', { id: i }) });

    await aniLink.anilist.custom(first, { id: 1 });
    await aniLink.anilist.custom(first, { id: 2 });
    await aniLink.anilist.custom(second, { id: 3 });

    expect(server.requests.map((request) => sentBody(request))).toEqual([
      { query: first, variables: { id: 1 } },
      { query: first, variables: { id: 2 } },
      { query: second, variables: { id: 3 } },
    ]);
  });

  it('rejects a malformed document every time it is called, with the same problems', async () => {
    const document = 'query { Media(id: 1) { id }';
    const errors = [];
    for (let i = 0; i < 3; i += 1) errors.push(await rejectionOf(aniLink.anilist.custom(document)));

    for (const error of errors) expect(error).toBeInstanceOf(AniLinkValidationError);
    const details = errors.map((error) => (error as AniLinkValidationError).details);
    expect(details[1]).toEqual(details[0]);
    expect(details[2]).toEqual(details[0]);
    expect(server.requests).toHaveLength(0);
  });

  it('rejects variables that are not an object, nothing sent', async () => {
    await expect(aniLink.anilist.custom('query { Viewer { id } }', 'id=1' as never)).rejects.toBeInstanceOf(
      AniLinkValidationError,
    );
    expect(server.requests).toHaveLength(0);
  });
});

describe('anilist.custom retries (decisions D1)', () => {
  it.each([
    ['a named mutation', 'mutation Save($id: Int) { SaveMediaListEntry(mediaId: $id) { id } }'],
    ['an anonymous mutation after a comment', '# keep it\nmutation { ToggleFollow(userId: 1) { id } }'],
    [
      'a mutation after a fragment definition',
      'fragment F on MediaList { id }\nmutation { SaveMediaListEntry(mediaId: 1) { ...F } }',
    ],
  ])('sends %s once by default, even on a 503', async (_label, document) => {
    server.setDefault(unavailable);

    const error = await rejectionOf<AniLinkApiError>(aniLink.anilist.custom(document, { id: 1 }));

    expect(error).toBeInstanceOf(AniLinkApiError);
    expect(error.status).toBe(503);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a query document under the default policy', async () => {
    server.enqueue(unavailable, { body: graphqlData('Viewer', { id: 3 }) });

    await expect(aniLink.anilist.custom('query { Viewer { id } }')).resolves.toEqual({ id: 3 });
    expect(server.requests).toHaveLength(2);
  });

  it('retries a mutation document when the request opts in with a policy', async () => {
    server.setDefault(unavailable);

    await expect(
      aniLink.anilist.custom('mutation { ToggleFollow(userId: 1) { id } }', undefined, {
        retry: { maxRetries: 2, baseDelayMs: 5, jitter: false },
      }),
    ).rejects.toBeInstanceOf(AniLinkApiError);
    expect(server.requests).toHaveLength(3);
  });
});

describe('anilist.customPage', () => {
  const PAGE_DOCUMENT = `query ($page: Int, $perPage: Int, $search: String) {
    Page(page: $page, perPage: $perPage) {
      pageInfo { hasNextPage currentPage }
      media(search: $search) { id }
    }
  }`;

  /** Seven media, served `perPage` at a time, page numbers from the request's variables. */
  function serveSevenMedia(): void {
    server.setDefault((request) => {
      const { page, perPage } = sentBody(request).variables as { page: number; perPage: number };
      const first = (page - 1) * perPage;
      const ids = Array.from({ length: Math.max(0, Math.min(perPage, 7 - first)) }, (_, index) => first + index + 1);
      return {
        body: graphqlData('Page', {
          pageInfo: { hasNextPage: first + perPage < 7, currentPage: page },
          media: ids.map((id) => ({ id })),
        }),
      };
    });
  }

  it('walks the pages through $page and $perPage, keeping the caller variables', async () => {
    serveSevenMedia();
    let requestStarts = 0;

    const result = await aniLink.anilist.customPage<{ id: number }>(
      PAGE_DOCUMENT,
      'media',
      { search: 'bebop' },
      {
        perPage: 3,
        concurrency: 1,
        transportOptions: {
          onRequestStart: () => {
            requestStarts += 1;
          },
        },
      },
    );

    expect(result.items.map((media) => media.id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(result.pageCount).toBe(3);
    expect(result.truncated).toBe(false);
    expect(server.requests.map((request) => sentBody(request))).toEqual(
      [1, 2, 3].map((page) => ({ query: PAGE_DOCUMENT, variables: { search: 'bebop', page, perPage: 3 } })),
    );
    expect(requestStarts).toBe(3);
  });

  it('stops at maxPages and says so', async () => {
    serveSevenMedia();

    const result = await aniLink.anilist.customPage(PAGE_DOCUMENT, 'media', undefined, {
      perPage: 2,
      maxPages: 2,
      concurrency: 1,
    });

    expect(result.items).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }]);
    expect(result.truncated).toBe(true);
    expect(server.requests).toHaveLength(2);
  });

  it.each([
    ['a document without Page', 'query ($page: Int, $perPage: Int) { Media(id: 1) { id } }'],
    [
      'a Page next to another root',
      'query ($page: Int, $perPage: Int) { Page(page: $page, perPage: $perPage) { pageInfo { hasNextPage } media { id } } Viewer { id } }',
    ],
    [
      'a Page without pageInfo { hasNextPage }',
      'query ($page: Int, $perPage: Int) { Page(page: $page, perPage: $perPage) { pageInfo { total } media { id } } }',
    ],
    [
      'a document without $page',
      'query ($perPage: Int) { Page(page: 1, perPage: $perPage) { pageInfo { hasNextPage } media { id } } }',
    ],
    [
      'a document without $perPage',
      'query ($page: Int) { Page(page: $page, perPage: 50) { pageInfo { hasNextPage } media { id } } }',
    ],
    [
      'a mutation',
      'mutation ($page: Int, $perPage: Int) { Page(page: $page, perPage: $perPage) { pageInfo { hasNextPage } } }',
    ],
    [
      'a malformed document',
      'query ($page: Int, $perPage: Int) { Page(page: $page, perPage: $perPage) { pageInfo { hasNextPage }',
    ],
  ])('rejects %s with AniLinkValidationError, nothing sent', async (_label, document) => {
    const error = await rejectionOf(aniLink.anilist.customPage(document, 'media'));

    expect(error).toBeInstanceOf(AniLinkValidationError);
    expect((error as AniLinkValidationError).details.length).toBeGreaterThan(0);
    expect(server.requests).toHaveLength(0);
  });

  it('rejects a page whose response lacks the items key', async () => {
    server.enqueue({ body: graphqlData('Page', { pageInfo: { hasNextPage: false }, media: [] }) });

    await expect(
      aniLink.anilist.customPage(PAGE_DOCUMENT, 'characters', undefined, { concurrency: 1 }),
    ).rejects.toBeInstanceOf(AniLinkValidationError);
    expect(server.requests).toHaveLength(1);
  });
});
