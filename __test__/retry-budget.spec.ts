// End-to-end checks of the retry budget (issue 3; seed "Retry budget"; transport.md 1.6 and
// 1.5 gates 3-4; decisions D2, D3, D5, D20): a fixed-window allowance of retries shared by every
// request of one provider client, judged by the attempts the test server received.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { AniLink, type AniListCredentials, type MalCredentials, type RetryBudget } from 'anilink-api-wrapper';
import { clientFor, failureOf, failureRecorder, mediaIdOf, useTestServer } from './support/helpers';
import { rateLimitHeaders, type TestServer } from './support/test-server';

let server: TestServer;
useTestServer((started) => {
  server = started;
});

/** Deterministic short backoff, and more retries per request than any budget below allows. */
const FAST_RETRY = { maxRetries: 5, baseDelayMs: 5, jitter: false } as const;

/** A fresh client (so fresh budget state) with both slots on the test server and FAST_RETRY unless overridden. */
function client(anilist: AniListCredentials = {}, mal: MalCredentials = {}): AniLink {
  return clientFor(server, { retry: FAST_RETRY, ...anilist }, { retry: FAST_RETRY, ...mal });
}

describe('the retry budget', () => {
  it('lets exactly N retries through across many concurrent failing requests, then surfaces failures untried', async () => {
    const budget: RetryBudget = { maxRetriesPerWindow: 4, windowMs: 10_000 };
    const retries = failureRecorder();
    const errors = failureRecorder();
    const aniLink = client({ retryBudget: budget, onRetry: retries.hook, onError: errors.hook });
    server.setDefault({ status: 503 });
    const callCount = 10;

    const failures = await Promise.all(
      Array.from({ length: callCount }, (_, index) => failureOf(aniLink.anilist.query.media({ id: index + 1 }))),
    );

    expect(failures.every((error) => error.code === 'API_ERROR')).toBe(true);
    expect(server.requests).toHaveLength(callCount + budget.maxRetriesPerWindow);
    expect(retries.reports).toHaveLength(budget.maxRetriesPerWindow);
    const attemptsPerCall = Array.from(
      { length: callCount },
      (_, index) => server.requests.filter((request) => mediaIdOf(request) === index + 1).length,
    );
    expect(attemptsPerCall.filter((attempts) => attempts === 1).length).toBeGreaterThanOrEqual(
      callCount - budget.maxRetriesPerWindow,
    );
    // Every call still had retries left under its own policy, so the budget stopped each one.
    expect(errors.reports).toHaveLength(callCount);
    expect(errors.reports.every(({ context }) => context.budgetExhausted === true)).toBe(true);
    expect(aniLink.getTransportState().anilist.retryBudget?.retriesUsed).toBe(budget.maxRetriesPerWindow);
  });

  it('resumes retries once the window has ended', async () => {
    const retries = failureRecorder();
    const errors = failureRecorder();
    const aniLink = client({
      retry: { ...FAST_RETRY, maxRetries: 2 },
      retryBudget: { maxRetriesPerWindow: 1, windowMs: 300 },
      onRetry: retries.hook,
      onError: errors.hook,
    });
    server.setDefault({ status: 500 });

    await failureOf(aniLink.anilist.query.media({ id: 1 }));
    expect(server.requests).toHaveLength(2);
    await failureOf(aniLink.anilist.query.media({ id: 2 }));
    expect(server.requests).toHaveLength(3);
    expect(errors.reports.map(({ context }) => context.budgetExhausted)).toEqual([true, true]);

    const firstWindow = aniLink.getTransportState().anilist.retryBudget!;
    await sleep(Math.max(0, firstWindow.windowEndsAt - Date.now()) + 20);

    await failureOf(aniLink.anilist.query.media({ id: 3 }));
    expect(server.requests.filter((request) => mediaIdOf(request) === 3)).toHaveLength(2);
    const secondWindow = aniLink.getTransportState().anilist.retryBudget!;
    expect(secondWindow.retriesUsed).toBe(1);
    expect(secondWindow.windowEndsAt).toBeGreaterThanOrEqual(firstWindow.windowEndsAt + 300);
  });

  it('opens the next window at the first failure after expiry, not when the request started (D3)', async () => {
    const windowMs = 500;
    const aniLink = client({
      retry: { ...FAST_RETRY, maxRetries: 1 },
      retryBudget: { maxRetriesPerWindow: 1, windowMs },
    });
    server.setDefault({ status: 500 });
    await failureOf(aniLink.anilist.query.media({ id: 1 }));
    const firstWindow = aniLink.getTransportState().anilist.retryBudget!;
    expect(firstWindow.retriesUsed).toBe(1);

    // Start while the spent window is still open; the answer arrives only after it has ended.
    await sleep(Math.max(0, firstWindow.windowEndsAt - Date.now() - 200));
    server.enqueue({ status: 500, delayMs: 400 });
    await failureOf(aniLink.anilist.query.media({ id: 2 }));

    expect(server.requests.filter((request) => mediaIdOf(request) === 2)).toHaveLength(2);
    const secondWindow = aniLink.getTransportState().anilist.retryBudget!;
    expect(secondWindow.retriesUsed).toBe(1);
    // Opened by the failure (at least 200 ms after the old window's end), so it ends a full
    // window after that, beyond what a window opened at the request's start could reach.
    expect(secondWindow.windowEndsAt).toBeGreaterThanOrEqual(firstWindow.windowEndsAt + windowMs);
  });

  it('does not refund the unit of a retry aborted during its backoff', async () => {
    const controller = new AbortController();
    const aniLink = client({
      retry: { maxRetries: 3, baseDelayMs: 5_000, jitter: false },
      retryBudget: { maxRetriesPerWindow: 3, windowMs: 60_000 },
    });
    server.setDefault({ status: 500 });

    const call = aniLink.anilist.query.media({ id: 1 }, { signal: controller.signal });
    await server.waitForRequests(1);
    await sleep(50);
    controller.abort();
    const error = await failureOf(call);

    expect(error.code).toBe('ABORTED_ERROR');
    expect(aniLink.getTransportState().anilist.retryBudget?.retriesUsed).toBe(1);
  });

  it('maxRetriesPerWindow: 0 allows no retries at all', async () => {
    const errors = failureRecorder();
    server.setDefault({ status: 502 });

    await failureOf(
      client({ retryBudget: { maxRetriesPerWindow: 0, windowMs: 10_000 }, onError: errors.hook }).anilist.query.media({
        id: 1,
      }),
    );

    expect(server.requests).toHaveLength(1);
    expect(errors.reports).toHaveLength(1);
    expect(errors.reports[0].context.budgetExhausted).toBe(true);
  });

  it('surfaces at once a Retry-After longer than what is left of the window, spending nothing', async () => {
    const errors = failureRecorder();
    const aniLink = client({ retryBudget: { maxRetriesPerWindow: 5, windowMs: 1_000 }, onError: errors.hook });
    server.enqueue({ status: 429, headers: { 'retry-after': '3' } });

    const startedAt = performance.now();
    const error = await failureOf(aniLink.anilist.query.media({ id: 1 }));

    expect(performance.now() - startedAt).toBeLessThan(1_000);
    expect(error).toMatchObject({ status: 429 });
    expect(server.requests).toHaveLength(1);
    expect(errors.reports).toHaveLength(1);
    expect('budgetExhausted' in errors.reports[0].context).toBe(false);
    expect(aniLink.getTransportState().anilist.retryBudget?.retriesUsed).toBe(0);

    // A server-directed wait that fits in the window is still honoured (and spends a unit).
    server.enqueue({ status: 429, headers: { 'retry-after': '0' } });
    await aniLink.anilist.query.media({ id: 2 });
    expect(server.requests).toHaveLength(3);
    expect(aniLink.getTransportState().anilist.retryBudget?.retriesUsed).toBe(1);
  });

  it('surfaces at once a 503 Retry-After longer than what is left of the window (D5)', async () => {
    const aniLink = client({ retryBudget: { maxRetriesPerWindow: 5, windowMs: 1_000 } });
    server.enqueue({ status: 503, headers: { 'retry-after': '3' } });

    const startedAt = performance.now();
    await failureOf(aniLink.anilist.query.media({ id: 1 }));

    expect(performance.now() - startedAt).toBeLessThan(1_000);
    expect(server.requests).toHaveLength(1);
    expect(aniLink.getTransportState().anilist.retryBudget?.retriesUsed).toBe(0);
  });

  it('compares the uncapped server wait with the window, not the 60 s actually slept (D5)', async () => {
    // Retry-After 120 s would be slept as 60 s, which fits a 90 s window; the 120 s asked for does not.
    const aniLink = client({ retryBudget: { maxRetriesPerWindow: 5, windowMs: 90_000 } });
    server.enqueue({ status: 429, headers: { 'retry-after': '120' } });

    const startedAt = performance.now();
    await failureOf(aniLink.anilist.query.media({ id: 1 }));

    expect(performance.now() - startedAt).toBeLessThan(1_000);
    expect(server.requests).toHaveLength(1);
    expect(aniLink.getTransportState().anilist.retryBudget?.retriesUsed).toBe(0);
  });

  it('surfaces at once a 429 whose x-ratelimit-reset lies beyond the window', async () => {
    const aniLink = client({ retryBudget: { maxRetriesPerWindow: 5, windowMs: 1_000 } });
    server.enqueue({ status: 429, headers: rateLimitHeaders(90, 0, (Date.now() + 3_000) / 1000) });

    const startedAt = performance.now();
    const error = await failureOf(aniLink.anilist.query.media({ id: 1 }));

    expect(performance.now() - startedAt).toBeLessThan(1_000);
    expect(error).toMatchObject({ status: 429 });
    expect(server.requests).toHaveLength(1);
    expect(aniLink.getTransportState().anilist.retryBudget?.retriesUsed).toBe(0);
  });
});

