import { describe, expect, it } from 'vitest';
import { devReceiverUrl, pointAtDevReceiver } from '../../scripts/dev-webhook-receiver.ts';

describe("a fixture's webhook endpoints, provisioned beside npm start", () => {
  it("point at this environment's receiver where they name the local receiver's default address, and nowhere else", () => {
    const fixture = {
      tenants: [
        { webhookEndpoints: [{ url: 'http://127.0.0.1:4000/webhooks' }, { url: 'https://merchant.example/hooks' }, { url: 'http://127.0.0.1:4000/other' }] },
        {},
      ],
    };
    pointAtDevReceiver(fixture, devReceiverUrl(4392));
    expect(fixture.tenants[0]!.webhookEndpoints!.map((endpoint) => endpoint.url)).toEqual([
      'http://127.0.0.1:4392/webhooks',
      'https://merchant.example/hooks',
      'http://127.0.0.1:4000/other',
    ]);
  });
});
