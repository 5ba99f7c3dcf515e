// The same-work floor (bench/napi-floor): a bare napi-rs addon that sends the exact request
// AniLink sends for this workload, as bench/run.mjs captured it from AniLink, over the same
// hyper stack, and hands each body to JavaScript in one threadsafe-function call, where it is
// parsed and checked here as every client does. Connections: at most one per request in flight.
// `createFloorClient(…, 'inline')` is the napi-inline client: the same addon doing the same
// work on the JavaScript thread (floor.sendInline), without the hand-off to a worker.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkStatus, mediaFromEnvelope } from '../workload.mjs';

const ADDON = fileURLToPath(new URL('../../target/release/libnapi_floor.so', import.meta.url));

/** Where bench/run.mjs writes the request it captured from AniLink for `workload`. */
export const capturedRequestFile = (workload) =>
  fileURLToPath(new URL(`../../results/anilink-request-${workload}.json`, import.meta.url));

function unavailable(message) {
  const error = new Error(message);
  error.code = 'CLIENT_UNAVAILABLE';
  return error;
}

export const createClient = (options) => createFloorClient(options, 'threaded');

/** @param {'threaded' | 'inline'} mode `floor.send` (a tokio worker) or `floor.sendInline` */
export function createFloorClient({ url, workload }, mode) {
  if (mode === 'inline' && process.platform !== 'linux') {
    throw unavailable('the napi-inline client needs Linux (it finds its reactor in /proc/self/fd)');
  }
  const captured = capturedRequestFile(workload.name);
  if (!existsSync(ADDON) || !existsSync(captured)) {
    throw unavailable(
      `the napi floor needs its addon (${ADDON}) and AniLink's captured request (${captured}); node bench/run.mjs builds and captures both`,
    );
  }
  const request = JSON.parse(readFileSync(captured, 'utf8'));
  const addon = { exports: {} };
  process.dlopen(addon, ADDON);
  const waiting = new Map();
  let nextId = 0;
  const floor = new addon.exports.Floor(
    new URL(request.path, url).href,
    request.headers,
    request.body,
    (id, status, text) => {
      const { resolve, reject } = waiting.get(id);
      waiting.delete(id);
      try {
        if (status === 0) throw new Error(`napi-floor: ${text}`);
        checkStatus('napi-floor', status);
        resolve(mediaFromEnvelope(JSON.parse(text)));
      } catch (error) {
        reject(error);
      }
    },
  );
  return {
    connectionLimit: null,
    send() {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        if (mode === 'inline') floor.sendInline(id);
        else floor.send(id);
      });
    },
  };
}