describe('budget state', () => {
  it('appears in getTransportState() once the first failure opened a window', async () => {
    const windowMs = 5_000;
    const aniLink = client({ retryBudget: { maxRetriesPerWindow: 3, windowMs } });

    const initial = aniLink.getTransportState().anilist;
    expect(initial.retryBudget).toBeUndefined();
    expect(initial.retryBudgets).toEqual([]);

    // A success does not start a window (D3).
    await aniLink.anilist.query.media({ id: 1 });
    expect(aniLink.getTransportState().anilist.retryBudget).toBeUndefined();

    // Any failure opens the window, even one the policy does not retry.
    server.enqueue({ status: 404 });
    const failedAt = Date.now();
    await failureOf(aniLink.anilist.query.media({ id: 2 }));
    expect(aniLink.getTransportState().anilist.retryBudget?.retriesUsed).toBe(0);

    server.enqueue({ status: 500 });
    await aniLink.anilist.query.media({ id: 3 });

    const state = aniLink.getTransportState();
    const window = state.anilist.retryBudget!;
    expect(window.retriesUsed).toBe(1);
    expect(window.windowEndsAt).toBeGreaterThanOrEqual(failedAt + windowMs);
    expect(window.windowEndsAt).toBeLessThan(failedAt + windowMs + 1_000);
    expect(state.anilist.retryBudgets).toEqual([{ host: server.host, ...window }]);
    expect(Object.isFrozen(state.anilist.retryBudgets[0])).toBe(true);
    expect(state.mal.retryBudget).toBeUndefined();
    expect(state.mal.retryBudgets).toEqual([]);
  });

  it('a window too long for a safe integer ends at Number.MAX_SAFE_INTEGER, a number JSON can carry', async () => {
    const aniLink = client({ retryBudget: { maxRetriesPerWindow: 3, windowMs: 1e20 } });
    server.enqueue({ status: 404 });
    await failureOf(aniLink.anilist.query.media({ id: 1 }));
    const state = aniLink.getTransportState();
    expect(state.anilist.retryBudget?.windowEndsAt).toBe(Number.MAX_SAFE_INTEGER);
    expect(JSON.parse(JSON.stringify(state)).anilist.retryBudgets[0].windowEndsAt).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('is per provider client: another AniLink instance and the MAL slot keep their own allowance', async () => {
    const budget: RetryBudget = { maxRetriesPerWindow: 1, windowMs: 10_000 };
    const exhausted = client({ retryBudget: budget }, { retryBudget: budget });
    server.setDefault({ status: 503, body: 'busy' });
    await failureOf(exhausted.anilist.query.media({ id: 1 }));
    await failureOf(exhausted.anilist.query.media({ id: 1 }));
    expect(server.requests).toHaveLength(3);

    server.reset();
    server.setDefault({ status: 503, body: 'busy' });
    await failureOf(client({ retryBudget: budget }).anilist.query.media({ id: 2 }));
    expect(server.requests).toHaveLength(2);

    server.reset();
    server.setDefault({ status: 503, body: 'busy' });
    await failureOf(exhausted.mal.anime.get({ id: 3 }));
    expect(server.requests).toHaveLength(2);
    expect(exhausted.getTransportState().mal.retryBudget?.retriesUsed).toBe(1);
    expect(exhausted.getTransportState().anilist.retryBudget?.retriesUsed).toBe(1);
  });
});
