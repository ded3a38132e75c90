import net from 'node:net';
import { freePort } from './free-port.ts';

export interface TcpCut {
  readonly address: string;
  /** Closes every connection and refuses new ones, as a server that went down does. */
  cut(): Promise<void>;
  /** Passes connections again on the same port (after `cut`), or lets held bytes flow again (after `freeze`). */
  restore(): Promise<void>;
  /**
   * Keeps every connection open and passes nothing either way, new connections included: a server that hangs (frozen,
   * swapped out) rather than one that is down.
   */
  freeze(): void;
  close(): Promise<void>;
}

/** A link of a client's connection to the server: both ends, and whether bytes flow between them. */
interface Link {
  readonly incoming: net.Socket;
  outgoing?: net.Socket;
}

/** A TCP pass-through to a real server that a test can cut, freeze and restore. */
export async function startTcpCut(target: string): Promise<TcpCut> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<net.Socket>();
  const links = new Set<Link>();
  const listenPort = await freePort();
  let server: net.Server | undefined;
  let frozen = false;

  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const flow = (link: Link) => {
    link.outgoing ??= net.connect(port, host);
    if (!sockets.has(link.outgoing)) track(link.outgoing);
    link.incoming.pipe(link.outgoing).pipe(link.incoming);
    link.incoming.resume();
    link.outgoing.resume();
  };
  const hold = (link: Link) => {
    link.incoming.unpipe();
    link.outgoing?.unpipe();
    link.incoming.pause();
    link.outgoing?.pause();
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      if (server) return resolve();
      server = net.createServer((incoming) => {
        const link: Link = { incoming };
        links.add(link);
        track(incoming);
        incoming.on('close', () => links.delete(link));
        if (frozen) hold(link);
        else flow(link);
      });
      server.once('error', reject);
      server.listen(listenPort, '127.0.0.1', () => resolve());
    });
  const cut = async () => {
    frozen = false;
    const closed = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    for (const socket of sockets) socket.destroy();
    links.clear();
    await closed;
    server = undefined;
  };
  const restore = async () => {
    if (frozen) {
      frozen = false;
      for (const link of links) flow(link);
    }
    await listen();
  };
  const freeze = () => {
    frozen = true;
    for (const link of links) hold(link);
  };
  await listen();
  return { address: `127.0.0.1:${listenPort}`, cut, restore, freeze, close: cut };
}
