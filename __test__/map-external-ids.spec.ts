// mapExternalIds (api.md §9.1) against a local stand-in for the ARM id-mapping service, and
// aniLink.mal.auth. The service's base URL comes from the `armUrl` option or ANILINK_ARM_URL;
// its requests go through the native transport, without any credentials of a slot.
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';

import {
  AniLink,
  AniLinkRestError,
  buildMalAuthorizationUrl,
  getMalAccessToken,
  mapExternalIds,
  type RequestContext,
} from 'anilink-api-wrapper';
import { mapExternalIds as fromAniListEntry } from 'anilink-api-wrapper/anilist';
import { onlyRequest, rejectionOf, useTestServer } from './support/helpers';
import type { RecordedRequest, TestServer } from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});
afterEach(() => {
  delete process.env.ANILINK_ARM_URL;
});

const IDS_PATH = '/api/v2/ids';

/** ARM's answer: one relation per id sent, in order; `known` maps AniList ids to MAL ids. */
function armAnswering(known: Record<number, number>): void {
  const byMal = Object.fromEntries(Object.entries(known).map(([anilist, mal]) => [mal, Number(anilist)]));
  server.handle((request: RecordedRequest) => {
    const asked = request.json as Array<{ anilist?: number; myanimelist?: number }>;
    const answer = asked.map((entry) => {
      const anilist = entry.anilist ?? byMal[entry.myanimelist!];
      const mal = entry.myanimelist ?? known[entry.anilist!];
      return anilist === undefined || mal === undefined ? null : { anilist, myanimelist: mal, kitsu: 7 };
    });
    return { body: answer };
  });
}

describe('mapExternalIds', () => {
  it('posts the ids as ARM wants them and maps both ways; ids without a counterpart are unmapped, in order', async () => {
    armAnswering({ 21: 21, 1: 1, 20: 20 });

    const result = await mapExternalIds('anilist', [21, 999, 1, 998], { armUrl: server.url });

    const request = onlyRequest(server);
    expect(request.method).toBe('POST');
    expect(request.url).toBe(`${IDS_PATH}?include=anilist,myanimelist`);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers.authorization).toBeUndefined();
    expect(request.json).toEqual([{ anilist: 21 }, { anilist: 999 }, { anilist: 1 }, { anilist: 998 }]);
    expect([...result.anilistToMal]).toEqual([
      [21, 21],
      [1, 1],
    ]);
    expect([...result.malToAnilist]).toEqual([
      [21, 21],
      [1, 1],
    ]);
    expect(result.unmapped).toEqual([999, 998]);
  });

  it('maps MyAnimeList ids back to AniList ids', async () => {
    armAnswering({ 5114: 5114, 16498: 16498 });
    const result = await mapExternalIds('myanimelist', [16498, 3], { armUrl: `${server.url}/` });
    expect(onlyRequest(server).json).toEqual([{ myanimelist: 16498 }, { myanimelist: 3 }]);
    expect(result.malToAnilist.get(16498)).toBe(16498);
    expect(result.anilistToMal.get(16498)).toBe(16498);
    expect(result.unmapped).toEqual([3]);
  });

  it('sends at most 100 ids per request', async () => {
    armAnswering({});
    const ids = Array.from({ length: 150 }, (_, index) => index + 1);
    const result = await mapExternalIds('anilist', ids, { armUrl: server.url });
    expect(server.requests.map((request) => (request.json as unknown[]).length)).toEqual([100, 50]);
    expect(result.unmapped).toEqual(ids);
  });

  it('sends nothing for an empty list', async () => {
    const result = await mapExternalIds('anilist', [], { armUrl: server.url });
    expect(result.anilistToMal.size + result.malToAnilist.size + result.unmapped.length).toBe(0);
    expect(server.requests).toHaveLength(0);
  });

  it('takes its base URL from ANILINK_ARM_URL when no armUrl is given', async () => {
    armAnswering({ 1: 1 });
    process.env.ANILINK_ARM_URL = server.url;
    await expect(fromAniListEntry('anilist', [1])).resolves.toMatchObject({ unmapped: [] });
    expect(onlyRequest(server).path).toBe(IDS_PATH);
  });

  it('is the same function on the root and /anilist entries', () => {
    const require = createRequire(import.meta.url);
    expect(fromAniListEntry).toBe(mapExternalIds);
    expect(require('anilink-api-wrapper/anilist').mapExternalIds).toBe(mapExternalIds);
  });

  it('an error answer is an AniLinkRestError; an answer of the wrong length a TypeError', async () => {
    server.enqueue({ status: 500, body: { error: 'boom' } }, { body: [null] });

    const failed = await rejectionOf<AniLinkRestError>(
      mapExternalIds('anilist', [1], { armUrl: server.url, retry: false }),
    );
    expect(failed).toBeInstanceOf(AniLinkRestError);
    expect(failed.status).toBe(500);

    const short = await rejectionOf(mapExternalIds('anilist', [1, 2], { armUrl: server.url }));
    expect(short).toBeInstanceOf(TypeError);
    expect((short as Error).message).toBe(
      'mapExternalIds: the id-mapping service answered an array, not one entry per id sent (2).',
    );
  });

  it.each<[string, () => Promise<unknown>, string]>([
    [
      'an unknown source',
      () => mapExternalIds('kitsu' as never, [1]),
      'mapExternalIds: source must be "anilist" or "myanimelist"',
    ],
    [
      'ids that are not an array',
      () => mapExternalIds('anilist', 5 as never),
      'mapExternalIds: ids must be an array of ids',
    ],
    [
      'an id that is not a positive integer',
      () => mapExternalIds('anilist', [1, 0]),
      'mapExternalIds: ids[1] must be a positive integer',
    ],
    [
      'a blank armUrl',
      () => mapExternalIds('anilist', [1], { armUrl: ' ' }),
      'mapExternalIds: options.armUrl must be an absolute',
    ],
  ])('rejects %s with a TypeError, nothing sent', async (_label, call, message) => {
    const error = await rejectionOf(call());
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toContain(message);
    expect(server.requests).toHaveLength(0);
  });
});

