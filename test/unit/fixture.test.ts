import { describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhooks/events.ts';
import { parseFixture } from '../../services/provisioning/parse-fixture.ts';

const withEndpoint = (endpoint: Record<string, unknown>) => ({
  tenants: [{ slug: 'acme', name: 'Acme', clientId: 'acme', webhookEndpoints: [{ slug: 'main', url: 'https://hooks.acme.example/in', ...endpoint }] }],
});

describe("a provisioning fixture's webhook endpoints", () => {
  it('takes an http or https URL a delivery can reach', () => {
    for (const url of ['https://hooks.acme.example/in', 'http://127.0.0.1:4000/hooks?tenant=acme', 'https://[::1]:8443/in']) {
      expect(parseFixture(withEndpoint({ url })).tenants[0]!.webhookEndpoints![0]!.url).toBe(url);
    }
  });

  it.each([
    // Ajv's `uri` format takes these; the URL parser that deliveries use does not.
    ['https://hooks.example.com:80800/typo', 'is not a URL a delivery can reach'],
    ['https://hooks.example.com:65536/', 'is not a URL a delivery can reach'],
    ['http://1.2.3.4.5/', 'is not a URL a delivery can reach'],
    // fetch refuses the Fetch standard's bad ports (IRC, X11, SMTP, ...).
    ['https://hooks.example.com:6666/in', "names port 6666, which fetch never connects to (the Fetch standard's bad ports)"],
    ['http://hooks.example.com:10080/in', "names port 10080, which fetch never connects to (the Fetch standard's bad ports)"],
    // fetch refuses to send credentials in a URL; they would also be shown in every delivery's error.
    ['http://hookuser:hookpass@hooks.example.com/in', 'must not hold a user name or password'],
    ['https://token@hooks.example.com/in', 'must not hold a user name or password'],
  ])('refuses %s, naming the field', (url, problem) => {
    expect(() => parseFixture(withEndpoint({ url }))).toThrow(`Invalid fixture: tenants[0].webhookEndpoints[0].url ${problem}`);
  });

  it('refuses an event type no event has, naming the field (the endpoint would receive nothing, silently)', () => {
    expect(() => parseFixture(withEndpoint({ eventTypes: ['transaction.complete'] }))).toThrow('Invalid fixture: tenants[0].webhookEndpoints[0].eventTypes[0] must be one of: customer_lead.paid, transaction.completed, transaction.updated, subscription.renewed, subscription.payment_failed, subscription.paused, subscription.resumed, subscription.cancelled, webhook.test');
    expect(parseFixture(withEndpoint({ eventTypes: [...WEBHOOK_EVENT_TYPES] })).tenants[0]!.webhookEndpoints![0]!.eventTypes).toEqual([...WEBHOOK_EVENT_TYPES]);
  });
});

describe("a provisioning fixture's product prices", () => {
  const withProduct = (product: Record<string, unknown>) => ({
    tenants: [{ slug: 'acme', name: 'Acme', clientId: 'acme', products: [{ slug: 'box', name: 'Box', price: '500.00', currency: 'JPY', ...product }] }],
  });

  it('refuses a price or recurring amount a currency without a minor unit cannot be charged, naming the field', () => {
    expect(() => parseFixture(withProduct({ price: '19.99' }))).toThrow('Invalid fixture: tenants[0].products[0].price must be a whole amount in JPY (it has no minor unit)');
    const plan = { recurringAmount: '4.99', intervalDays: 30 };
    expect(() => parseFixture(withProduct({ subscriptionPlan: plan }))).toThrow('Invalid fixture: tenants[0].products[0].subscriptionPlan.recurringAmount must be a whole amount in JPY');
  });

  it('takes whole yen, and cents in a currency that has them', () => {
    expect(parseFixture(withProduct({ subscriptionPlan: { recurringAmount: '500.00', intervalDays: 30 } })).tenants[0]!.products![0]!.price).toBe('500.00');
    expect(parseFixture(withProduct({ price: '19.99', currency: 'USD' })).tenants[0]!.products![0]!.price).toBe('19.99');
  });
});
