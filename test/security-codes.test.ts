import { hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import { compactDecrypt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecurityCodeKeyStore } from '../data/security-code-key-store.ts';
import { createCardVault, createSecurityCodeKeyWrapper, type SealedCard } from '../domain/crypto/card-vault.ts';
import { workflowIds } from '../workflows/contract/workflow-ids.ts';
import type { retentionWorkflow } from '../workflows/maintenance/retention.workflow.ts';
import { startTestApp, type TestApp } from './support/harness.ts';
import { card, createPaymentTenant, post, submitBody, type PaymentTenant } from './support/payments.ts';
import { historyText } from './support/workflow-history.ts';

/**
 * PCI DSS keeps no CVV after authorization, even encrypted, and a payment's history outlives its authorization by the
 * namespace's retention. The CVV is sealed under a short-lived key (`card_security_code_keys`) that the retention pass
 * destroys; these tests follow one CVV from the submit to the processor and then to its key's end.
 */

let app: TestApp;
let tenant: PaymentTenant;

beforeAll(async () => {
  app = await startTestApp({}, { hostWorker: true });
  await app.startWorker();
  tenant = await createPaymentTenant(app);
});
afterAll(() => app?.close());

const sql = (statement: string, params: unknown[] = []) => app.orm.em.fork().execute<Record<string, unknown>[]>(statement, params);
const dataEncryptionKey = () => app.config.dataEncryptionKey!;
const keyStore = (key = dataEncryptionKey(), now?: () => number) =>
  createSecurityCodeKeyStore({ orm: app.orm, keyWrapper: createSecurityCodeKeyWrapper(key), ...(now ? { now } : {}) });
/** The vault of a process that has just started: no key in its memory, each one read from the table. */
const freshVault = () => createCardVault(dataEncryptionKey(), keyStore());

/** The id of the key a sealed card's CVV is sealed under: the card's envelope opened with DATA_ENCRYPTION_KEY alone. */
async function securityCodeKeyOf(sealed: SealedCard): Promise<string> {
  const envelopeKey = new Uint8Array(hkdfSync('sha256', dataEncryptionKey(), Buffer.alloc(0), 'card-vault', 32));
  const envelope = JSON.parse(new TextDecoder().decode((await compactDecrypt(sealed, envelopeKey)).plaintext)) as { cvv: string; securityCode: { keyId: string } };
  expect(envelope.cvv).toBe('');
  return envelope.securityCode.keyId;
}

const runRetention = () =>
  app.temporal.client.workflow.execute<typeof retentionWorkflow>('retentionWorkflow', { taskQueue: app.taskQueue, workflowId: `maintenance/retention/test-${randomUUID()}` });

describe('card security codes', () => {
  it('each sealing period has one key, however many processes ask for it at once; another DATA_ENCRYPTION_KEY has its own', async () => {
    const at = Date.now();
    const keys = await Promise.all(Array.from({ length: 12 }, () => keyStore(dataEncryptionKey(), () => at).current()));
    expect(new Set(keys.map((key) => key.id)).size).toBe(1);
    expect(new Set(keys.map((key) => Buffer.from(key.key).toString('hex'))).size).toBe(1);
    expect(await sql(`select count(*)::int as stored from card_security_code_keys where id = ?`, [keys[0]!.id])).toEqual([{ stored: 1 }]);

    const another = await keyStore(randomBytes(32), () => at).current();
    expect(another.id).not.toBe(keys[0]!.id);
    expect(Buffer.from(another.key).equals(Buffer.from(keys[0]!.key))).toBe(false);
  });

  // Last in this file: it destroys the key this gateway seals with for the rest of the period.
  it('a CVV reaches the processor, then its key is destroyed: the payment\'s history no longer opens with it', async () => {
    const pan = '4000000000000101';
    const cvv = '739';
    const submitted = await post(app, `/api/${tenant.productId}`, tenant.apiKey, submitBody(pan, { card: card(pan, { cvv }) }));
    // The sandbox approves this card only when its CVV is sent.
    expect(submitted.status).toBe(200);
    expect(submitted.body.info).toBe('Success');

    const handle = app.temporal.client.workflow.getHandle(workflowIds.payment(tenant.id, submitted.body.submitOrderId));
    await handle.result();
    const sealedCard = /"sealedCard":"([\w.-]+)"/.exec(await historyText(handle))?.[1] as SealedCard | undefined;
    expect(sealedCard).toBeDefined();
    await expect(freshVault().open(sealedCard!)).resolves.toMatchObject({ pan, cvv });

    const keyId = await securityCodeKeyOf(sealedCard!);
    // As half an hour after its sealing period: no process reads it any more, and the next retention pass deletes it.
    await sql(`update card_security_code_keys set destroy_after = now() - interval '1 second' where id = ?`, [keyId]);
    await expect(freshVault().open(sealedCard!)).resolves.toMatchObject({ pan, cvv: '' });
    await runRetention();
    expect(await sql(`select id from card_security_code_keys where id = ?`, [keyId])).toEqual([]);
    await expect(freshVault().open(sealedCard!)).resolves.toMatchObject({ pan, cvv: '' });
  });
});