describe('aniLink.anilist.mapExternalIds', () => {
  it("runs with the AniList slot's transport settings but never its token", async () => {
    armAnswering({ 21: 21 });
    const started: RequestContext[] = [];
    const client = new AniLink({
      anilist: { authToken: 'anilist-secret', onRequestStart: (context) => void started.push(context) },
    });

    const result = await client.anilist.mapExternalIds('anilist', [21], { armUrl: server.url });

    expect(result.anilistToMal.get(21)).toBe(21);
    const request = onlyRequest(server);
    expect(request.headers.authorization).toBeUndefined();
    expect(JSON.stringify(request.headers)).not.toContain('anilist-secret');
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ method: 'POST', url: `${server.url}${IDS_PATH}?include=anilist,myanimelist` });
  });

  it('per-call options override the slot settings', async () => {
    server.enqueue({ delayMs: 1_000, body: [null] });
    const client = new AniLink({ anilist: { timeout: 30_000 } });
    const error = await rejectionOf(client.anilist.mapExternalIds('anilist', [1], { armUrl: server.url, timeout: 50 }));
    expect(error).toMatchObject({ code: 'TIMEOUT_ERROR' });
  });
});

describe('aniLink.mal.auth', () => {
  it('holds the MAL PKCE helpers', async () => {
    const client = new AniLink();
    expect(client.mal.auth.buildAuthorizationUrl).toBe(buildMalAuthorizationUrl);
    expect(client.mal.auth.exchangeCode).toBe(getMalAccessToken);

    server.enqueue({ body: { access_token: 'a', token_type: 'Bearer', expires_in: 60 } });
    const token = await client.mal.auth.exchangeCode({
      clientId: 'cid',
      code: 'the-code',
      codeVerifier: 'verifier',
      options: { tokenUrl: `${server.url}/token` },
    });
    expect(token.access_token).toBe('a');
    expect(Object.fromEntries(new URLSearchParams(onlyRequest(server).body))).toEqual({
      client_id: 'cid',
      grant_type: 'authorization_code',
      code: 'the-code',
      code_verifier: 'verifier',
    });
  });
});
