// AniLink as the `anilink` kind runs it, with one subscriber on every diagnostics channel
// (docs/hooks-and-diagnostics.md, "Observability"): next to `anilink`, what a subscriber costs a call. Each subscriber
// only counts what it receives, so the row measures publishing, not the subscriber's work.
import diagnosticsChannel from 'node:diagnostics_channel';
import { createClient as createAniLinkClient } from './anilink.mjs';

const EVENT_CHANNELS = [
  'anilink:attempt:start',
  'anilink:attempt:end',
  'anilink:breaker',
  'anilink:admission',
  'anilink:shared-state',
];

export async function createClient(options) {
  let received = 0;
  const count = () => {
    received += 1;
  };
  for (const name of EVENT_CHANNELS) diagnosticsChannel.subscribe(name, count);
  diagnosticsChannel
    .tracingChannel('anilink:call')
    .subscribe({ start: count, end: count, asyncStart: count, asyncEnd: count, error: count });
  const client = await createAniLinkClient(options);
  return {
    ...client,
    async send() {
      const before = received;
      const media = await client.send();
      if (received === before) throw new Error('the subscriber received nothing for a call');
      return media;
    },
  };
}
