import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret } from '../../domain/crypto/secret-box.ts';
import { signWebhook } from '../../domain/webhooks/signing.ts';

describe('webhook signing during a secret rotation', () => {
  it('sends one signature per secret, so a receiver holding either one verifies', () => {
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: {} });
    const headers = signWebhook({ id: 'msg_rotation', timestampSeconds: Math.floor(Date.now() / 1000), body, secrets: [current, previous] });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const secret of [current, previous]) expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateWebhookSecret()).verify(body, { ...headers })).toThrow();
  });
});
