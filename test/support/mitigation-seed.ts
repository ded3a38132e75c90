import { randomUUID } from 'node:crypto';
import type { TestApp } from './harness.ts';

/** A transaction as a test seeds it: what the mitigation search can filter on, known to the test. */
export interface SeededTransaction {
  id: string;
  tenantId: number;
  orderId: number;
  productId: number;
  applicationId: number;
  customerId: number;
  merchantAccountId: number | null;
  campaignId: number | null;
  subscriptionIds: number[];
  /** A void refers to the authorization it cancels, as data/queries/authorization-holds.ts recordVoid writes it. */
  kind: 'authorization' | 'refund' | 'void';
  email: string;
  firstName: string | null;
  lastName: string | null;
  bin: string;
  last4: string;
  authCode: string | null;
  gatewayTransactionId: string | null;
  currency: string;
  amount: string;
  descriptor: string | null;
  sandbox: boolean;
  success: boolean;
  sentAt: Date;
  completedAt: Date | null;
  originalTransactionId: string | null;
}

/**
 * Writes transactions straight into the tables the submit flow (and the refund API) fill: a customer and an order per
 * transaction unless one is given. Refund rows carry `original_transaction_id` as issue 12's refunds do.
 */
export async function seedTransaction(
  app: TestApp,
  base: { tenantId: number; productId: number; applicationId: number; merchantAccountId: number | null },
  values: Partial<SeededTransaction> & { orderId?: number },
): Promise<SeededTransaction> {
  const em = app.orm.em.fork();
  const email = values.email ?? `buyer-${randomUUID().slice(0, 6)}@example.com`;
  const [customer] = await em.execute<{ id: number }[]>(
    `insert into customers (tenant_id, email, first_name, last_name, created_at, updated_at) values (?, ?, ?, ?, now(), now())
     on conflict (tenant_id, email) do update set updated_at = now() returning id`,
    [base.tenantId, email, values.firstName ?? null, values.lastName ?? null],
  );
  const amount = values.amount ?? '19.99';
  const currency = values.currency ?? 'USD';
  let orderId = values.orderId;
  if (orderId === undefined) {
    const [order] = await em.execute<{ id: number }[]>(
      `insert into orders (tenant_id, product_id, customer_id, amount, currency, campaign_id, state, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, 'approved', now(), now()) returning id`,
      [base.tenantId, values.productId ?? base.productId, customer!.id, amount, currency, values.campaignId ?? null],
    );
    orderId = order!.id;
  }
  const seeded: SeededTransaction = {
    id: randomUUID(),
    tenantId: base.tenantId,
    orderId,
    productId: values.productId ?? base.productId,
    applicationId: values.applicationId ?? base.applicationId,
    customerId: customer!.id,
    merchantAccountId: values.merchantAccountId === undefined ? base.merchantAccountId : values.merchantAccountId,
    campaignId: values.campaignId ?? null,
    subscriptionIds: values.subscriptionIds ?? [],
    kind: values.kind ?? 'authorization',
    email,
    firstName: values.firstName ?? null,
    lastName: values.lastName ?? null,
    bin: values.bin ?? '42424242',
    last4: values.last4 ?? '4242',
    authCode: values.authCode ?? null,
    gatewayTransactionId: values.gatewayTransactionId ?? `gw-${randomUUID()}`,
    currency,
    amount,
    descriptor: values.descriptor === undefined ? 'SHOP*DEFAULT' : values.descriptor,
    sandbox: values.sandbox ?? false,
    success: values.success ?? true,
    sentAt: values.sentAt ?? new Date(),
    completedAt: values.completedAt === undefined ? new Date((values.sentAt ?? new Date()).getTime() + 1000) : values.completedAt,
    originalTransactionId: values.originalTransactionId ?? null,
  };
  await em.execute(
    `insert into transactions (id, tenant_id, order_id, product_id, customer_id, merchant_account_id, kind, reference, attempt_number, gateway,
       gateway_transaction_id, status_id, status, success, amount, currency, mid, descriptor, auth_code, email, first_name, last_name, bin, last4,
       brand, card_fingerprint, expiry_month, expiry_year, sandbox, refundable, original_transaction_id, gateway_response, sent_at, completed_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, 1, 'sandbox', ?, ?, ?, ?, ?, ?, (select mid from merchant_accounts where id = ?), ?, ?, ?, ?, ?, ?, ?,
       'NetworkA', 'fp', 12, 2030, ?, ?, ?, '{"gateway":"sandbox","httpStatus":200,"response":"{}"}', ?, ?)`,
    [
      seeded.id, seeded.tenantId, seeded.orderId, seeded.productId, seeded.customerId, seeded.merchantAccountId, seeded.kind, `seed-${seeded.id}`,
      seeded.gatewayTransactionId, seeded.success ? 2636 : 3617, seeded.success ? 'Transaction succeeded' : 'Declined', seeded.success, seeded.amount,
      seeded.currency, seeded.merchantAccountId, seeded.descriptor, seeded.authCode, seeded.email, seeded.firstName, seeded.lastName, seeded.bin,
      seeded.last4, seeded.sandbox, seeded.success && seeded.kind === 'authorization', seeded.originalTransactionId, seeded.sentAt, seeded.completedAt,
    ],
  );
  return seeded;
}
