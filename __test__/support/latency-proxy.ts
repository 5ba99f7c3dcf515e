/**
 * A TCP relay on 127.0.0.1 that holds every chunk a client sends for `delayMs` before passing
 * it on to `targetPort` on 127.0.0.1 (answers come back at once): a server that far away, as a
 * managed Redis in another region is. Chunks keep their order (equal delays fire in order).
 */
import net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

export interface LatencyProxy {
  port: number;
  close(): Promise<void>;
}

export async function startLatencyProxy(targetPort: number, delayMs: number): Promise<LatencyProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    track(client);
    track(upstream);
    client.on('data', (chunk) => {
      setTimeout(() => {
        if (!upstream.destroyed) upstream.write(chunk);
      }, delayMs);
    });
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.once('close', end);
    upstream.once('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
