'use strict';
// Pollers (api.md §9.1 `watch`): async generators that poll `query.page.notifications` or
// `query.page.activities` and yield what is new, oldest first. Orchestration over operations
// only: every request goes through the slot's native transport like any other call.

const { AniLinkErrorCodes } = require('./errors.cjs');
const { describeKind, isObject } = require('./helpers.cjs');

const DEFAULT_INTERVAL_MS = 60_000;
const MIN_INTERVAL_MS = 10_000;
const MAX_PER_PAGE = 50;
const MAX_PAGES_PER_POLL = 10;
/** Ids remembered to drop items seen in an earlier poll (items sharing the watermark's second). */
const REMEMBERED_IDS = 1_000;
const COMMON_KEYS = ['since', 'intervalMs', 'perPage', 'signal', 'transportOptions'];

const WATCHERS = {
  notifications: {
    operation: 'notifications',
    itemsKey: 'notifications',
    filters: ['type', 'type_in', 'resetNotificationCount', 'asHtml'],
    defaults: {},
    firstPollOnly: ['resetNotificationCount'],
  },
  activity: {
    operation: 'activities',
    itemsKey: 'activities',
    filters: ['userId', 'messengerId', 'mediaId', 'type', 'isFollowing', 'sort', 'asHtml'],
    defaults: { sort: ['ID_DESC'] },
    firstPollOnly: [],
  },
};

function checked(name, watcher, options) {
  const helper = `watch.${name}`;
  if (options === undefined) options = {};
  if (!isObject(options))
    throw new TypeError(`${helper}: options must be an object (received ${describeKind(options)}).`);
  const valid = [...COMMON_KEYS, ...watcher.filters];
  for (const key of Object.keys(options)) {
    if (!valid.includes(key))
      throw new TypeError(`${helper}: unknown option "${key}". Valid options are: ${valid.join(', ')}.`);
  }
  const { since, intervalMs = DEFAULT_INTERVAL_MS, perPage = MAX_PER_PAGE, signal, transportOptions } = options;
  if (since !== undefined && !(Number.isFinite(since) && since >= 0)) {
    throw new TypeError(
      `${helper}: since must be a Unix time in seconds, a finite number ≥ 0 (received ${describeKind(since)}).`,
    );
  }
  if (!(Number.isFinite(intervalMs) && intervalMs > 0)) {
    throw new TypeError(`${helper}: intervalMs must be a finite number > 0 (received ${describeKind(intervalMs)}).`);
  }
  if (!(Number.isInteger(perPage) && perPage > 0)) {
    throw new TypeError(`${helper}: perPage must be a positive integer (received ${describeKind(perPage)}).`);
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new TypeError(`${helper}: signal must be an AbortSignal (received ${describeKind(signal)}).`);
  }
  if (transportOptions !== undefined && !isObject(transportOptions)) {
    throw new TypeError(`${helper}: transportOptions must be an object (received ${describeKind(transportOptions)}).`);
  }
  const filters = { ...watcher.defaults };
  for (const key of watcher.filters) if (options[key] !== undefined) filters[key] = options[key];
  return {
    since,
    intervalMs: Math.max(intervalMs, MIN_INTERVAL_MS),
    perPage: Math.min(perPage, MAX_PER_PAGE),
    signal,
    transportOptions: transportOptions ?? {},
    filters,
  };
}

/** Resolves after `ms`, or at once (false) when `signal` aborts. */
function pause(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const createdAt = (item) => (typeof item?.createdAt === 'number' ? item.createdAt : 0);

async function* poll(pageOperation, watcher, settings) {
  const { intervalMs, perPage, signal, transportOptions } = settings;
  let watermark = settings.since;
  const remembered = [];
  let firstPoll = true;
  try {
    do {
      const found = [];
      for (let page = 1; page <= MAX_PAGES_PER_POLL; page += 1) {
        const variables = { ...settings.filters, page, perPage };
        if (!firstPoll) for (const key of watcher.firstPollOnly) delete variables[key];
        const result = await pageOperation(variables, { ...transportOptions, ...(signal ? { signal } : {}) });
        const items = (result?.[watcher.itemsKey] ?? []).filter((item) => item != null);
        const fresh = watermark === undefined ? items : items.filter((item) => createdAt(item) >= watermark);
        found.push(...fresh);
        // A baseline needs one page; otherwise stop at the first page reaching known items.
        if (watermark === undefined || fresh.length < items.length || !result?.pageInfo?.hasNextPage) break;
      }
      const newest = found.reduce((max, item) => Math.max(max, createdAt(item)), watermark ?? 0);
      if (watermark === undefined) {
        // No `since`: the first poll only establishes where "new" starts.
        watermark = found.length > 0 ? newest : Math.floor(Date.now() / 1000);
        remembered.push(...found.map((item) => item.id));
      } else {
        const unseen = found.filter((item) => !remembered.includes(item.id)).reverse();
        watermark = newest;
        for (const item of unseen) {
          remembered.push(item.id);
          yield item;
        }
      }
      remembered.splice(0, Math.max(0, remembered.length - REMEMBERED_IDS));
      firstPoll = false;
    } while (await pause(intervalMs, signal));
  } catch (error) {
    // Aborting the signal ends the watch; it is not a failure.
    if (signal?.aborted && error?.code === AniLinkErrorCodes.ABORTED) return;
    throw error;
  }
}

/** `aniLink.anilist.watch` for one slot: `notifications(options?)` and `activity(options?)`. */
function createWatch(pageOperations) {
  const watch = {};
  for (const [name, watcher] of Object.entries(WATCHERS)) {
    watch[name] = (options) => poll(pageOperations[watcher.operation], watcher, checked(name, watcher, options));
  }
  return watch;
}

module.exports = { createWatch };
