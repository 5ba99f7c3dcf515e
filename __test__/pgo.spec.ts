// The profile-guided build's own parts (scripts/pgo.mjs): it must find the llvm-profdata that
// reads what rustc's profiler writes, and its training run must take the paths users take. The
// build itself (instrumented, trained, optimized) runs in CI's `npm install` (.ci/run).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTestCertificates } from './support/test-certificates.mjs';

const root = join(__dirname, '..');

describe('profile-guided builds', () => {
  it("picks the llvm-profdata of rustc's LLVM major, whatever its name", async () => {
    const { llvmProfdataFor } = await import('../scripts/pgo.mjs');
    const dir = mkdtempSync(join(tmpdir(), 'anilink-llvm-'));
    try {
      const stub = (name: string, version: string) => {
        const file = join(dir, name);
        writeFileSync(file, `#!/bin/sh\necho "${version}"\necho "  Optimized build."\n`);
        chmodSync(file, 0o755);
        return file;
      };
      const older = stub('llvm-profdata-21', 'Ubuntu LLVM version 21.1.8');
      const matching = stub('llvm-profdata', 'Debian LLVM version 22.1.8');
      const candidates = [join(dir, 'not-installed'), older, matching];
      expect(llvmProfdataFor('22', candidates)).toBe(matching);
      expect(llvmProfdataFor('21', candidates)).toBe(older);
      expect(llvmProfdataFor('23', candidates)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(process.platform === 'win32' || process.env.ANILINK_REPEATED_RUN === '1')(
    'trains on every call kind over HTTP and TLS, compressed and plain, with the failures it plans',
    async () => {
      const { startTrainingServers } = await import('../scripts/pgo-server.mjs');
      const certificates = makeTestCertificates('DNS:localhost');
      const servers = await startTrainingServers(certificates);
      try {
        const child = spawn(
          process.execPath,
          [join(root, 'scripts', 'pgo-train.mjs'), root, servers.httpUrl, servers.httpsUrl],
          { env: { ...process.env, NODE_EXTRA_CA_CERTS: certificates.caFile }, stdio: ['ignore', 'ignore', 'pipe'] },
        );
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        const [code] = await once(child, 'exit');
        expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
        const { scheme, encoding, status } = servers.stats();
        expect(scheme.http).toBeGreaterThan(4_000);
        expect(scheme.https).toBeGreaterThan(4_000);
        for (const name of ['identity', 'gzip', 'br']) expect(encoding[name]).toBeGreaterThan(500);
        // 120 failing calls per scheme, a quarter of each kind: 404s for AniList and MAL, and a
        // 503 and a 429 before each retried success.
        expect(status).toMatchObject({ 404: 120, 429: 60, 503: 60 });
      } finally {
        servers.close();
        certificates.remove();
      }
    },
    60_000,
  );
});
