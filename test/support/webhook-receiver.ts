import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly verified: boolean;
  readonly payload: unknown;
}

/** What the receiver does with the n-th request (1-based). */
export type Behaviour = (attempt: number) => { status: number; headers?: Record<string, string>; body?: string } | 'hang';

/**
 * A real HTTP receiver that verifies each request's Standard Webhooks signature with the
 * `standardwebhooks` package, as a merchant's server would.
 */
export async function startWebhookReceiver(secret: string, behaviour: Behaviour): Promise<{ url: string; received: ReceivedWebhook[]; close(): Promise<void> }> {
  const received: ReceivedWebhook[] = [];
  const verifier = new Webhook(secret);
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let payload: unknown;
      let verified = false;
      try {
        payload = verifier.verify(body, request.headers as Record<string, string>);
        verified = true;
      } catch {
        verified = false;
      }
      received.push({ headers: request.headers, body, verified, payload });
      const action = behaviour(received.length);
      if (action === 'hang') return; // never answers; the sender must time out
      response.writeHead(action.status, { 'content-type': 'text/plain', ...(action.headers ?? {}) });
      response.end(action.body ?? `status ${action.status}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
