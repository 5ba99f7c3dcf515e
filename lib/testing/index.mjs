// ESM entry of `anilink-api-wrapper/testing`: the CommonJS module's own functions.
import entry from './index.cjs';

export const {
  startTestUpstream,
  startAniListSimulator,
  startScriptedServer,
  rateLimitHeaders,
  graphqlData,
  TEST_MAL_CLIENT_ID,
} = entry;
