'use strict';
// Entry `anilink-api-wrapper/testing` (CommonJS): local upstreams for users' tests.

const { startTestUpstream, TEST_MAL_CLIENT_ID } = require('./upstream.cjs');
const { startScriptedServer, rateLimitHeaders, graphqlData } = require('./scripted-server.cjs');
const { startAniListSimulator } = require('./simulator.cjs');

module.exports = {
  startTestUpstream,
  startAniListSimulator,
  startScriptedServer,
  rateLimitHeaders,
  graphqlData,
  TEST_MAL_CLIENT_ID,
};
