// The release workflow builds, tests and publishes with provenance: zizmor (a PyPI package,
// `pip install zizmor`) must find nothing in it. Offline audits only; skipped where zizmor is
// not installed (a developer machine without it; the workflow's own test jobs).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const workflow = join(__dirname, '..', '.github', 'workflows', 'CI.yml');
const zizmorInstalled = spawnSync('zizmor', ['--version'], { encoding: 'utf8' }).status === 0;

describe('the release workflow', () => {
  it.runIf(zizmorInstalled)('passes zizmor: actions pinned to commits, no caches, no persisted credentials', () => {
    const run = spawnSync('zizmor', ['--offline', '--format', 'plain', workflow], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stdout).toContain('No findings to report');
    expect(run.status).toBe(0);
  });
});
