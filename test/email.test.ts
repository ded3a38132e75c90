import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.ts';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.ts';
import { temporalEmailDispatcher } from '../adapters/temporal/email-dispatcher.ts';
import type { EmailDispatcher } from '../domain/email/email-dispatcher.ts';
import { insertQueuedEmails, recordDeliveryOutcomes } from '../data/queries/emails.ts';
import { createEmailDeliveryActivities } from '../activities/email/email-delivery.activities.ts';
import { startGatewayWith } from './support/email-gateway.ts';
import { ApplicationFailure } from '@temporalio/common';
import { acceptEmails } from '../services/email/accept-emails.ts';
import { createStringTemplateCompiler, STRING_TEMPLATE_LIMITS } from '../domain/email/string-templates.ts';
import { EMAIL_LIMITS } from '../domain/email/limits.ts';
import { createActivities } from '../activities/index.ts';
import { bundleWorkflows, createWorker } from '../worker/create-worker.ts';
import { emailRendererFromConfig, mailerFromConfig } from '../worker/mailer-from-config.ts';
import { processorsFromConfig } from '../worker/processors-from-config.ts';
import { createEmailTenant, gql, newRecipient, postEmail, readEmail, settledEmail, listTenantEmails, type EmailTenant } from './support/smtp-email.ts';
import { waitForLockWaiters } from './support/lock-waiters.ts';
import { refuseRows } from './support/refusals.ts';
import { openOrm } from '../data/orm.ts';

let sink: SmtpSink;
let app: TestApp;
let tenant: EmailTenant;

beforeAll(async () => {
  sink = await startSmtpSink();
  // Short waits between attempts: a deferred e-mail is retried within the test, five attempts in all.
  // GraphQL reads poll for statuses: a rate limit far above the file's traffic.
  app = await startTestApp({ SMTP_URL: sink.url, EMAIL_RETRY_SCHEDULE: '0,0.2,0.2,0.2,0.2', RATE_LIMIT_PER_MINUTE: '100000' });
  await app.startWorker();
  tenant = await createEmailTenant(app);
});
afterAll(async () => {
  await app?.close();
  await sink?.close();
});

const generic = (overrides: Record<string, unknown> = {}) => ({
  tenant_key: tenant.tenantKey,
  from: `Shop <orders@${tenant.domain}>`,
  to: newRecipient(),
  subject: 'Your order',
  templateType: 'react',
  templateName: 'generic',
  data: { heading: 'Thanks <for> shopping', bodyContent: 'First paragraph.\n\nSecond & last.', ctaText: 'Track it', ctaUrl: 'https://shop.example/track?id=1&x=2' },
  ...overrides,
});

describe('POST /api/email', () => {
  it('queues a React e-mail and delivers it over SMTP: envelope with cc and bcc, headers, HTML and text parts', async () => {
    const to = newRecipient('to');
    const cc = newRecipient('cc');
    const bcc = newRecipient('bcc');
    const answer = await postEmail(app, '/api/email', generic({ to, cc: [cc], bcc, replyTo: 'Support <help@elsewhere.example>' }));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      success: true,
      message: 'Email queued for delivery',
      data: { message: 'Email queued for delivery', id: expect.stringMatching(/^[0-9a-f-]{36}$/), to, tenantKey: tenant.tenantKey },
    });

    const [message] = await sink.waitFor(to, 1);
    expect(message!.envelope.mailFrom).toBe(`orders@${tenant.domain}`);
    expect([...message!.envelope.rcptTo].sort()).toEqual([to, cc, bcc].sort());
    const mail = message!.mail;
    expect(mail.subject).toBe('Your order');
    expect(mail.from?.value[0]).toMatchObject({ address: `orders@${tenant.domain}`, name: 'Shop' });
    expect(mail.replyTo?.value[0]?.address).toBe('help@elsewhere.example');
    expect(mail.cc && !Array.isArray(mail.cc) ? mail.cc.value.map((v) => v.address) : []).toEqual([cc]);
    // Bcc travels in the envelope only: no other recipient can see it.
    expect(mail.bcc).toBeUndefined();
    expect(message!.raw).not.toContain(bcc);
    expect(mail.html).toContain('Thanks &lt;for&gt; shopping');
    expect(mail.html).toContain('href="https://shop.example/track?id=1&amp;x=2"');
    expect(mail.text).toContain('First paragraph.');
    expect(mail.text).toContain('Second & last.');
    expect(mail.text).toContain('https://shop.example/track?id=1&x=2');

    const email = await settledEmail(app, tenant.apiKey, answer.body.data.id);
    expect(email).toMatchObject({ status: 'sent', attemptCount: 1, from: `Shop <orders@${tenant.domain}>`, to: [to], cc: [cc], bcc: [bcc], templateName: 'generic' });
    expect(email.smtpMessageId).toBe(mail.messageId);
    expect(email.smtpResponse).toContain('queued as');
    expect(email.events.map((e: { kind: string }) => e.kind)).toEqual(['queued', 'sent']);
    expect(email.events[1].detail).toBe(mail.messageId);
  });

  it('renders a string template with escaped values, dotted paths, #if and a text part derived from the HTML', async () => {
    const to = newRecipient();
    const answer = await postEmail(app, '/api/email', {
      tenant_key: tenant.tenantKey,
      from: `hello@${tenant.domain.toUpperCase()}`,
      to: [to],
      subject: 'Hi',
      templateType: 'string',
      templateContent:
        '<h1>Hello {{name}}</h1><p>Order {{order.id}}{{missing}}</p>{{#if vip}}<p>VIP</p>{{else}}<p>Regular</p>{{/if}}{{#if items}}<p>has items</p>{{/if}}<div>{{{signature}}}</div>',
      data: { name: '<script>alert(1)</script>', order: { id: 'A-7' }, vip: 0, items: [], signature: '<b>The shop</b>' },
    });
    expect(answer.status).toBe(200);
    const [message] = await sink.waitFor(to, 1);
    expect(message!.mail.html).toContain('<h1>Hello &lt;script&gt;alert(1)&lt;/script&gt;</h1>');
    expect(message!.mail.html).not.toContain('<script>');
    expect(message!.mail.html).toContain('<p>Order A-7</p><p>Regular</p><div><b>The shop</b></div>');
    expect(message!.mail.text).toContain('Order A-7');
    expect(message!.mail.text).not.toContain('<p>');
  });

  it('renders order-confirmation and welcome-membership with the data a store sends', async () => {
    const buyer = newRecipient('buyer');
    const member = newRecipient('member');
    const order = await postEmail(
      app,
      '/api/email',
      generic({
        to: buyer,
        templateName: 'order-confirmation',
        data: {
          storeName: 'Acme',
          customerName: 'Ann',
          orderNumber: 'SO-1001',
          currency: 'EUR',
          items: [
            { name: 'Blue shirt', quantity: 2, unitPrice: '19.90', total: '39.80' },
            { name: 'Socks', quantity: 1, unitPrice: 5 },
          ],
          subtotal: '44.80',
          shipping: '4.90',
          total: '49.70',
          shippingAddress: ['Ann Smith', '1 Main St', 'Springfield'],
          orderUrl: 'https://acme.example/orders/SO-1001',
        },
      }),
    );
    const welcome = await postEmail(
      app,
      '/api/email',
      generic({
        to: member,
        templateName: 'welcome-membership',
        data: { memberName: 'Bo', membershipName: 'Gold Club', loginUrl: 'https://acme.example/login', benefits: ['Free shipping', 'Early access'] },
      }),
    );
    expect([order.status, welcome.status]).toEqual([200, 200]);
    const [orderMail] = await sink.waitFor(buyer, 1);
    for (const text of ['Order SO-1001 confirmed', 'Hi Ann', '2 × Blue shirt', 'EUR 39.80', 'EUR 5', 'EUR 49.70', '1 Main St']) expect(orderMail!.mail.text).toContain(text);
    expect(orderMail!.mail.html).toContain('href="https://acme.example/orders/SO-1001"');
    const [welcomeMail] = await sink.waitFor(member, 1);
    for (const text of ['Welcome, Bo!', 'Gold Club', 'Free shipping', 'https://acme.example/login']) expect(welcomeMail!.mail.text).toContain(text);
  });

  it('retries a 451 and delivers once when the server accepts the third attempt', async () => {
    const to = newRecipient('greylisted');
    sink.script(to, [451, 451]);
    const answer = await postEmail(app, '/api/email', generic({ to }));
    expect(answer.status).toBe(200);
    const email = await settledEmail(app, tenant.apiKey, answer.body.data.id);
    expect(email.status).toBe('sent');
    expect(email.attemptCount).toBe(3);
    expect(email.events.map((e: { kind: string }) => e.kind)).toEqual(['queued', 'deferred', 'deferred', 'sent']);
    expect(email.events[1].detail).toContain('451');
    expect(sink.attempts(to)).toBe(3);
    expect(sink.receivedBy(to)).toHaveLength(1);
  });

  it('fails an e-mail the server refuses with 550, without retrying it', async () => {
    const to = newRecipient('nobody');
    sink.script(to, [], 550);
    const answer = await postEmail(app, '/api/email', generic({ to }));
    const email = await settledEmail(app, tenant.apiKey, answer.body.data.id);
    expect(email.status).toBe('failed');
    expect(email.failureReason).toContain('550');
    expect(email.events.map((e: { kind: string }) => e.kind)).toEqual(['queued', 'failed']);
    // Longer than the whole retry schedule: a refused e-mail is not tried again.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(sink.attempts(to)).toBe(1);
    expect(sink.receivedBy(to)).toHaveLength(0);
  });

  it('fails an e-mail still deferred after the last attempt of the schedule (never retried forever)', async () => {
    const to = newRecipient('always-busy');
    sink.script(to, [], 421);
    const answer = await postEmail(app, '/api/email', generic({ to }));
    const email = await settledEmail(app, tenant.apiKey, answer.body.data.id);
    expect(email.status).toBe('failed');
    expect(email.failureReason).toMatch(/^Gave up after the last attempt: .*421/);
    expect(email.attemptCount).toBe(5);
    expect(sink.attempts(to)).toBe(5);
  });

  it('fails an e-mail whose every recipient the server deferred on every attempt (it reached no one)', async () => {
    const to = newRecipient('rcpt-busy');
    const also = newRecipient('rcpt-busy-too');
    sink.scriptRcpt(to, [], 451);
    sink.scriptRcpt(also, [451], 550);
    const answer = await postEmail(app, '/api/email', generic({ to: [to, also] }));
    const email = await settledEmail(app, tenant.apiKey, answer.body.data.id);
    expect(email.status).toBe('failed');
    expect(email.smtpMessageId).toBeNull();
    expect(email.failureReason).toMatch(/^Every recipient was refused: .*550.*gave up after the last attempt: .*451/);
    expect(email.attemptCount).toBe(5);
    expect(sink.receivedBy(to)).toHaveLength(0);
    expect(sink.receivedBy(also)).toHaveLength(0);
  });
});

