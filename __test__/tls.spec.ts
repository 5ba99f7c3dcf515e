// Certificate trust (issue 14): a private CA is trusted through NODE_EXTRA_CA_CERTS, as in
// Node; without it the handshake fails typed, with a reason that says what to do. The CA and
// the server certificate are generated for this run (openssl) into a temporary directory.
// Trust is read once per process, at the first TLS connection, so each case runs in its own
// child process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
});
