/**
 * TLS for the certificate and proxy tests: a throwaway certificate authority and a server
 * certificate for 127.0.0.1 and localhost it issued (test-certificates.mjs), and an HTTPS server
 * using them.
 */
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { makeTestCertificates as makeCertificates } from './test-certificates.mjs';

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
export function makeTestCertificates(subjectAltName?: string): TestCertificates {
  return makeCertificates(subjectAltName) as TestCertificates;
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
