// The idle scenario's client: makes `calls` media calls one after another, prints `ready`,
// then does nothing, its keep-alive connections left open, until it is killed. The process
// measuring it (bench/run.mjs) counts its threads' context switches while it idles.
//
//   node bench/clients/idle-client.mjs <kind> <url> <calls>
//
// One timer far in the future keeps the process alive (an AniLink client with nothing
// pending lets the process exit, decisions D12); a pending timer costs no wake-up until due.
import { WORKLOADS } from './workload.mjs';

const IDLE_KINDS = ['anilink', 'undici'];
const HOLD_MS = 3_600_000;

async function main() {
  const [kind, url, callsText] = process.argv.slice(2);
  const calls = Number(callsText);
  if (!IDLE_KINDS.includes(kind) || !url || !Number.isInteger(calls) || calls < 1) {
    throw new Error(`usage: idle-client.mjs <${IDLE_KINDS.join('|')}> <url> <calls ≥ 1>`);
  }
  const workload = WORKLOADS.media;
  const { createClient } = await import(`./kinds/${kind}.mjs`);
  const client = await createClient({ url: new URL(workload.path, url).href, concurrency: 1, workload });
  for (let i = 0; i < calls; i += 1) await client.send();
  setTimeout(() => {}, HOLD_MS);
  process.stdout.write('ready\n');
}

main().catch((error) => {
  process.stderr.write(`idle-client: ${error.stack ?? error}\n`);
  process.exit(1);
});
