// The sharedState slot option refused clearly in both slots and per request (issue 15), never
// repeating a Redis password.
import { describe, expect, it } from 'vitest';
import { AniLink } from 'anilink-api-wrapper';
import { closedPort } from '../support/helpers';

// The positional form's rules are in __test__/shared-state-options.spec.ts; these add both slots
// and a password-bearing URL wherever a value can be refused.
describe('sharedState: invalid values in a slot', () => {
  const PASSWORD = 'hunter2';
  const cases: [string, unknown, RegExp][] = [
    ['true', true, /sharedState must be false, null or an object/],
    ['a URL string instead of an object', `redis://u:${PASSWORD}@127.0.0.1:6379`, /sharedState must be/],
    ['rediss:// with a path', { redis: `rediss://u:${PASSWORD}@127.0.0.1:6379/tls` }, /database number/],
    ['port 0', { redis: `redis://u:${PASSWORD}@127.0.0.1:0` }, /sharedState\.redis must be a redis:\/\/.*port/],
    ['leaseMs NaN', { redis: `redis://u:${PASSWORD}@127.0.0.1:6379`, leaseMs: Number.NaN }, /sharedState\.leaseMs/],
  ];

  it.each(cases)('%s: a TypeError in the AniList and the MAL slot, without the password', (_name, value, message) => {
    for (const slots of [{ anilist: { sharedState: value } }, { mal: { sharedState: value } }]) {
      let thrown: unknown;
      try {
        new AniLink(slots as never);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(TypeError);
      expect((thrown as TypeError).message).toMatch(message);
      expect((thrown as TypeError).message).not.toContain(PASSWORD);
    }
  });

  it('refused per request without repeating the password given there', async () => {
    const aniLink = new AniLink(undefined, { baseUrl: `http://127.0.0.1:${await closedPort()}`, retry: false });
    const rejection = aniLink.anilist.query.media({ id: 1 }, {
      sharedState: { redis: `redis://u:${PASSWORD}@127.0.0.1:6379` },
    } as never);
    const error = await rejection.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toMatch(/sharedState is a slot option/);
    expect((error as TypeError).message).not.toContain(PASSWORD);
  });
});
