import net from 'node:net';
import { freePort } from './free-port.ts';

/**
 * A TCP pass-through to a real server that a test can cut and restore: cut, it closes every connection and refuses
 * new ones, as a server that went down does; restored, it passes connections again on the same port.
 */
export async function startTcpCut(target: string): Promise<{ address: string; cut(): Promise<void>; restore(): Promise<void>; close(): Promise<void> }> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<net.Socket>();
  const listenPort = await freePort();
  let server: net.Server | undefined;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      if (server) return resolve();
      server = net.createServer((incoming) => {
        const outgoing = net.connect(port, host);
        for (const socket of [incoming, outgoing]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => socket.destroy());
        }
        incoming.pipe(outgoing).pipe(incoming);
      });
      server.once('error', reject);
      server.listen(listenPort, '127.0.0.1', () => resolve());
    });
  const cut = async () => {
    const closed = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
    server = undefined;
  };
  await listen();
  return { address: `127.0.0.1:${listenPort}`, cut, restore: listen, close: cut };
}
