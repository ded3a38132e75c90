import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimEmailKey, findEmailKey, markEmailKeyDispatchFailed, storeEmailKeyResponse } from '../data/queries/email-idempotency.ts';
import { findIdempotencyKey, insertIdempotencyKey, storeIdempotentResult } from '../data/queries/idempotency-keys.ts';
import { reserveOrderId } from '../data/queries/orders.ts';
import type { SubmitResult } from '../domain/payments/submit-result.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { createTestTenant, type TestTenant } from './support/tenants.ts';

/**
 * A key's first answer is its answer for good: a later writer (a request that answered after another, a workflow's
 * final result) never replaces it, even when it would store something else. Each write here differs from the first.
 */
let app: TestApp;
let tenant: TestTenant;

beforeAll(async () => {
  app = await startTestApp();
  tenant = await createTestTenant(app);
});
afterAll(() => app?.close());

const answer = (info: string, n: number) => ({ info, submitOrderId: n }) as unknown as SubmitResult;

describe("a payment Idempotency-Key's first answer", () => {
  it('stays when later answers are stored, however many at once', async () => {
    const em = app.orm.em.fork();
    const key = `first-${randomUUID()}`;
    expect(await insertIdempotencyKey(em, { tenantId: tenant.id, key, requestHash: 'h', submitOrderId: await reserveOrderId(em) })).toBe(true);
    await storeIdempotentResult(em, tenant.id, key, answer('Pending', 1));
    await Promise.all(Array.from({ length: 8 }, (_, i) => storeIdempotentResult(app.orm.em.fork(), tenant.id, key, answer('Success', i + 2))));
    expect((await findIdempotencyKey(em, tenant.id, key))?.result).toEqual(answer('Pending', 1));
  });
});

describe("an e-mail Idempotency-Key's first answer", () => {
  it('stays for its delivery; only a start that failed gives way to the answer of its retry', async () => {
    const em = app.orm.em.fork();
    const claim = { tenantId: tenant.id, key: `first-${randomUUID()}`, requestHash: 'h', deliveryId: randomUUID(), emailIds: [] };
    expect(await claimEmailKey(em, claim)).toBe(true);
    await storeEmailKeyResponse(em, claim, { data: { id: 'first' } });
    await Promise.all(Array.from({ length: 8 }, (_, i) => storeEmailKeyResponse(app.orm.em.fork(), claim, { data: { id: `later-${i}` } })));
    expect((await findEmailKey(em, tenant.id, claim.key))?.response).toEqual({ data: { id: 'first' } });

    const failed = { ...claim, key: `failed-${randomUUID()}` };
    await claimEmailKey(em, failed);
    await markEmailKeyDispatchFailed(em, failed);
    await storeEmailKeyResponse(em, failed, { data: { id: 'retried' } });
    await storeEmailKeyResponse(em, failed, { data: { id: 'later' } });
    expect((await findEmailKey(em, tenant.id, failed.key))?.response).toEqual({ data: { id: 'retried' } });
  });

  it('is kept when a start that failed is marked after it (a repeat whose own start failed, after another stored the answer)', async () => {
    const em = app.orm.em.fork();
    const claim = { tenantId: tenant.id, key: `answered-${randomUUID()}`, requestHash: 'h', deliveryId: randomUUID(), emailIds: [] };
    expect(await claimEmailKey(em, claim)).toBe(true);
    await storeEmailKeyResponse(em, claim, { data: { id: 'first' } });
    await markEmailKeyDispatchFailed(em, claim);
    // A repeat reads the first answer, not a delivery to start again; and no later answer replaces it.
    expect(await findEmailKey(em, tenant.id, claim.key)).toMatchObject({ response: { data: { id: 'first' } }, dispatchFailed: false });
    await storeEmailKeyResponse(em, claim, { data: { id: 'later' } });
    expect((await findEmailKey(em, tenant.id, claim.key))?.response).toEqual({ data: { id: 'first' } });
  });
});
