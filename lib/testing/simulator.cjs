'use strict';
// The AniList simulator (sim/) for users' broader tests: whole documents answered with
// deterministic data, AniList's quota, injected failures. Loaded on first use: it is ESM and
// needs the `graphql` package, which only users of the simulator install.

const { AniLink } = require('../anilink.cjs');

/** Why the simulator module could not load, in terms of what the user should do. */
function explainLoadFailure(error) {
  const text = String(error?.message ?? error);
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && text.includes("'graphql'")) {
    return "startAniListSimulator needs the graphql package (it runs documents against AniList's schema): npm install --save-dev graphql";
  }
  if (error?.code === 'ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING_FLAG' || text.includes('experimental-vm-modules')) {
    return 'startAniListSimulator loads an ES module; under Jest run with NODE_OPTIONS=--experimental-vm-modules (the scripted upstream, startTestUpstream, needs no flag)';
  }
  return undefined;
}

/**
 * Start the AniList simulator on 127.0.0.1; it never keeps the process alive.
 * @param {import('../../sim/anilist-simulator.mjs').SimulatorOptions} [options]
 */
async function startAniListSimulator(options = {}) {
  let simulatorModule;
  try {
    simulatorModule = await import('../../sim/anilist-simulator.mjs');
  } catch (error) {
    const explanation = explainLoadFailure(error);
    if (explanation === undefined) throw error;
    throw new Error(`anilink-api-wrapper/testing: ${explanation}`, { cause: error });
  }
  const simulator = await simulatorModule.startSimulator({ ...options, unref: true });
  const wrapped = {
    url: simulator.url,
    script: simulator.script,
    stats: simulator.stats,
    close: simulator.close,
    /** An AniLink whose AniList slot uses the simulator (MAL keeps its default endpoint). */
    client(credentials = {}) {
      const { anilist, mal, ...clientLevel } = credentials;
      return new AniLink({ ...clientLevel, anilist: { baseUrl: simulator.url, ...anilist }, mal: { ...mal } });
    },
  };
  if (typeof Symbol.asyncDispose === 'symbol') wrapped[Symbol.asyncDispose] = simulator.close;
  return wrapped;
}

module.exports = { startAniListSimulator };
