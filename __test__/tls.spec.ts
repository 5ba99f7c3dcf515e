// Certificate trust (issue 14): a private CA is trusted through NODE_EXTRA_CA_CERTS, as in
// Node; without it the handshake fails typed, with a reason that says what to do. The CA and
// the server certificate are generated for this run (openssl) into a temporary directory.
// Trust is read from process.env when a slot is built (D38), set inside each child program;
// NODE_TLS_REJECT_UNAUTHORIZED=0 turns verification off with Node's warning (D37).
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resultOf, runModule } from './support/child';
import { callInChild } from './support/network-child';
import { makeTestCertificates, startTlsServer, type TestCertificates, type TlsServer } from './support/test-tls';

let certificates: TestCertificates;
let tls: TlsServer;
beforeAll(async () => {
  certificates = makeTestCertificates();
  tls = await startTlsServer(certificates);
});
afterAll(async () => {
  await tls.close();
  certificates.remove();
});

describe('certificate trust', () => {
  it('a server certificate from a CA in NODE_EXTRA_CA_CERTS is trusted', async () => {
    const run = await callInChild({ NODE_EXTRA_CA_CERTS: certificates.caFile }, tls.url);
    expect(run.outcomes).toEqual([{ ok: true, value: { id: 1 } }]);
    expect(run.code).toBe(0);
    expect(tls.requests).toBe(1);
  });

  it('without it the call rejects with a NETWORK_ERROR naming the untrusted issuer and the fix', async () => {
    const run = await callInChild({}, tls.url);
    expect(run.code).toBe(0);
    expect(run.outcomes).toHaveLength(1);
    const [outcome] = run.outcomes;
    expect(outcome).toMatchObject({ ok: false, name: 'AniLinkNetworkError', code: 'NETWORK_ERROR' });
    expect(outcome.reason).toContain('TLS handshake with 127.0.0.1 failed: invalid peer certificate: UnknownIssuer');
    expect(outcome.reason).toContain('NODE_EXTRA_CA_CERTS');
  });

  it('an unreadable NODE_EXTRA_CA_CERTS adds nothing and breaks nothing', async () => {
    const run = await callInChild({ NODE_EXTRA_CA_CERTS: `${certificates.caFile}.missing` }, tls.url);
    expect(run.code).toBe(0);
    expect(run.outcomes).toEqual([expect.objectContaining({ ok: false, code: 'NETWORK_ERROR' })]);
  });

  it('SSL_CERT_FILE set in the program replaces the system store for the slots built after it', async () => {
    const run = await callInChild({ SSL_CERT_FILE: certificates.caFile }, tls.url);
    expect(run.outcomes).toEqual([{ ok: true, value: { id: 1 } }]);
  });

  it('SSL_CERT_DIR is a list of folders, as PATH is', async () => {
    const run = await callInChild({ SSL_CERT_DIR: `/nonexistent:${dirname(certificates.caFile)}` }, tls.url);
    expect(run.outcomes).toEqual([{ ok: true, value: { id: 1 } }]);
  });
});

describe('NODE_TLS_REJECT_UNAUTHORIZED (D37)', () => {
  it('"0" turns verification off for the slots built while it is set, with one warning per process', async () => {
    const child = await runModule(
      `delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
       delete process.env.NODE_EXTRA_CA_CERTS;
       const warnings = [];
       process.on('warning', (warning) => warnings.push(warning.message));
       const { AniLink } = await import('anilink-api-wrapper');
       const slot = () => new AniLink({ anilist: { baseUrl: ${JSON.stringify(tls.url)}, retry: false } });
       const call = (client) => client.anilist.query.media({ id: 1 }).then((media) => media.id, (error) => error.code);
       const verifying = slot();
       process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
       const [first, second] = [slot(), slot()];
       process.env.NODE_TLS_REJECT_UNAUTHORIZED = 'false';
       const otherValue = slot();
       process.env.NODE_TLS_REJECT_UNAUTHORIZED = '1';
       const outcomes = [];
       for (const client of [verifying, first, second, otherValue, slot(), first]) outcomes.push(await call(client));
       await new Promise((resolve) => setImmediate(resolve));
       console.log("RESULT " + JSON.stringify({ outcomes, warnings }));`,
    );
    const { outcomes, warnings } = resultOf<{ outcomes: unknown[]; warnings: string[] }>(child);
    expect(outcomes).toEqual(['NETWORK_ERROR', 1, 1, 'NETWORK_ERROR', 'NETWORK_ERROR', 1]);
    expect(warnings).toEqual([expect.stringContaining('NODE_TLS_REJECT_UNAUTHORIZED')]);
    expect(warnings[0]).toContain('disabling certificate verification');
  });
});
