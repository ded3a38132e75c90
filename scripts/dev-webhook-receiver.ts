import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** Where the receiver `npm start` runs listens (`DEV_WEBHOOK_RECEIVER_PORT`). */
export const devReceiverUrl = (port: number) => `http://127.0.0.1:${port}/webhooks`;

/** The receiver's address `fixtures/demo.json` names: the one of the default port. */
const FIXTURE_RECEIVER_URL = devReceiverUrl(4000);

/**
 * Points the endpoints a fixture gives the local receiver's default address at the receiver this environment's
 * `npm start` runs (`DEV_WEBHOOK_RECEIVER_PORT`), as `npm start` does when it provisions the demo: provisioning
 * `fixtures/demo.json` again beside a start on other ports would otherwise send the demo's events to port 4000,
 * where nothing, or another developer's receiver, listens. Any other address is the fixture's own and kept.
 */
export function pointAtDevReceiver(fixture: { tenants: readonly { webhookEndpoints?: { url: string }[] }[] }, receiverUrl: string): void {
  for (const tenant of fixture.tenants) for (const endpoint of tenant.webhookEndpoints ?? []) if (endpoint.url === FIXTURE_RECEIVER_URL) endpoint.url = receiverUrl;
}

export interface DevWebhookReceiver {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * What a merchant's webhook endpoint does, for development: `npm start` points the demo tenant's
 * endpoint here. Each request's Standard Webhooks signature is checked with the `standardwebhooks`
 * package, as a merchant's server would, and the event is printed on one line. A bad signature is
 * answered 400, so the product's retries can be watched too.
 */
export async function startDevWebhookReceiver(options: { host: string; port: number; secret?: string; print: (line: string) => void }): Promise<DevWebhookReceiver> {
  const verifier = options.secret ? new Webhook(options.secret) : undefined;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = request.headers['webhook-id'] ?? '-';
      let verdict = 'unverified (secret unknown)';
      let accepted = true;
      if (verifier) {
        try {
          verifier.verify(body, request.headers as Record<string, string>);
          verdict = 'signature ok';
        } catch {
          verdict = 'BAD SIGNATURE, answered 400';
          accepted = false;
        }
      }
      options.print(`webhook ${summarize(body)}  ${id}  ${verdict}`);
      response.writeHead(accepted ? 204 : 400).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host}:${port}/webhooks`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `transaction.completed {"orderId":…}`, cut to fit a terminal line. */
function summarize(body: string): string {
  try {
    const event = JSON.parse(body) as { type?: string; data?: unknown };
    const data = JSON.stringify(event.data ?? {});
    return `${event.type ?? '(no type)'} ${data.length > 160 ? `${data.slice(0, 157)}...` : data}`;
  } catch {
    return `(not JSON, ${body.length} bytes)`;
  }
}
