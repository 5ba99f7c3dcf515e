import { defineConfig } from 'vitest/config';

// The suite talks only to servers on 127.0.0.1 that it starts. The transport honours the proxy
// variables (see docs/proxies-and-tls.md), so a developer's or CI machine's proxy settings would route
// that traffic elsewhere: the proxy tests set what they need themselves.
for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY']) {
  delete process.env[name];
  delete process.env[name.toLowerCase()];
}

export default defineConfig({
  test: {
    include: ['__test__/**/*.spec.ts'],
    // Native addons and keep-alive sockets behave most like production in child processes.
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
