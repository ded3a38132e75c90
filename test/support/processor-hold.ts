import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One processor answer kept from the gateway: `arrived` once the processor answered the gateway's request, sent on at `release()`. */
export interface HeldAnswer {
  readonly arrived: Promise<void>;
  release(): void;
}

/**
 * A real HTTP front before the sandbox processor that keeps the processor's answer to a request the test names from
 * the gateway until the test releases it: the gateway's call is in flight (the processor decided, the gateway does not
 * know) for as long as the test needs to act meanwhile. Everything else passes through unchanged. A gateway behind it
 * needs a processor timeout longer than the hold, or its call ends as timed out first.
 */
export async function startHoldingFront(target: string) {
  let next: { readonly path: RegExp; readonly arrived: () => void; readonly released: Promise<void> } | undefined;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const body = Buffer.concat(chunks);
      const hold = next && request.method === 'POST' && next.path.test(request.url ?? '') ? next : undefined;
      if (hold) next = undefined;
      try {
        const passed = await fetch(`${target}${request.url}`, { method: request.method, headers: { 'content-type': 'application/json' }, body: body.length > 0 ? body : undefined });
        const text = await passed.text();
        if (hold) {
          hold.arrived();
          await hold.released;
        }
        response.writeHead(passed.status, { 'content-type': 'application/json' }).end(text);
      } catch {
        response.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Holds the answer to the next POST whose path matches (only that one; later ones pass through). */
    holdNext(path: RegExp): HeldAnswer {
      let arrived!: () => void;
      let release!: () => void;
      const arrival = new Promise<void>((resolve) => (arrived = resolve));
      next = { path, arrived, released: new Promise<void>((resolve) => (release = resolve)) };
      return { arrived: arrival, release };
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
