import { Webhook } from 'standardwebhooks';

/** Standard Webhooks headers for one attempt. */
export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Signs `id.timestamp.body` with every given secret, space-separated, so a receiver still on the
 * previous secret verifies during a rotation.
 */
export function signWebhook(input: { id: string; timestampSeconds: number; body: string; secrets: readonly string[] }): SignedHeaders {
  const timestamp = new Date(input.timestampSeconds * 1000);
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestampSeconds),
    'webhook-signature': input.secrets.map((secret) => new Webhook(secret).sign(input.id, timestamp, input.body)).join(' '),
  };
}

/** Whether `standardwebhooks` can sign with the secret (its base64 decodes): what a fixture's secret must be. */
export function isUsableSigningSecret(secret: string): boolean {
  try {
    new Webhook(secret);
    return true;
  } catch {
    return false;
  }
}
