import net from 'node:net';

/**
 * Ports are taken from below Linux's ephemeral range (32768-60999 by default): the kernel hands ports of that range to
 * every outgoing connection and every `listen(0)` on the machine, so a port found free there can be taken by any
 * process before the test's server binds it (`npm start` once failed with EADDRINUSE that way). Here only another
 * test picking the same port could, and a port is never handed out twice by one process.
 */
const RANGE = { from: 20_000, to: 32_000 } as const;
const handedOut = new Set<number>();

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = RANGE.from + Math.floor(Math.random() * (RANGE.to - RANGE.from));
    if (handedOut.has(port) || !(await isFree(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port found between ${RANGE.from} and ${RANGE.to}`);
}
