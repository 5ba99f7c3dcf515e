// The `sharedState` slot option's validation (issue 15): accepted in a slot, refused per
// request, and every invalid value a TypeError that says how to fix it without echoing a password.
import { describe, expect, it } from 'vitest';
import { AniLink } from 'anilink-api-wrapper';
import { rejectionOf } from './support/helpers';

const REDIS = 'redis://127.0.0.1:1';

describe('sharedState option', () => {
  it('is accepted in the positional form and in both slots, and false/null turn it off', () => {
    expect(
      () =>
        new AniLink(undefined, { sharedState: { redis: REDIS, keyPrefix: 'fleet', timeoutMs: 50, leaseMs: 1_000 } }),
    ).not.toThrow();
    expect(
      () => new AniLink({ anilist: { sharedState: { redis: REDIS } }, mal: { sharedState: { redis: REDIS } } }),
    ).not.toThrow();
    expect(() => new AniLink(undefined, { sharedState: { redis: 'rediss://user:hunter2@h:6380/1' } })).not.toThrow();
    expect(() => new AniLink(undefined, { sharedState: false })).not.toThrow();
    expect(() => new AniLink(undefined, { sharedState: null })).not.toThrow();
  });

  it('rejects invalid values with a TypeError naming the rule, never the password', () => {
    const cases: [unknown, RegExp][] = [
      [{ redis: 'rediss://user:hunter2@h:6379/tls' }, /its path must be a database number/],
      [{ redis: 'redis://user:hunter2@h:0' }, /sharedState\.redis must be a redis:\/\/.*port/],
      [{}, /sharedState\.redis must be a redis:\/\//],
      [{ redis: REDIS, timeoutMs: -1 }, /sharedState\.timeoutMs must be/],
      [{ redis: REDIS, leaseMs: 'long' }, /sharedState\.leaseMs must be/],
      [{ redis: REDIS, keyPrefix: '' }, /sharedState\.keyPrefix must be/],
      [{ redis: REDIS, url: REDIS }, /Unknown key "url" in sharedState/],
      ['redis://user:hunter2@h:6379', /sharedState must be false, null or an object.*\(received a string\)/],
    ];
    for (const [value, message] of cases) {
      let thrown: unknown;
      try {
        new AniLink(undefined, { sharedState: value as never });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(TypeError);
      expect((thrown as Error).message).toMatch(message);
      expect((thrown as Error).message).not.toContain('hunter2');
    }
  });

  it('is refused per request with a TypeError that says where it belongs', async () => {
    const aniLink = new AniLink();
    const error = await rejectionOf<Error>(
      aniLink.anilist.query.media({ id: 1 }, { sharedState: { redis: REDIS } } as never),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/sharedState is a slot option and cannot be given per request/);
  });
});
