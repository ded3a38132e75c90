import { createHmac } from 'node:crypto';

/** Standard Webhooks headers for one attempt. */
export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

function signatureWith(secret: string, content: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(content, 'utf8').digest('base64')}`;
}

/**
 * Signs `id.timestamp.body` with every given secret (two during a rotation, space-separated),
 * as the `standardwebhooks` package verifies.
 */
export function signWebhook(input: { id: string; timestampSeconds: number; body: string; secrets: readonly string[] }): SignedHeaders {
  const content = `${input.id}.${input.timestampSeconds}.${input.body}`;
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestampSeconds),
    'webhook-signature': input.secrets.map((secret) => signatureWith(secret, content)).join(' '),
  };
}
