/**
 * A small HTTP proxy on 127.0.0.1 for the proxy tests: it forwards absolute-form HTTP
 * requests and opens CONNECT tunnels, only ever to 127.0.0.1, and records what passed
 * through it. With `credentials` set it demands them (`407` otherwise), as a corporate proxy does.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

export interface ProxiedRequest {
  method: string;
  /** The request target as the client sent it: absolute form for HTTP, `host:port` for CONNECT. */
  target: string;
  proxyAuthorization?: string;
}

export interface TestProxy {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Plain HTTP requests forwarded (or refused), in arrival order. */
  forwarded: ProxiedRequest[];
  /** CONNECT requests, in arrival order. */
  tunnels: ProxiedRequest[];
  reset(): void;
  close(): Promise<void>;
}

export async function startTestProxy(options: { credentials?: string } = {}): Promise<TestProxy> {
  const forwarded: ProxiedRequest[] = [];
  const tunnels: ProxiedRequest[] = [];
  const sockets = new Set<Socket>();
  const expected = options.credentials && `Basic ${Buffer.from(options.credentials).toString('base64')}`;
  const authorized = (req: http.IncomingMessage) => !expected || req.headers['proxy-authorization'] === expected;
  const record = (req: http.IncomingMessage): ProxiedRequest => ({
    method: req.method ?? '',
    target: req.url ?? '',
    proxyAuthorization: req.headers['proxy-authorization'],
  });

  const server = http.createServer((req, res) => {
    forwarded.push(record(req));
    if (!authorized(req)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end();
      return;
    }
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('the test proxy expects absolute-form request targets');
      return;
    }
    if (target.hostname !== '127.0.0.1') {
      res.writeHead(403).end('the test proxy only forwards to 127.0.0.1');
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const upstream = http.request(
      { host: '127.0.0.1', port: target.port, method: req.method, path: `${target.pathname}${target.search}`, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });

  server.on('connect', (req: http.IncomingMessage, client: Socket, head: Buffer) => {
    tunnels.push(record(req));
    client.on('error', () => client.destroy());
    if (!authorized(req)) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\n\r\n');
      return;
    }
    const [host, port] = (req.url ?? '').split(':');
    if (host !== '127.0.0.1') {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const upstream = net.connect(Number(port), '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    forwarded,
    tunnels,
    reset() {
      forwarded.length = 0;
      tunnels.length = 0;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
