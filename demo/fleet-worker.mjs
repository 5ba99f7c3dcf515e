/**
 * One worker process of a fleet (`npm run demo -- --fleet N` and the shared-state tests): an
 * `AniLink` with the AniList slot it is given, fetching media by id with a number of calls in
 * flight, driven by its parent over the IPC channel of `child_process.fork`.
 *
 * Messages from the parent:
 *   { type: 'init', slot }                           build the client; answers { type: 'ready' }
 *                                                    (with `error` when the options were refused)
 *   { type: 'run', ids, concurrency }                fetch those ids; answers { type: 'ran', report }
 *   { type: 'steady', concurrency, pauseMs }         fetch ids 1, 2, 3… (each lane pausing between
 *                                                    calls) until { type: 'stop' }; answers 'ran'
 *   { type: 'state' }                                answers { type: 'state', state } (the slot's
 *                                                    getTransportState())
 *   { type: 'exit' }                                 close the client's connections and exit
 *
 * A report counts what the worker saw: calls served and failed (with their code and status),
 * 429 answers (retried or terminal), time paced, the diagnostics the slot emitted (their
 * records), and the wall time of the run.
 */
import { AniLink, ResponseCache, destroyCachedAgents } from 'anilink-api-wrapper';

let aniLink;
/** Every diagnostic record the slot emitted, over the worker's whole life. */
const diagnostics = [];
let counters = freshCounters();
let stopRequested = false;

function freshCounters() {
  return { served: 0, failures: [], rateLimited: 0, pacedMs: 0, paceWaits: 0 };
}

function send(message) {
  process.send?.(message);
}

/** `slot.responseCache`, when given, is the plain options of the worker's own `ResponseCache`. */
function buildClient({ responseCache, ...slot }) {
  aniLink = new AniLink({
    anilist: {
      ...slot,
      ...(responseCache ? { responseCache: new ResponseCache(responseCache) } : {}),
      diagnostics: 'hook',
      onHookError: (_hookName, error) => {
        diagnostics.push(error?.diagnostic ?? { message: String(error?.message ?? error) });
      },
      onRetry: (_error, context) => {
        if (context.status === 429) counters.rateLimited += 1;
      },
      onError: (_error, context) => {
        if (context.status === 429) counters.rateLimited += 1;
      },
      onPace: (context) => {
        if (context.aborted) return;
        counters.paceWaits += 1;
        counters.pacedMs += context.delayMs;
      },
    },
  });
}

async function fetchOne(id) {
  try {
    const media = await aniLink.anilist.query.media({ id });
    if (media?.id === id) counters.served += 1;
    else
      counters.failures.push({ id, code: 'WRONG_ANSWER', message: `the answer was for ${JSON.stringify(media?.id)}` });
  } catch (error) {
    counters.failures.push({ id, code: error?.code, status: error?.status, message: String(error?.message) });
  }
}

/** `concurrency` lanes taking the next id until `nextId()` says there is none. */
async function runLanes(concurrency, nextId, pauseMs = 0) {
  counters = freshCounters();
  const startedAt = performance.now();
  const lane = async () => {
    for (let id = nextId(); id !== undefined; id = nextId()) {
      await fetchOne(id);
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  send({ type: 'ran', report: { ...counters, diagnostics, elapsedMs: performance.now() - startedAt } });
}

process.on('message', (message) => {
  switch (message.type) {
    case 'init':
      try {
        buildClient(message.slot);
        send({ type: 'ready' });
      } catch (error) {
        send({ type: 'ready', error: `${error?.name}: ${error?.message}` });
      }
      break;
    case 'run': {
      const ids = [...message.ids];
      void runLanes(message.concurrency, () => ids.shift());
      break;
    }
    case 'steady': {
      let next = 0;
      stopRequested = false;
      void runLanes(message.concurrency, () => (stopRequested ? undefined : ++next), message.pauseMs);
      break;
    }
    case 'stop':
      stopRequested = true;
      break;
    case 'state':
      send({ type: 'state', state: aniLink.getTransportState().anilist });
      break;
    case 'exit':
      destroyCachedAgents();
      process.disconnect?.();
      break;
    default:
      throw new Error(`fleet worker: unknown message ${JSON.stringify(message)}`);
  }
});
