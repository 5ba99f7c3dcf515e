// What getTransportState() shows of admission and shared state (issue 15), and the
// SHARED_STATE_UNAVAILABLE diagnostic of a slot whose Redis is unreachable, end to end without a
// Redis server (fleet-js's tests cover a real one).
import { describe, expect, it } from 'vitest';
import type { AniLinkDiagnostic } from 'anilink-api-wrapper';
import { aniListClient, closedPort, useTestServer } from './support/helpers';
import { graphqlData, rateLimitHeaders, type TestServer } from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

const MEDIA = graphqlData('Media', { id: 1 });

describe('getTransportState and shared state', () => {
  it('shows the admission estimate per host, and sharedState off by default', async () => {
    const resetSeconds = Math.floor(Date.now() / 1000) + 60;
    server.enqueue({ headers: rateLimitHeaders(90, 41, resetSeconds), body: MEDIA });
    const aniLink = aniListClient(server);
    await aniLink.anilist.query.media({ id: 1 });
    const state = aniLink.getTransportState().anilist;
    expect(state.sharedState).toBe('off');
    expect(state.admission).toEqual([
      {
        host: new URL(server.url).host,
        limit: 90,
        remaining: 41,
        inFlight: 0,
        windowEndsAt: resetSeconds * 1000,
        learnedLimit: null,
        processes: 1,
        share: 90,
        // 49 served by the headers, for the 1 request this client sent (D43).
        otherClients: true,
        provenServed: 49,
        decidedBy: 'process',
      },
    ]);
  });

  it('an unreachable Redis: calls succeed, one UNAVAILABLE diagnostic without the password, local-fallback', async () => {
    const port = await closedPort();
    const diagnostics: AniLinkDiagnostic[] = [];
    const aniLink = aniListClient(server, {
      sharedState: { redis: `redis://user:hunter2@127.0.0.1:${port}`, timeoutMs: 1_000 },
      diagnostics: 'hook',
      onHookError: (_hook, error) => diagnostics.push((error as { diagnostic: AniLinkDiagnostic }).diagnostic),
    });
    for (let id = 1; id <= 3; id += 1) {
      server.enqueue({ headers: rateLimitHeaders(90, 90 - id), body: MEDIA });
      await expect(aniLink.anilist.query.media({ id })).resolves.toEqual({ id: 1 });
    }
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({
      source: 'anilink',
      kind: 'shared-state',
      code: 'SHARED_STATE_UNAVAILABLE',
      host: new URL(server.url).host,
      redis: `127.0.0.1:${port}`,
    });
    expect(diagnostics[0].message).toContain(`127.0.0.1:${port}`);
    expect(JSON.stringify(diagnostics)).not.toContain('hunter2');
    const state = aniLink.getTransportState().anilist;
    expect(state.sharedState).toBe('local-fallback');
    // Alone from the start, it knows of no other process: its share is the whole limit.
    expect(state.admission).toMatchObject([{ decidedBy: 'local-share', processes: 1, share: 90 }]);
    expect(JSON.stringify(state)).not.toContain('hunter2');
  });
});
