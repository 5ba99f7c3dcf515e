import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['__test__/**/*.spec.ts'],
    // Native addons and keep-alive sockets behave most like production in child processes.
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
