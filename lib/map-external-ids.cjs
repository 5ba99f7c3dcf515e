'use strict';
// mapExternalIds (api.md §9.1): AniList ↔ MyAnimeList id maps from the public ARM id-mapping
// service (https://arm.haglund.dev), queried without any credentials through the native
// transport. The service's base URL is overridable like a provider's `baseUrl`: the `armUrl`
// option, else the ANILINK_ARM_URL environment variable (decisions D14 style); the default and
// the variable are the binding's (`urls.idMapping` of the contract).

const { createExternalClient, postTo } = require('./external.cjs');
const { describeKind, isObject } = require('./helpers.cjs');

const { default: ARM_DEFAULT_URL, variable: ARM_URL_VARIABLE } = require('./native.cjs').contract.urls.idMapping;
const ARM_IDS_PATH = '/api/v2/ids?include=anilist,myanimelist';
const SOURCES = ['anilist', 'myanimelist'];
/** The most ids ARM answers in one request. */
const BATCH_SIZE = 100;

function checkArguments(source, ids, options) {
  const helper = 'mapExternalIds';
  if (!SOURCES.includes(source)) {
    throw new TypeError(`${helper}: source must be "anilist" or "myanimelist" (received ${describeKind(source)}).`);
  }
  if (!Array.isArray(ids))
    throw new TypeError(`${helper}: ids must be an array of ids (received ${describeKind(ids)}).`);
  ids.forEach((id, index) => {
    if (!Number.isSafeInteger(id) || id < 1) {
      throw new TypeError(
        `${helper}: ids[${index}] must be a positive integer (received ${describeKind(id, { numbers: true })}).`,
      );
    }
  });
  if (options !== undefined && !isObject(options)) {
    throw new TypeError(`${helper}: options must be an object (received ${describeKind(options)}).`);
  }
  const { armUrl, ...transport } = options ?? {};
  if (armUrl !== undefined && (typeof armUrl !== 'string' || armUrl.trim() === '')) {
    throw new TypeError(
      `${helper}: options.armUrl must be an absolute http:// or https:// URL (received ${describeKind(armUrl)}).`,
    );
  }
  const base = (armUrl ?? (process.env[ARM_URL_VARIABLE] || ARM_DEFAULT_URL)).replace(/\/+$/, '');
  return { url: `${base}${ARM_IDS_PATH}`, transport };
}

/**
 * Map `ids` of `source` to the other site's ids, through `client` (its transport settings;
 * `options` are per-call settings over them, plus `armUrl`). Ids ARM knows no counterpart for
 * are in `unmapped`, in input order; an empty list sends nothing.
 */
async function mapWith(client, source, ids, options) {
  const { url, transport } = checkArguments(source, ids, options);
  const anilistToMal = new Map();
  const malToAnilist = new Map();
  const unmapped = [];
  for (let start = 0; start < ids.length; start += BATCH_SIZE) {
    const batch = ids.slice(start, start + BATCH_SIZE);
    const body = JSON.stringify(batch.map((id) => ({ [source]: id })));
    const answer = await postTo(client(), url, 'application/json', body, transport);
    if (!Array.isArray(answer) || answer.length !== batch.length) {
      throw new TypeError(
        `mapExternalIds: the id-mapping service answered ${describeKind(answer)}, not one entry per id sent (${batch.length}).`,
      );
    }
    batch.forEach((id, index) => {
      const entry = answer[index];
      const other = source === 'anilist' ? entry?.myanimelist : entry?.anilist;
      if (typeof other !== 'number') {
        unmapped.push(id);
      } else if (source === 'anilist') {
        anilistToMal.set(id, other);
        malToAnilist.set(other, id);
      } else {
        malToAnilist.set(id, other);
        anilistToMal.set(other, id);
      }
    });
  }
  return { anilistToMal, malToAnilist, unmapped };
}

let standaloneClient;
/** The root export: default transport settings, its own state. */
function mapExternalIds(source, ids, options) {
  return mapWith(() => (standaloneClient ??= createExternalClient({})), source, ids, options);
}

/** `aniLink.anilist.mapExternalIds`: the AniList slot's transport settings (never its token). */
function bindMapExternalIds(slotOptions) {
  let client;
  return (source, ids, options) => mapWith(() => (client ??= createExternalClient(slotOptions)), source, ids, options);
}

module.exports = { mapExternalIds, bindMapExternalIds, ARM_DEFAULT_URL };
