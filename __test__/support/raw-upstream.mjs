// Pieces shared by the scripts that play a raw upstream byte by byte (the hostile-upstream
// fuzzer, the differential conformance suite): a seeded random source, and a TCP server on
// 127.0.0.1 that tracks its sockets so it can close them all.
import net from 'node:net';

/** mulberry32: small, fast, and the same on every platform. */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Listen on 127.0.0.1 and hand every connection to `onConnection` (socket errors are the
 * script's to provoke, so they are ignored). Resolves `{ url, close }`; `close` runs
 * `beforeClose`, destroys every open socket, then closes the server.
 */
export function listenRaw(onConnection, beforeClose = () => {}) {
  const sockets = new Set();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    onConnection(socket);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        close: () => {
          beforeClose();
          for (const socket of sockets) socket.destroy();
          return new Promise((done) => server.close(done));
        },
      }),
    ),
  );
}
