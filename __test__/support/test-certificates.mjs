/**
 * A throwaway certificate authority and a server certificate it issued (for 127.0.0.1 and
 * localhost unless `subjectAltName`, in openssl's syntax, names others; also a client certificate,
 * as the nodes of a TLS Redis Cluster present their own to each other),
 * generated with the `openssl` command into a temporary directory (removed by `remove()`;
 * nothing is committed). Plain JavaScript, so the runtime conformance runner
 * (scripts/test-runtimes.mjs) uses it as the TLS tests do (through test-tls.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function makeTestCertificates(subjectAltName = 'IP:127.0.0.1,DNS:localhost') {
  const dir = mkdtempSync(join(tmpdir(), 'anilink-test-ca-'));
  const file = (name) => join(dir, name);
  const openssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=AniLink test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  openssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(
    file('server.ext'),
    `subjectAltName=${subjectAltName}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\n`,
  );
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'server.ext',
    '-out',
    'server.pem',
  );
  return {
    caFile: file('ca.pem'),
    keyFile: file('server.key'),
    certFile: file('server.pem'),
    key: readFileSync(file('server.key')),
    cert: readFileSync(file('server.pem')),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