describe('POST /api/email/batch', () => {
  it('queues every e-mail of a batch, answers one response per e-mail and delivers them in one workflow', async () => {
    const recipients = [newRecipient('a'), newRecipient('b'), newRecipient('c')];
    const answer = await postEmail(app, '/api/email/batch', {
      tenant_key: tenant.tenantKey,
      emails: recipients.map((to, index) => ({
        from: `news@${tenant.domain}`,
        to,
        subject: `Item ${index}`,
        templateType: 'string',
        templateContent: '<p>Number {{n}}</p>',
        data: { n: index },
      })),
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: true, message: 'Batch queued for delivery', data: { message: 'Batch queued for delivery', count: 3, tenantKey: tenant.tenantKey } });
    const ids = answer.body.data.responses.map((r: { id: string }) => r.id);
    expect(new Set(ids).size).toBe(3);
    for (const [index, to] of recipients.entries()) {
      const [message] = await sink.waitFor(to, 1);
      expect(message!.mail.subject).toBe(`Item ${index}`);
      expect(message!.mail.html).toContain(`<p>Number ${index}</p>`);
    }
    const first = await settledEmail(app, tenant.apiKey, ids[0]);
    expect(first.batchIndex).toBe(0);
    const inBatch = await listTenantEmails(app, tenant.apiKey, { batchId: first.batchId });
    expect(inBatch.map((e) => e.id).sort()).toEqual([...ids].sort());
    // One workflow for the batch, none per e-mail.
    const batchRun = await app.temporal.client.workflow.getHandle(`email-batch/tenant-${tenant.id}/${first.batchId}`).describe();
    expect(batchRun.type).toBe('emailDeliveryWorkflow');
    await expect(app.temporal.client.workflow.getHandle(`email/tenant-${tenant.id}/${ids[0]}`).describe()).rejects.toThrow();
  });

  it('refuses a whole batch with one invalid item, naming its index, and sends nothing', async () => {
    const recipients = [newRecipient(), newRecipient(), newRecipient()];
    const before = (await listTenantEmails(app, tenant.apiKey, { first: 100 })).length;
    const answer = await postEmail(app, '/api/email/batch', {
      tenant_key: tenant.tenantKey,
      emails: recipients.map((to, index) => ({
        from: `news@${tenant.domain}`,
        to: index === 2 ? 'not-an-address' : to,
        subject: 'Hi',
        templateType: 'react',
        templateName: 'generic',
        data: { heading: 'H', bodyContent: 'B' },
      })),
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ success: false, error: 'Validation error', details: { 'emails[2].to[0]': 'is not a valid e-mail address: not-an-address' } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const to of recipients) expect(sink.attempts(to)).toBe(0);
    expect(await listTenantEmails(app, tenant.apiKey, { first: 100 })).toHaveLength(before);
  });

  it('refuses more than 100 e-mails in a batch', async () => {
    const item = { from: `news@${tenant.domain}`, to: newRecipient(), subject: 'Hi', templateType: 'string', templateContent: '<p>x</p>' };
    const answer = await postEmail(app, '/api/email/batch', { tenant_key: tenant.tenantKey, emails: Array.from({ length: 101 }, () => item) });
    expect(answer.status).toBe(400);
    expect(answer.body.details).toEqual({ emails: 'must NOT have more than 100 items' });
  });
});

describe('e-mail errors (spec 7.2)', () => {
  const send = (body: unknown) => postEmail(app, '/api/email', body);

  it.each([
    ['templateName missing for react', { templateName: undefined }, { templateName: 'is required when templateType is react' }],
    ['templateContent missing for string', { templateType: 'string', templateName: undefined }, { templateContent: 'is required when templateType is string' }],
    ['templateName and to missing (one told with the other)', { templateName: undefined, to: undefined }, { to: 'is required', templateName: 'is required when templateType is react' }],
    ['an unknown template type', { templateType: 'mjml' }, { templateType: 'must be one of: react, string' }],
    ['an unknown template', { templateName: 'invoice' }, { templateName: 'is not a known template; one of generic, order-confirmation, welcome-membership' }],
    ['a template file name', { templateName: '../templates/welcome.html' }, { templateName: expect.stringContaining('loading templates from files is not supported') }],
    ['a template path field', { templatePath: '/etc/passwd' }, { templatePath: expect.stringContaining('loading templates from files is not supported') }],
    ['a partial in a string template', { templateType: 'string', templateName: undefined, templateContent: '<p>{{> header}}</p>' }, { templateContent: expect.stringContaining('uses a partial') }],
    ['a helper in a string template', { templateType: 'string', templateName: undefined, templateContent: '{{#each items}}x{{/each}}' }, { templateContent: expect.stringContaining('only {{#if}}') }],
    ['an invalid recipient', { to: ['ok@inbox.example', 'bad@'] }, { 'to[1]': 'is not a valid e-mail address: bad@' }],
    ['a header injection in the subject', { subject: 'Hi\r\nBcc: victim@x.example' }, { subject: 'must not contain line breaks' }],
    ['more than 50 recipients', { to: Array.from({ length: 30 }, (_, i) => `a${i}@inbox.example`), cc: Array.from({ length: 21 }, (_, i) => `c${i}@inbox.example`) }, { to: expect.stringContaining('51 recipients') }],
    ['template data of the wrong shape', { data: { heading: 'H' } }, { 'data.bodyContent': 'is required' }],
    ['a javascript: link', { data: { heading: 'H', bodyContent: 'B', ctaText: 'Go', ctaUrl: 'javascript:alert(1)' } }, { 'data.ctaUrl': expect.stringContaining('must match pattern') }],
    ['a button without its link', { data: { heading: 'H', bodyContent: 'B', ctaText: 'Go' } }, { 'data.ctaUrl': 'is required with ctaText' }],
    ['a link without its button', { data: { heading: 'H', bodyContent: 'B', ctaUrl: 'https://shop.example/' } }, { 'data.ctaText': 'is required with ctaUrl' }],
    [
      'a support address that is none',
      { templateName: 'welcome-membership', data: { memberName: 'Ada', membershipName: 'Gold', loginUrl: 'https://shop.example/login', supportEmail: 'javascript:alert(1)' } },
      { 'data.supportEmail': 'must be an e-mail address' },
    ],
    // No body at all: the variables name no key of the data (nothing on an object's prototype is read either).
    ['a template that renders nothing with this data', { templateType: 'string', templateName: undefined, templateContent: ' {{constructor.constructor}}{{nme}} ', data: { name: 'Ada' } }, { templateContent: expect.stringContaining('renders nothing with this data') }],
    [
      'an amount too large to print as one',
      { templateName: 'order-confirmation', data: { storeName: 'A', orderNumber: '1', currency: 'USD', items: [{ name: 'x', quantity: 1, unitPrice: 1e21 }], total: '1.00' } },
      { 'data.items[0].unitPrice': expect.any(String) },
    ],
    ['data a template cannot print', { templateType: 'string', templateName: undefined, templateContent: '<p>{{o}}</p>', data: { o: { toString: 'x' } } }, { templateContent: expect.stringContaining('cannot be rendered with this data') }],
    // Said without the JavaScript engine's own words ("Cannot read properties of undefined (reading '0')").
    ['a block parameter the helper does not give', { templateType: 'string', templateName: undefined, templateContent: '{{#if x as |y|}}{{y}}{{/if}}', data: { x: 1 } }, { templateContent: 'cannot be rendered with this data' }],
    // The worker derives a text part from the HTML; what its converter would never finish (a list numbered from beyond
    // 2^53) or finish only after seconds (quotes nested past 8) is refused here, never left to block a worker.
    ['a list numbered from beyond 2^53', { templateType: 'string', templateName: undefined, templateContent: '<ol start="{{n}}"><li>a</li><li>b</li></ol>', data: { n: 9007199254740992 } }, { templateContent: expect.stringContaining('a list starts at 9007199254740992') }],
    ['a list given a second start beyond 2^53', { templateType: 'string', templateName: undefined, templateContent: '<ol start="1" start="9007199254740992"><li>a</li><li>b</li></ol>' }, { templateContent: expect.stringContaining('a list starts at 9007199254740992') }],
    ['quotes nested 9 deep', { templateType: 'string', templateName: undefined, templateContent: `${'<blockquote>x'.repeat(9)}${'</blockquote>'.repeat(9)}` }, { templateContent: expect.stringContaining('nest more than 8 deep') }],
    ['a reply-to whose display name needs quotes beyond 320 characters', { replyTo: `${'.'.repeat(303)} <a@shop.example>` }, { replyTo: expect.stringContaining('longer than 320 characters') }],
    ['tenant_key that is not a UUID', { tenant_key: 'acme' }, { tenant_key: 'must be a UUID such as 123e4567-e89b-12d3-a456-426614174000' }],
    ['tenant_key as a URN (ajv\'s uuid format takes it, PostgreSQL does not)', { tenant_key: `urn:uuid:${randomUUID()}` }, { tenant_key: 'must be a UUID such as 123e4567-e89b-12d3-a456-426614174000' }],
    ['an empty idempotency key', { idempotencyKey: '' }, { idempotencyKey: 'must NOT have fewer than 1 characters' }],
  ])('400 Validation error for %s', async (_case, overrides, details) => {
    const to = newRecipient();
    const answer = await send(generic({ to, ...overrides }));
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ success: false, error: 'Validation error', details });
    expect(sink.attempts(to)).toBe(0);
  });

  it('400 for a body that is not JSON, and for NUL bytes in a field', async () => {
    const notJson = await send('{"tenant_key":');
    expect(notJson.status).toBe(400);
    expect(notJson.body).toEqual({ success: false, error: 'Validation error', details: { body: 'is not valid JSON' } });
    // A reserved key is valid JSON: named, not called malformed.
    const reserved = await send('{"tenant_key":"x","data":{"__proto__":{"x":1}}}');
    expect(reserved.status).toBe(400);
    expect(reserved.body).toEqual({ success: false, error: 'Validation error', details: { ['__proto__']: expect.stringContaining('not taken') } });
    const nul = await send(generic({ subject: 'a\u0000b' }));
    expect(nul.status).toBe(400);
    expect(nul.body).toMatchObject({ success: false, error: 'Validation error', details: { subject: expect.stringContaining('NUL') } });
  });

  it('415 for a body that is not sent as JSON', async () => {
    const response = await fetch(`${app.baseUrl}/api/email`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(generic()) });
    expect(response.status).toBe(415);
    expect(await response.json()).toEqual({ success: false, error: 'Validation error', details: { body: 'must be JSON sent as Content-Type: application/json' } });
  });

  it('413 for a body over 256 KiB', async () => {
    const answer = await send(generic({ data: { heading: 'H', bodyContent: 'x'.repeat(270 * 1024) } }));
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({ success: false, error: 'Validation error', details: { body: 'is larger than 262144 bytes' } });
  });

  it('401 for a tenant key no tenant has', async () => {
    const answer = await send(generic({ tenant_key: randomUUID() }));
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ success: false, error: 'Invalid tenant key or tenant not found' });
  });

  it("403 for a sender domain the tenant may not use, another tenant's domain included", async () => {
    const other = await createEmailTenant(app);
    const to = newRecipient();
    for (const from of ['a@unknown.example', `Other <a@${other.domain}>`, `a@sub.${tenant.domain}`]) {
      const answer = await send(generic({ from, to }));
      expect(answer.status).toBe(403);
      expect(answer.body).toMatchObject({ success: false, error: `Domain '${from.replace(/^.*@/, '').replace('>', '')}' is not authorized for this tenant` });
    }
    expect(sink.attempts(to)).toBe(0);
  });
});

