/**
 * TLS for the certificate and proxy tests: a throwaway certificate authority and a server
 * certificate for 127.0.0.1 and localhost it issued, generated with the `openssl` command into a temporary
 * directory (removed by `remove()`; nothing is committed), and an HTTPS server using them.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificates {
  /** PEM file of the test CA: what `NODE_EXTRA_CA_CERTS` names. */
  caFile: string;
  /** PEM files of the server's key and certificate (what `redis-server --tls-*-file` reads). */
  keyFile: string;
  certFile: string;
  key: Buffer;
  cert: Buffer;
  remove(): void;
}

/** `subjectAltName`: the names the server certificate is for (openssl's syntax). */
export function makeTestCertificates(subjectAltName = 'IP:127.0.0.1,DNS:localhost'): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'anilink-test-ca-'));
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
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
    `subjectAltName=${subjectAltName}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`,
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

export interface TlsServer {
  /** `https://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Requests answered so far. */
  requests: number;
  close(): Promise<void>;
}

/** An HTTPS server answering every request with the default GraphQL payload `{"data":{"Media":{"id":1}}}`. */
export async function startTlsServer(certificates: TestCertificates): Promise<TlsServer> {
  const sockets = new Set<Socket>();
  const server = https.createServer({ key: certificates.key, cert: certificates.cert }, (req, res) => {
    req.resume();
    req.on('end', () => {
      state.requests += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { Media: { id: 1 } } }));
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // A client that rejects the certificate just closes: not an error of the server.
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const state: TlsServer = {
    url: `https://127.0.0.1:${port}`,
    port,
    requests: 0,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return state;
}