describe('idempotency', () => {
  it('a repeat of the key returns the first answer and sends nothing; another body with the key is 409', async () => {
    const to = newRecipient();
    const body = generic({ to, idempotencyKey: `order-${randomUUID()}` });
    const first = await postEmail(app, '/api/email', body);
    const repeat = await postEmail(app, '/api/email', { ...body });
    expect(repeat.status).toBe(200);
    expect(repeat.body).toEqual(first.body);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    const changed = await postEmail(app, '/api/email', { ...body, subject: 'Another subject' });
    expect(changed.status).toBe(409);
    expect(changed.body).toEqual({ success: false, error: 'idempotencyKey was already used with a different request' });
    await settledEmail(app, tenant.apiKey, first.body.data.id);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(sink.receivedBy(to)).toHaveLength(1);
  });

  it('without a key, the same content sent twice goes out once; different content goes out again', async () => {
    const to = newRecipient();
    const body = generic({ to });
    const first = await postEmail(app, '/api/email', body);
    const second = await postEmail(app, '/api/email', Object.fromEntries(Object.entries(body).reverse()));
    expect(second.body.data.id).toBe(first.body.data.id);
    const third = await postEmail(app, '/api/email', { ...body, subject: 'Follow-up' });
    expect(third.body.data.id).not.toBe(first.body.data.id);
    await sink.waitFor(to, 2);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(sink.receivedBy(to).map((m) => m.mail.subject).sort()).toEqual(['Follow-up', 'Your order']);
  });

  it('a batch has one key: its repeat replays the batch answer and sends nothing again', async () => {
    const recipients = [newRecipient(), newRecipient()];
    const body = {
      tenant_key: tenant.tenantKey,
      idempotencyKey: `batch-${randomUUID()}`,
      emails: recipients.map((to) => ({ from: `news@${tenant.domain}`, to, subject: 'News', templateType: 'string', templateContent: '<p>news</p>' })),
    };
    const first = await postEmail(app, '/api/email/batch', body);
    const repeat = await postEmail(app, '/api/email/batch', body);
    expect(repeat.body).toEqual(first.body);
    for (const to of recipients) await sink.waitFor(to, 1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const to of recipients) expect(sink.receivedBy(to)).toHaveLength(1);
  });

  it('a key lives 7 days: after that the same key is a new request', async () => {
    const key = `weekly-${randomUUID()}`;
    const first = await postEmail(app, '/api/email', generic({ idempotencyKey: key }));
    expect(first.status).toBe(200);
    // Age the claim past its lifetime, as a week passing would.
    await app.orm.em.fork().execute(`update email_idempotency_keys set created_at = now() - interval '7 days 1 minute' where tenant_id = ? and key = ?`, [tenant.id, `key:${key}`]);
    const to = newRecipient('next-week');
    const later = await postEmail(app, '/api/email', generic({ to, idempotencyKey: key }));
    expect(later.status).toBe(200);
    expect(later.body.data.id).not.toBe(first.body.data.id);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    await sink.waitFor(to, 1);
  });

  it('concurrent repeats of one key send once (the database decides), each answered with the first answer or 409', async () => {
    const to = newRecipient();
    const body = generic({ to, idempotencyKey: `race-${randomUUID()}` });
    const answers = await Promise.all(Array.from({ length: 12 }, () => postEmail(app, '/api/email', body)));
    const accepted = answers.filter((a) => a.status === 200);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    expect(answers.every((a) => a.status === 200 || a.status === 409)).toBe(true);
    expect(new Set(accepted.map((a) => a.body.data.id)).size).toBe(1);
    await sink.waitFor(to, 1);
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(sink.receivedBy(to)).toHaveLength(1);
    const stored = (await listTenantEmails(app, tenant.apiKey, { first: 100 })).filter((e) => e.to.includes(to));
    expect(stored).toHaveLength(1);
  });

  it('twelve repeats of one key meeting at its claim store one e-mail and send one message (the claim never takes over a live key)', async () => {
    const shop = await createEmailTenant(app);
    const to = newRecipient('claim');
    const idempotencyKey = `claim-${randomUUID()}`;
    const body = JSON.stringify(generic({ tenant_key: shop.tenantKey, from: `Shop <orders@${shop.domain}>`, to, idempotencyKey }));
    // A gateway on a pool wide enough for all twelve to hold a connection at the claim at once (the app's pool has 5).
    const wide = await openOrm({ databaseUrl: inject('databaseUrl'), poolSize: 16 });
    const gateway = await startGatewayWith({ ...app, orm: wide }, temporalEmailDispatcher({ client: app.temporal.client, taskQueue: app.taskQueue, retrySchedule: app.config.emailRetrySchedule }));
    const held = app.orm.em.fork();
    try {
      // The key's row is held by a claim not yet committed (a request still in its transaction): each of the twelve
      // looks the key up (none yet), then waits at its own claim; the held claim is rolled back once all wait there.
      await held.begin();
      await held.execute(`insert into email_idempotency_keys (tenant_id, key, request_hash, delivery_id, email_ids, response, created_at) values (?, ?, 'held', ?, '[]'::jsonb, null, now())`, [
        shop.id,
        `key:${idempotencyKey}`,
        randomUUID(),
      ]);
      const answering = Promise.all(
        Array.from({ length: 12 }, async () => {
          const response = await fetch(`${gateway.url}/api/email`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
          return { status: response.status, body: (await response.json()) as any };
        }),
      );
      await waitForLockWaiters(app.orm, 'insert into email_idempotency_keys%', { count: 12, exactly: true, timeoutMs: 30_000 });
      await held.rollback();
      const answers = await answering;

      // One claim wins; the others answer its answer (or 409 while it is still unfinished), never an e-mail of their own.
      const accepted = answers.filter((a) => a.status === 200);
      expect(accepted.length).toBeGreaterThanOrEqual(1);
      for (const refused of answers.filter((a) => a.status !== 200)) {
        expect(refused).toEqual({ status: 409, body: { success: false, error: 'A request with this idempotencyKey is still in progress' } });
      }
      expect(new Set(accepted.map((a) => a.body.data.id)).size).toBe(1);
      const [stored] = await app.orm.em.fork().execute<{ count: string }[]>(`select count(*) from emails where tenant_id = ?`, [shop.id]);
      expect(stored?.count).toBe('1');
      expect((await settledEmail(app, shop.apiKey, accepted[0]!.body.data.id)).status).toBe('sent');
      await sink.waitFor(to, 1);
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(sink.receivedBy(to)).toHaveLength(1);
    } finally {
      if (held.isInTransaction()) await held.rollback();
      await gateway.close();
      await wide.close();
    }
  });
});

describe('when the outcome of a sent e-mail cannot be recorded at once', () => {
  it('records it once the database takes it, and never sends the e-mail again', async () => {
    const own = await createEmailTenant(app);
    // This tenant's first queued→sent update fails as a serialization failure does (40001, retryable), once.
    const allow = await refuseRows(app.orm, 'emails', 'update once', `old.tenant_id = ${Number(own.id)} and old.status = 'queued' and new.status = 'sent'`, '40001');
    try {
      const to = newRecipient('once');
      const answer = await postEmail(app, '/api/email', { tenant_key: own.tenantKey, from: `Shop <orders@${own.domain}>`, to, subject: 'Once', templateType: 'string', templateContent: '<p>Hi</p>' });
      expect(answer.status).toBe(200);
      const settled = await settledEmail(app, own.apiKey, answer.body.data.id);
      expect(settled).toMatchObject({ status: 'sent', attemptCount: 1 });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(sink.receivedBy(to)).toHaveLength(1);
    } finally {
      await allow();
    }
  });
});

describe('a delivery step that meets an e-mail already settled (a retried activity, an answer lost after its commit)', () => {
  it('neither sends it again nor lets a late outcome change its status, attempts or history', async () => {
    const to = newRecipient('settled');
    const answer = await postEmail(app, '/api/email', generic({ to }));
    const id = answer.body.data.id as string;
    const before = await settledEmail(app, tenant.apiKey, id);
    expect(before).toMatchObject({ status: 'sent', attemptCount: 1 });
    expect(sink.attempts(to)).toBe(1);

    // The delivery activity run again for it, as a retry after its first run wrote would.
    const mailer = mailerFromConfig(app.config);
    try {
      const { deliverEmails } = createEmailDeliveryActivities({ orm: app.orm, logger: app.logger, mailer, renderEmail: emailRendererFromConfig() });
      expect(await deliverEmails({ deliveryId: `retry-${id}`, emails: [{ id }], lastAttempt: true })).toEqual({ sent: 0, failed: 0, deferred: [] });
    } finally {
      mailer.close();
    }
    // An outcome whose first recording committed but whose answer was lost, recorded again and differently.
    await recordDeliveryOutcomes(app.orm.em.fork(), [{ id, kind: 'failed', reason: 'late outcome' }]);

    expect(sink.attempts(to)).toBe(1);
    const after = await readEmail(app, tenant.apiKey, id);
    expect({ status: after.status, attemptCount: after.attemptCount, failureReason: after.failureReason, events: after.events }).toEqual({
      status: 'sent',
      attemptCount: 1,
      failureReason: before.failureReason,
      events: before.events,
    });
  });
});

describe('when delivery cannot be confirmed started', () => {
  it('answers 503 Server error, keeps the e-mail and the key, and a retry with the same key starts the same delivery: sent once', async () => {
    const to = newRecipient('outage');
    const body = generic({ to, idempotencyKey: `outage-${randomUUID()}` });
    // The ambiguous failure: Temporal started the workflow, then the answer was lost (the start raced the error).
    const real = temporalEmailDispatcher({ client: app.temporal.client, taskQueue: app.taskQueue, retrySchedule: [0, 0.2, 0.2, 0.2, 0.2] });
    let calls = 0;
    const lostAnswer: EmailDispatcher = {
      async dispatch(delivery) {
        calls += 1;
        await real.dispatch(delivery);
        if (calls === 1) throw new Error('14 UNAVAILABLE: connection reset');
      },
    };
    const flaky = await startGatewayWith(app, lostAnswer);
    try {
      const first = await fetch(`${flaky.url}/api/email`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(first.status).toBe(503);
      expect(first.headers.get('retry-after')).toBe('1');
      expect(await first.json()).toEqual({
        success: false,
        error: 'Server error',
        details: 'The e-mail is stored but its delivery could not be confirmed as started; retry the same request (with the same idempotencyKey): it is sent once',
      });
      // Kept, not deleted under the running delivery: it is sent and recorded.
      await sink.waitFor(to, 1);
      const stored = (await listTenantEmails(app, tenant.apiKey, { first: 100 })).filter((e) => e.to.includes(to));
      expect(stored).toHaveLength(1);

      const retry = await fetch(`${flaky.url}/api/email`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(retry.status).toBe(200);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(((await retry.json()) as { data: { id: string } }).data.id).toBe(stored[0].id);
      expect(calls).toBe(2);
      expect((await settledEmail(app, tenant.apiKey, stored[0].id)).status).toBe('sent');
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(sink.receivedBy(to)).toHaveLength(1);
    } finally {
      await flaky.close();
    }
  });
});

describe('tracking and tenant isolation', () => {
  it("a tenant reads its own e-mails by id and by filters, never another tenant's", async () => {
    const other = await createEmailTenant(app);
    const to = newRecipient();
    const mine = await postEmail(app, '/api/email', generic({ to }));
    const email = await settledEmail(app, tenant.apiKey, mine.body.data.id);
    expect(email.status).toBe('sent');
    expect(await readEmail(app, other.apiKey, mine.body.data.id)).toBeNull();
    expect(await listTenantEmails(app, other.apiKey)).toEqual([]);
    const sent = await listTenantEmails(app, tenant.apiKey, { status: 'sent', first: 100 });
    expect(sent.map((e) => e.id)).toContain(mine.body.data.id);
    expect(sent.every((e) => e.status === 'sent')).toBe(true);
    const failed = await listTenantEmails(app, tenant.apiKey, { status: 'failed', first: 100 });
    expect(failed.map((e) => e.id)).not.toContain(mine.body.data.id);
    // The same idempotency key in two tenants is two keys.
    const key = `shared-${randomUUID()}`;
    const a = await postEmail(app, '/api/email', generic({ to: newRecipient(), idempotencyKey: key }));
    const b = await postEmail(app, '/api/email', generic({ tenant_key: other.tenantKey, from: `x@${other.domain}`, to: newRecipient(), idempotencyKey: key }));
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.data.id).not.toBe(b.body.data.id);
  });

  it('pages through a tenant\'s e-mails newest first with cursors', async () => {
    const reader = await createEmailTenant(app);
    const sent: string[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await postEmail(app, '/api/email', generic({ tenant_key: reader.tenantKey, from: `a@${reader.domain}`, subject: `Page ${i}` }));
      sent.push(answer.body.data.id);
    }
    const page = (after?: string) =>
      gql(app, `Bearer ${reader.apiKey}`, 'query($after: String) { emails(first: 2, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }', { after });
    const first = (await page()).data.emails;
    expect(first.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([sent[2], sent[1]]);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = (await page(first.pageInfo.endCursor)).data.emails;
    expect(second.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([sent[0]]);
    expect(second.pageInfo.hasNextPage).toBe(false);
    const bad = await page('not-a-cursor');
    expect(bad.errors?.[0]?.message).toContain('after is not a cursor');
    // A cursor of this list is no position in another list of the same shape (leads page by a timestamp and an id too).
    const mixedUp = await gql(app, `Bearer ${reader.apiKey}`, 'query($after: String) { customerLeads(after: $after) { edges { cursor } } }', { after: first.pageInfo.endCursor });
    expect(mixedUp.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('the operator authorizes sender domains; a tenant key cannot', async () => {
    const fresh = await createEmailTenant(app);
    const newDomain = `mail-${randomUUID().slice(0, 6)}.example`;
    const mutation = 'mutation($tenantId: Int!, $domains: [String!]!) { setEmailSenderDomains(tenantId: $tenantId, domains: $domains) { tenantId tenantKey domains } }';
    const denied = await gql(app, `Bearer ${fresh.apiKey}`, mutation, { tenantId: fresh.id, domains: [newDomain] });
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const before = await postEmail(app, '/api/email', generic({ tenant_key: fresh.tenantKey, from: `a@${newDomain}` }));
    expect(before.status).toBe(403);
    const granted = await gql(app, `Bearer ${app.config.operatorToken}`, mutation, { tenantId: fresh.id, domains: [newDomain.toUpperCase(), fresh.domain] });
    expect(granted.data.setEmailSenderDomains).toEqual({ tenantId: fresh.id, tenantKey: fresh.tenantKey, domains: [fresh.domain, newDomain].sort() });
    const after = await postEmail(app, '/api/email', generic({ tenant_key: fresh.tenantKey, from: `a@${newDomain}` }));
    expect(after.status).toBe(200);
    // A refused domain is named by its place in the list as sent, repeats counted.
    const refused = await gql(app, `Bearer ${app.config.operatorToken}`, mutation, { tenantId: fresh.id, domains: [fresh.domain, fresh.domain.toUpperCase(), newDomain, '*.x.com'] });
    expect(refused.errors?.[0]?.message).toBe('domains[3] must be a domain name such as shop.example');
  });
});

describe('replacing sender domains at once', () => {
  const mutation = 'mutation($tenantId: Int!, $domains: [String!]!) { setEmailSenderDomains(tenantId: $tenantId, domains: $domains) { domains } }';
  const storedDomains = async (tenantId: number) =>
    new Set((await app.orm.em.fork().execute<{ domain: string }[]>(`select domain from sender_domains where tenant_id = ?`, [tenantId])).map((row) => row.domain));

  it('leaves exactly one of the sets asked for (never their union past 100), each replace answered', async () => {
    const shop = await createEmailTenant(app);
    const sets = [0, 1, 2, 3].map((i) => Array.from({ length: 100 }, (_, j) => `s${i}-d${j}-${randomUUID().slice(0, 4)}.example`));
    const answers = await Promise.all(sets.map((domains) => gql(app, `Bearer ${app.config.operatorToken}`, mutation, { tenantId: shop.id, domains })));
    expect(answers.map((answer) => answer.errors)).toEqual([undefined, undefined, undefined, undefined]);
    const stored = await storedDomains(shop.id);
    const kept = sets.filter((set) => set.length === stored.size && set.every((domain) => stored.has(domain)));
    expect(kept).toHaveLength(1);
    // A domain of a set replaced after it was written sends nothing.
    const replaced = sets.find((set) => set !== kept[0])!;
    expect((await postEmail(app, '/api/email', generic({ tenant_key: shop.tenantKey, from: `a@${replaced[0]}` }))).status).toBe(403);
  });

  it('answers the same replace sent four times at once four times, adding the domain once', async () => {
    const shop = await createEmailTenant(app);
    const domains = [shop.domain, `same-${randomUUID().slice(0, 6)}.example`];
    const answers = await Promise.all([0, 1, 2, 3].map(() => gql(app, `Bearer ${app.config.operatorToken}`, mutation, { tenantId: shop.id, domains })));
    expect(answers.map((answer) => answer.errors)).toEqual([undefined, undefined, undefined, undefined]);
    expect([...(await storedDomains(shop.id))].sort()).toEqual([...domains].sort());
  });
});

describe('one address per string (a list or group must not slip past the sender-domain check)', () => {
  const send = (body: unknown) => postEmail(app, '/api/email', body);

  it.each([
    ['from', () => ({ from: `evil@attacker.example, <orders@${tenant.domain}>` }), 'from'],
    ['from', () => ({ from: `Shop: evil@attacker.example, orders@${tenant.domain};` }), 'from'],
    ['from', () => ({ from: `Shop; evil@attacker.example <orders@${tenant.domain}>` }), 'from'],
    ['to', () => ({ to: 'a@inbox.example, b@inbox.example' }), 'to[0]'],
    ['cc', () => ({ cc: ['ok@inbox.example', 'x@inbox.example; y@inbox.example'] }), 'cc[1]'],
    ['bcc', () => ({ bcc: 'Team: a@inbox.example, b@inbox.example;' }), 'bcc[0]'],
    ['replyTo', () => ({ replyTo: 'Help, <a@inbox.example>' }), 'replyTo'],
  ])('400 naming %s for a comma, semicolon or group trick', async (_field, overrides, field) => {
    const to = newRecipient();
    const answer = await send(generic({ to, ...overrides() }));
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('Validation error');
    expect(Object.keys(answer.body.details)).toEqual([field]);
    expect(answer.body.details[field]).toContain('exactly one address');
    expect(sink.attempts(to)).toBe(0);
  });

  it('400 for 50 list entries that would expand to 100 recipients', async () => {
    const to = Array.from({ length: 50 }, (_, i) => `a${i}@inbox.example, b${i}@inbox.example`);
    const answer = await send(generic({ to }));
    expect(answer.status).toBe(400);
    expect(answer.body.details['to[0]']).toContain('exactly one address');
  });

  it('a quoted display name with a comma is one address: MAIL FROM and the headers come from the parsed name and address', async () => {
    const to = newRecipient('quoted');
    const answer = await send(generic({ from: `"Shop, Inc." <orders@${tenant.domain}>`, to: `"Doe, Jane" <${to}>` }));
    expect(answer.status).toBe(200);
    const [message] = await sink.waitFor(to, 1);
    expect(message!.envelope.mailFrom).toBe(`orders@${tenant.domain}`);
    expect(message!.envelope.rcptTo).toEqual([to]);
    expect(message!.mail.from?.value).toEqual([{ address: `orders@${tenant.domain}`, name: 'Shop, Inc.' }]);
    const email = await settledEmail(app, tenant.apiKey, answer.body.data.id);
    expect(email).toMatchObject({ status: 'sent', from: `"Shop, Inc." <orders@${tenant.domain}>`, to: [`"Doe, Jane" <${to}>`] });
  });
});

describe('rendered size', () => {
  it('400 for a batch whose e-mails render to more than 5 MiB together, each under 1 MiB alone; nothing is queued or sent', async () => {
    // Each e-mail renders 600,000 characters: eight fit in 5 MiB, the ninth does not.
    const recipients = Array.from({ length: 10 }, () => newRecipient('heavy'));
    const item = (to: string) => ({ from: `a@${tenant.domain}`, to, subject: 'Big', templateType: 'string', templateContent: '{{a}}'.repeat(200), data: { a: 'x'.repeat(3_000) } });
    const answer = await postEmail(app, '/api/email/batch', { tenant_key: tenant.tenantKey, emails: recipients.map(item) });
    expect(answer.status).toBe(400);
    const together = `renders, with the e-mails before it in this request, to more than ${EMAIL_LIMITS.requestRenderedLength} characters together; send fewer e-mails per batch`;
    expect(answer.body).toEqual({ success: false, error: 'Validation error', details: { 'emails[8].templateContent': together, 'emails[9].templateContent': together } });
    expect(await app.orm.em.fork().execute(`select count(*)::int as n from emails where tenant_id = ? and subject = 'Big'`, [tenant.id])).toEqual([{ n: 0 }]);
    // Eight of them are one batch that fits.
    const fits = await postEmail(app, '/api/email/batch', { tenant_key: tenant.tenantKey, emails: recipients.slice(0, 8).map(item) });
    expect(fits.status).toBe(200);
  });

  it('400 at acceptance for a string template whose output with the data is over 1 MiB ({{a}} x 2400 with a 30 KB value)', async () => {
    const to = newRecipient();
    const answer = await postEmail(app, '/api/email', generic({ to, templateType: 'string', templateName: undefined, templateContent: '{{a}}'.repeat(2400), data: { a: 'x'.repeat(30_000) } }));
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      success: false,
      error: 'Validation error',
      details: { templateContent: `renders to more than ${STRING_TEMPLATE_LIMITS.maxRenderedLength} characters with this data; send less data or fewer placeholders` },
    });
    expect(sink.attempts(to)).toBe(0);
  });

  it('the worker fails such an e-mail for good if one is queued anyway (never renders it, never crashes)', async () => {
    const to = newRecipient('huge');
    const id = randomUUID();
    // Stored as an older gateway (before the acceptance check) would have: straight into the table, then dispatched.
    await insertQueuedEmails(app.orm.em.fork(), {
      tenantId: tenant.id,
      batchId: null,
      emails: [
        {
          id,
          batchIndex: null,
          message: {
            from: `orders@${tenant.domain}`,
            fromDomain: tenant.domain,
            to: [to],
            cc: [],
            bcc: [],
            replyTo: null,
            subject: 'Huge',
            template: { type: 'string', content: '{{a}}'.repeat(2400) },
            data: { a: 'x'.repeat(30_000) },
          },
        },
      ],
    });
    await temporalEmailDispatcher({ client: app.temporal.client, taskQueue: app.taskQueue, retrySchedule: [0, 0.2] }).dispatch({ deliveryId: id, kind: 'single', tenantId: tenant.id, emailIds: [id] });
    const email = await settledEmail(app, tenant.apiKey, id);
    expect(email.status).toBe('failed');
    expect(email.failureReason).toContain(`renders to more than ${STRING_TEMPLATE_LIMITS.maxRenderedLength} characters`);
    expect(email.attemptCount).toBe(1);
    expect(sink.attempts(to)).toBe(0);
  });
});

describe('recipients refused at RCPT TO while others are accepted', () => {
  it('delivers to the accepted ones once, retries only the 4xx one on the schedule, and records the 5xx one as not delivered', async () => {
    const accepted = newRecipient('ok');
    const greylisted = newRecipient('soft');
    const unknown = newRecipient('hard');
    sink.scriptRcpt(greylisted, [451]);
    sink.scriptRcpt(unknown, [], 550);
    const answer = await postEmail(app, '/api/email', generic({ to: [accepted, greylisted], cc: unknown }));
    expect(answer.status).toBe(200);
    const email = await settledEmail(app, tenant.apiKey, answer.body.data.id);
    expect(email.status).toBe('sent');
    expect(email.attemptCount).toBe(2);
    expect(email.events.map((e: { kind: string }) => e.kind)).toEqual(['queued', 'deferred', 'sent']);
    expect(email.events[1].detail).toContain(`Deferred for ${greylisted}`);
    expect(email.events[1].detail).toContain('451');
    expect(email.events[2].detail).toContain(`not delivered to ${unknown}`);
    expect(email.failureReason).toContain(unknown);
    expect(email.failureReason).toContain('550');
    expect(email.failureReason).not.toContain(greylisted);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The accepted recipient got it once (the retry's envelope held only the deferred one); the refused one never.
    expect(sink.receivedBy(accepted)).toHaveLength(1);
    expect(sink.receivedBy(greylisted)).toHaveLength(1);
    expect(sink.receivedBy(greylisted)[0]!.envelope.rcptTo).toEqual([greylisted]);
    expect(sink.receivedBy(unknown)).toHaveLength(0);
    expect(sink.rcptAttempts(unknown)).toBe(1);
  });

  it('fails an e-mail whose every recipient is refused with 5xx at RCPT TO', async () => {
    const a = newRecipient('gone-a');
    const b = newRecipient('gone-b');
    sink.scriptRcpt(a, [], 550);
    sink.scriptRcpt(b, [], 553);
    const answer = await postEmail(app, '/api/email', generic({ to: [a, b] }));
    const email = await settledEmail(app, tenant.apiKey, answer.body.data.id);
    expect(email.status).toBe('failed');
    expect(email.failureReason).toMatch(/^Every recipient was refused: /);
    expect(email.failureReason).toContain(a);
    expect(email.failureReason).toContain(b);
    expect(email.attemptCount).toBe(1);
  });
});

describe('hostile input answers 400, never 500', () => {
  it('data nested 60,000 levels deep', async () => {
    const deep = `${'['.repeat(60_000)}${']'.repeat(60_000)}`;
    const raw = JSON.stringify(generic({ data: { heading: 'H', bodyContent: 'B', deep: '__DEEP__' } })).replace('"__DEEP__"', deep);
    const answer = await postEmail(app, '/api/email', raw);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ success: false, error: 'Validation error', details: { data: 'nests objects and arrays deeper than 32 levels' } });
    const batch = await postEmail(app, '/api/email/batch', `{"tenant_key":"${tenant.tenantKey}","emails":[{"from":"a@${tenant.domain}","to":"x@inbox.example","subject":"s","templateType":"string","templateContent":"x","data":{"d":${deep}}}]}`);
    expect(batch.status).toBe(400);
    expect(batch.body.details).toEqual({ 'emails[0].data': 'nests objects and arrays deeper than 32 levels' });
  });

  it.each([
    ['an impossible date', ['2026-02-30 10:00:00.123456+00', randomUUID()]],
    ['a date PostgreSQL would not cast', ['yesterday', randomUUID()]],
    ['a lenient JavaScript date', ['Mon Nov 23 2026', randomUUID()]],
    ['an id of dashes', ['2026-11-23 10:00:00+00', '-'.repeat(36)]],
    ['an id with extra text', ['2026-11-23 10:00:00+00', `${randomUUID()}x`]],
  ])('a GraphQL e-mail cursor with %s is BAD_USER_INPUT', async (_case, position) => {
    const after = Buffer.from(JSON.stringify(['emails', ...position])).toString('base64url');
    const answer = await gql(app, `Bearer ${tenant.apiKey}`, 'query($after: String) { emails(first: 2, after: $after) { edges { cursor } } }', { after });
    expect(answer.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(answer.errors?.[0]?.message).toContain('after is not a cursor');
  });

  it.each([
    ['createdAfter', '0000-01-01T00:00:00Z'],
    ['createdBefore', '9999-12-31T23:59:59-23:59'],
    ['createdAfter', '1969-12-31T23:59:59Z'],
  ])('a GraphQL e-mail date outside the years 1970 to 9998 (%s %s) is BAD_USER_INPUT, as a literal and as a variable', async (field, value) => {
    for (const [query, variables] of [
      [`{ emails(${field}: "${value}") { edges { cursor } } }`, {}],
      [`query($d: DateTime) { emails(${field}: $d) { edges { cursor } } }`, { d: value }],
    ] as const) {
      const answer = await gql(app, `Bearer ${tenant.apiKey}`, query, variables);
      expect(answer.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
    }
  });
});

describe('rate limit (spec 8)', () => {
  it('counts requests per tenant_key with the tenant\'s limit: concurrent requests over it get 429 with Retry-After and the e-mail error body', async () => {
    const limited = await createEmailTenant(app, { rateLimitPerMinute: 3 });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => postEmail(app, '/api/email', generic({ tenant_key: limited.tenantKey, from: `a@${limited.domain}`, subject: `Burst ${i}` }))),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429, 429]);
    const refused = answers.find((a) => a.status === 429)!;
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.body).toEqual({ success: false, error: 'Too many requests', details: 'Rate limit of 3 requests per minute exceeded' });
    // Another tenant is not counted against it.
    expect((await postEmail(app, '/api/email', generic())).status).toBe(200);
  });
});

describe('the key answers repeats as given', () => {
  it('echoes tenant_key as the caller wrote it; the same key in another case is the same request', async () => {
    const upper = tenant.tenantKey.toUpperCase();
    const body = generic({ tenant_key: upper, idempotencyKey: `case-${randomUUID()}` });
    const first = await postEmail(app, '/api/email', body);
    expect(first.status).toBe(200);
    expect(first.body.data.tenantKey).toBe(upper);
    const repeat = await postEmail(app, '/api/email', { ...body, tenant_key: tenant.tenantKey });
    expect(repeat.status).toBe(200);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    expect(repeat.body.data.id).toBe(first.body.data.id);
  });

  it('a repeat is answered from its key even after the sender domain was removed (not 403)', async () => {
    const shop = await createEmailTenant(app);
    const body = generic({ tenant_key: shop.tenantKey, from: `a@${shop.domain}`, idempotencyKey: `removed-${randomUUID()}` });
    const first = await postEmail(app, '/api/email', body);
    expect(first.status).toBe(200);
    const mutation = 'mutation($tenantId: Int!, $domains: [String!]!) { setEmailSenderDomains(tenantId: $tenantId, domains: $domains) { domains } }';
    const removed = await gql(app, `Bearer ${app.config.operatorToken}`, mutation, { tenantId: shop.id, domains: [`other-${randomUUID().slice(0, 6)}.example`] });
    expect(removed.errors).toBeUndefined();
    const repeat = await postEmail(app, '/api/email', body);
    expect(repeat.status).toBe(200);
    expect(repeat.body).toEqual(first.body);
    // A new request from the removed domain is refused.
    expect((await postEmail(app, '/api/email', { ...body, idempotencyKey: `new-${randomUUID()}` })).status).toBe(403);
  });
});

describe('batch errors', () => {
  const batchOf = (from: (index: number) => string, extra: Record<string, unknown> = {}) => ({
    tenant_key: tenant.tenantKey,
    emails: [0, 1, 2].map((index) => ({ from: from(index), to: newRecipient(), subject: 'Hi', templateType: 'string', templateContent: '<p>x</p>' })),
    ...extra,
  });

  it('403 naming emails[i].from for the one item with an unauthorized sender domain; nothing is queued', async () => {
    // A tenant of its own, so "nothing queued" is a count of all its e-mails, not of ones this test can name.
    const own = await createEmailTenant(app);
    const body = { ...batchOf((index) => (index === 1 ? 'a@unknown.example' : `a@${own.domain}`)), tenant_key: own.tenantKey };
    const answer = await postEmail(app, '/api/email/batch', body);
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual({ success: false, error: "Domain 'unknown.example' is not authorized for this tenant", details: { 'emails[1].from': 'sender domain not authorized' } });

    const [row] = await app.orm.em.fork().execute<{ count: string }[]>(`select count(*) from emails where tenant_id = ?`, [own.id]);
    expect(row?.count).toBe('0');
    // Longer than the retry schedule's first wait: a delivery started anyway would have reached the sink by now.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    for (const { to } of body.emails) expect(sink.attempts(to)).toBe(0);
  });

  it('409 for a batch key reused with another body', async () => {
    const key = `batch-${randomUUID()}`;
    const first = await postEmail(app, '/api/email/batch', batchOf(() => `a@${tenant.domain}`, { idempotencyKey: key }));
    expect(first.status).toBe(200);
    const other = await postEmail(app, '/api/email/batch', batchOf(() => `b@${tenant.domain}`, { idempotencyKey: key }));
    expect(other.status).toBe(409);
    expect(other.body).toEqual({ success: false, error: 'idempotencyKey was already used with a different request' });
  });
});

describe('when the delivery activity fails for good', () => {
  it('fails the e-mails still queued with the reason instead of leaving them queued', async () => {
    // A worker of its own (real Temporal, real database) whose deliverEmails fails as a bug would: non-retryable.
    const taskQueue = `email-broken-${randomUUID()}`;
    const mailer = mailerFromConfig(app.config);
    const activities = createActivities({ orm: app.orm, logger: app.logger, secretBox: app.secretBox, cardVault: app.cardVault, processors: processorsFromConfig(app.config), mailer, renderEmail: emailRendererFromConfig() });
    const broken = { ...activities, deliverEmails: async () => { throw ApplicationFailure.nonRetryable('stored e-mail cannot be read', 'Broken'); } };
    const { worker, connection } = await createWorker({ address: app.config.temporalAddress!, namespace: app.config.temporalNamespace, taskQueue, activities: broken, logger: app.logger, workflowBundle: await bundleWorkflows() });
    const running = worker.run();
    try {
      const answer = await acceptEmails(
        { em: app.orm.em.fork(), dispatcher: temporalEmailDispatcher({ client: app.temporal.client, taskQueue, retrySchedule: [0, 0.2] }), compiler: createStringTemplateCompiler(), rateLimit: { defaultPerMinute: 1000, now: () => new Date() } },
        'batch',
        { tenant_key: tenant.tenantKey, emails: [0, 1].map(() => ({ from: `a@${tenant.domain}`, to: newRecipient(), subject: 'Hi', templateType: 'string', templateContent: '<p>x</p>' })) },
      );
      const ids = (answer.response.data as { responses: { id: string }[] }).responses.map((r) => r.id);
      for (const id of ids) {
        const email = await settledEmail(app, tenant.apiKey, id);
        expect(email.status).toBe('failed');
        expect(email.failureReason).toBe('Delivery stopped: stored e-mail cannot be read');
        expect(email.events.map((e: { kind: string }) => e.kind)).toEqual(['queued', 'failed']);
      }
    } finally {
      worker.shutdown();
      await running;
      mailer.close();
      await connection.close();
    }
  });

  /**
   * A worker of its own whose first delivery attempt is the real one and whose next (for what the server deferred)
   * fails for good, as a relay refusing the login would; `accept` queues e-mails for it (retry after 0.2 s).
   */
  async function withDeliveryStoppingOnRetry(run: (accept: (kind: 'single' | 'batch', body: Record<string, unknown>) => Promise<any>) => Promise<void>): Promise<void> {
    const taskQueue = `email-stops-${randomUUID()}`;
    const mailer = mailerFromConfig(app.config);
    const activities = createActivities({ orm: app.orm, logger: app.logger, secretBox: app.secretBox, cardVault: app.cardVault, processors: processorsFromConfig(app.config), mailer, renderEmail: emailRendererFromConfig() });
    const stopsOnRetry = {
      ...activities,
      deliverEmails: async (input: Parameters<typeof activities.deliverEmails>[0]) => {
        if (input.lastAttempt) throw ApplicationFailure.nonRetryable('SMTP relay refused the login', 'Broken');
        return activities.deliverEmails(input);
      },
    };
    const { worker, connection } = await createWorker({ address: app.config.temporalAddress!, namespace: app.config.temporalNamespace, taskQueue, activities: stopsOnRetry, logger: app.logger, workflowBundle: await bundleWorkflows() });
    const running = worker.run();
    const dispatcher = temporalEmailDispatcher({ client: app.temporal.client, taskQueue, retrySchedule: [0, 0.2] });
    try {
      await run(async (kind, body) => {
        const answer = await acceptEmails({ em: app.orm.em.fork(), dispatcher, compiler: createStringTemplateCompiler(), rateLimit: { defaultPerMinute: 1000, now: () => new Date() } }, kind, { tenant_key: tenant.tenantKey, ...body });
        return answer.response.data;
      });
    } finally {
      worker.shutdown();
      await running;
      mailer.close();
      await connection.close();
    }
  }

  it('keeps an e-mail of the batch already sent as sent: only the ones still queued are failed', async () => {
    await withDeliveryStoppingOnRetry(async (accept) => {
      const delivered = newRecipient('delivered');
      const deferred = newRecipient('deferred');
      sink.script(deferred, [451]);
      const data = await accept('batch', { emails: [delivered, deferred].map((to) => ({ from: `a@${tenant.domain}`, to, subject: 'Hi', templateType: 'string', templateContent: '<p>x</p>' })) });
      const [sentId, stoppedId] = (data as { responses: { id: string }[] }).responses.map((r) => r.id);

      // One statement fails what is still queued: once the deferred item is failed, the sent one's fate is decided too.
      const stopped = await settledEmail(app, tenant.apiKey, stoppedId!);
      expect(stopped.status).toBe('failed');
      expect(stopped.failureReason).toBe('Delivery stopped: SMTP relay refused the login');
      expect(stopped.events.map((e: { kind: string }) => e.kind)).toEqual(['queued', 'deferred', 'failed']);
      const sent = await readEmail(app, tenant.apiKey, sentId!);
      expect(sent).toMatchObject({ status: 'sent', attemptCount: 1, failureReason: null });
      expect(sent.events.map((e: { kind: string }) => e.kind)).toEqual(['queued', 'sent']);
      expect(sink.receivedBy(delivered)).toHaveLength(1);
      expect(sink.receivedBy(deferred)).toHaveLength(0);
    });
  });

  it('ends an e-mail some recipients already took as sent, naming who did not get it and why', async () => {
    await withDeliveryStoppingOnRetry(async (accept) => {
      const [took, deferred, refused] = [newRecipient('took'), newRecipient('deferred'), newRecipient('refused')];
      sink.scriptRcpt(deferred, [451]);
      sink.scriptRcpt(refused, [550]);
      const { id } = await accept('single', { from: `a@${tenant.domain}`, to: [took, deferred, refused], subject: 'Hi', templateType: 'string', templateContent: '<p>x</p>' });

      const email = await settledEmail(app, tenant.apiKey, id);
      const [message] = sink.receivedBy(took);
      // Sent: someone has it (a tenant reading `failed` would send it again, to those who have it too).
      expect(email).toMatchObject({ status: 'sent', smtpMessageId: message!.mail.messageId });
      expect(email.failureReason).toMatch(new RegExp(`^${refused} \\(.*Mailbox unavailable.*\\), ${deferred} \\(Delivery stopped: SMTP relay refused the login\\)$`));
      expect(email.events.map((e: { kind: string }) => e.kind)).toEqual(['queued', 'deferred', 'sent']);
      expect(email.events.at(-1).detail).toBe(`${message!.mail.messageId}; not delivered to ${email.failureReason}`);
      expect([took, deferred, refused].map((to) => sink.receivedBy(to).length)).toEqual([1, 0, 0]);
    });
  });
});
