import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.ts';
import { authorizationsFor, createMerchantTenant, merchantAccount, oneOffProduct, post, submitBody, type MerchantTenant } from './support/payments.ts';

/**
 * MID selection (README "How a submit runs", step 3) through the real submit route: candidates are the
 * tenant's live merchant accounts accepting the card's network and the currency, whose `maxPrice` covers
 * the amount and whose month-to-date approved volume plus the amount stays within `monthlyCap`; the least
 * used relative to its cap goes first. The result names the account in `mid` and `merchantAccountId`.
 */

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
  await app.startWorker();
});
afterAll(() => app?.close());

const APPROVED = '4242424242424242';
const APPROVED_NETWORK_B = '5555555555554444';
const DECLINED = '4000000000000002';

async function submit(tenant: MerchantTenant, product: string, pan = APPROVED, overrides: Record<string, unknown> = {}) {
  const { status, body } = await post(app, `/api/${tenant.products[product]}`, tenant.apiKey, submitBody(pan, overrides));
  expect(status).toBe(200);
  return body;
}

/** Submits an approved payment and answers the MID that took it. */
async function approvedOn(tenant: MerchantTenant, product: string, pan = APPROVED): Promise<string> {
  const result = await submit(tenant, product, pan);
  expect(result, `submit of ${product}`).toMatchObject({ info: 'Success', chargeSuccess: true });
  return result.mid as string;
}

/** Puts one approved payment on the named MID through the `mid` override, adding its amount to the MID's month volume. */
async function approveOnForcedMid(tenant: MerchantTenant, product: string, name: string) {
  const result = await submit(tenant, product, APPROVED, { mid: tenant.mids[name] });
  expect(result).toMatchObject({ info: 'Success', mid: tenant.mids[name] });
}

const NO_MID_ERROR = 'No merchant account available for this payment';

/** The answer when no merchant account can take the payment: nothing is sent to a processor. */
async function expectNoEligibleMid(result: Record<string, any>) {
  expect(result).toMatchObject({
    info: 'None',
    error: NO_MID_ERROR,
    message: NO_MID_ERROR,
    statusId: 0,
    chargeSuccess: false,
    subscribeSuccess: false,
    mid: '',
    merchantAccountId: 0,
    transactionId: '',
    gatewayResponses: [],
  });
  expect(result.submitOrderId).toBeGreaterThan(0);
  expect(await authorizationsFor(result.submitOrderId)).toBe(0);
  const transactions = await app.orm.em.fork().execute(`select id from transactions where order_id = ?`, [result.submitOrderId]);
  expect(transactions).toEqual([]);
}

describe('maxPrice', () => {
  it('skips a MID whose maxPrice is below the amount, even when it is the least used; a price equal to maxPrice is allowed', async () => {
    const tenant = await createMerchantTenant(app, {
      products: [oneOffProduct('at-limit', '20.00'), oneOffProduct('over-limit', '20.01'), oneOffProduct('too-dear', '150.00')],
      merchantAccounts: [merchantAccount('SMALL', { maxPrice: '20.00', monthlyCap: 1000 }), merchantAccount('BIG', { maxPrice: '100.00', monthlyCap: 1000 })],
    });
    expect(await approvedOn(tenant, 'over-limit')).toBe(tenant.mids.BIG);
    // SMALL is now the less used of the two, and still not eligible for 20.01.
    expect(await approvedOn(tenant, 'over-limit')).toBe(tenant.mids.BIG);
    expect(await approvedOn(tenant, 'at-limit')).toBe(tenant.mids.SMALL);
    // Over every MID's maxPrice.
    await expectNoEligibleMid(await submit(tenant, 'too-dear'));
  });
});

describe('monthlyCap', () => {
  it('counts approved volume only, and answers no eligible MID once the next amount would pass the cap', async () => {
    const tenant = await createMerchantTenant(app, {
      products: [oneOffProduct('ten', '10.00')],
      merchantAccounts: [merchantAccount('ONLY', { monthlyCap: 25 })],
    });
    // A decline adds nothing to the month's volume.
    expect(await submit(tenant, 'ten', DECLINED)).toMatchObject({ info: 'Error', statusId: 3617, mid: tenant.mids.ONLY });
    expect(await approvedOn(tenant, 'ten')).toBe(tenant.mids.ONLY);
    expect(await approvedOn(tenant, 'ten')).toBe(tenant.mids.ONLY);
    // 20.00 approved: another 10.00 would make 30.00 > 25.
    await expectNoEligibleMid(await submit(tenant, 'ten'));
  });

  it('goes to another MID when the least used one cannot take the amount within its cap, up to exactly the cap, then none', async () => {
    const tenant = await createMerchantTenant(app, {
      products: [oneOffProduct('ten', '10.00')],
      merchantAccounts: [merchantAccount('TIGHT', { monthlyCap: 15 }), merchantAccount('ROOMY', { monthlyCap: 40 })],
    });
    await approveOnForcedMid(tenant, 'ten', 'TIGHT'); // TIGHT 10/15 used (0.67)
    for (let i = 0; i < 3; i++) await approveOnForcedMid(tenant, 'ten', 'ROOMY'); // ROOMY 30/40 used (0.75)
    // TIGHT is the less used relative to its cap, but 10 + 10 > 15; ROOMY reaches exactly 40.
    expect(await approvedOn(tenant, 'ten')).toBe(tenant.mids.ROOMY);
    // TIGHT 20 > 15, ROOMY 50 > 40.
    await expectNoEligibleMid(await submit(tenant, 'ten'));
  });

  it('prefers the MID least used relative to its cap, not by absolute volume', async () => {
    const tenant = await createMerchantTenant(app, {
      products: [oneOffProduct('ten', '10.00')],
      merchantAccounts: [merchantAccount('SMALL-CAP', { monthlyCap: 25 }), merchantAccount('LARGE-CAP', { monthlyCap: 100 })],
    });
    await approveOnForcedMid(tenant, 'ten', 'SMALL-CAP'); // 10/25 = 0.40
    await approveOnForcedMid(tenant, 'ten', 'LARGE-CAP');
    await approveOnForcedMid(tenant, 'ten', 'LARGE-CAP'); // 20/100 = 0.20, more volume but less used
    expect(await approvedOn(tenant, 'ten')).toBe(tenant.mids['LARGE-CAP']); // now 30/100 = 0.30
    await approveOnForcedMid(tenant, 'ten', 'LARGE-CAP');
    await approveOnForcedMid(tenant, 'ten', 'LARGE-CAP'); // 50/100 = 0.50
    expect(await approvedOn(tenant, 'ten')).toBe(tenant.mids['SMALL-CAP']); // 0.40 < 0.50
  });
});

describe('currency', () => {
  it('takes only a MID configured for the product currency, and none when no MID has it', async () => {
    const tenant = await createMerchantTenant(app, {
      products: [oneOffProduct('dollars', '10.00', 'USD'), oneOffProduct('euros', '10.00', 'EUR'), oneOffProduct('pounds', '10.00', 'GBP')],
      merchantAccounts: [
        merchantAccount('USD-ONLY'),
        merchantAccount('EUR-ONLY', { defaultCurrency: 'EUR', currencies: [{ currency: 'EUR', gatewayCredentials: { apiKey: 'sandbox-eur' } }] }),
      ],
    });
    const euros = await submit(tenant, 'euros');
    expect(euros).toMatchObject({ info: 'Success', mid: tenant.mids['EUR-ONLY'], amount: 10 });
    expect(await approvedOn(tenant, 'dollars')).toBe(tenant.mids['USD-ONLY']);
    expect(await approvedOn(tenant, 'euros')).toBe(tenant.mids['EUR-ONLY']);
    const [row] = await app.orm.em.fork().execute(`select currency, mid from transactions where order_id = ?`, [euros.submitOrderId]);
    expect(row).toEqual({ currency: 'EUR', mid: tenant.mids['EUR-ONLY'] });
    await expectNoEligibleMid(await submit(tenant, 'pounds'));
  });
});

describe('network flags', () => {
  it('takes only a MID that accepts the card network', async () => {
    const tenant = await createMerchantTenant(app, {
      products: [oneOffProduct('ten', '10.00')],
      merchantAccounts: [merchantAccount('NO-B', { enabledNetworkB: false }), merchantAccount('NO-A', { enabledNetworkA: false })],
    });
    for (let i = 0; i < 2; i++) {
      expect(await approvedOn(tenant, 'ten', APPROVED_NETWORK_B)).toBe(tenant.mids['NO-A']);
      expect(await approvedOn(tenant, 'ten', APPROVED)).toBe(tenant.mids['NO-B']);
    }
  });

  it("fails as spec 7.1's 'NetworkB cards not supported' when every live MID refuses the network the product accepts", async () => {
    const tenant = await createMerchantTenant(app, {
      products: [oneOffProduct('ten', '10.00')],
      merchantAccounts: [merchantAccount('A-ONLY-1', { enabledNetworkB: false }), merchantAccount('A-ONLY-2', { enabledNetworkB: false })],
    });
    const refused = await submit(tenant, 'ten', APPROVED_NETWORK_B);
    expect(refused).toMatchObject({ info: 'Failed', error: 'NetworkB cards not supported', message: 'NetworkB cards not supported', statusId: 0, chargeSuccess: false, mid: '', gatewayResponses: [] });
    expect(await authorizationsFor(refused.submitOrderId)).toBe(0);
    // Its order says why, as `GET /payments/{id}` shows it.
    expect(await app.orm.em.fork().execute(`select state, unprocessed_reason from orders where id = ?`, [refused.submitOrderId])).toEqual([{ state: 'failed', unprocessed_reason: 'card_network_not_supported' }]);
    expect(await approvedOn(tenant, 'ten', APPROVED)).toMatch(/^A-ONLY-/);
  });
});

describe('fullyLive', () => {
  it('never selects a MID that is not fully live, and answers no eligible MID when none is', async () => {
    const tenant = await createMerchantTenant(app, {
      products: [oneOffProduct('ten', '10.00')],
      merchantAccounts: [merchantAccount('TESTING', { fullyLive: false }), merchantAccount('LIVE')],
    });
    expect(await approvedOn(tenant, 'ten')).toBe(tenant.mids.LIVE);
    expect(await approvedOn(tenant, 'ten')).toBe(tenant.mids.LIVE);

    const notLive = await createMerchantTenant(app, {
      products: [oneOffProduct('ten', '10.00')],
      merchantAccounts: [merchantAccount('TESTING-1', { fullyLive: false }), merchantAccount('TESTING-2', { fullyLive: false })],
    });
    await expectNoEligibleMid(await submit(notLive, 'ten'));
  });

  it('answers no eligible MID to a tenant without merchant accounts', async () => {
    const tenant = await createMerchantTenant(app, { products: [oneOffProduct('ten', '10.00')], merchantAccounts: [] });
    await expectNoEligibleMid(await submit(tenant, 'ten'));
  });
});

describe('forced mid', () => {
  /** A forced MID that cannot take the payment declines it with `statusId`, recorded, and never reaches the processor. */
  async function expectDeclinedUnsent(result: Record<string, any>, statusId: number, mid: string) {
    expect(result).toMatchObject({ info: 'Error', statusId, chargeSuccess: false, subscribeSuccess: false, mid, transactionId: '' });
    expect(result.error).not.toBe('');
    expect(result.merchantAccountId).toBeGreaterThan(0);
    expect(await authorizationsFor(result.submitOrderId)).toBe(0);
    const transactions = await app.orm.em.fork().execute(`select status_id, success, mid from transactions where order_id = ?`, [result.submitOrderId]);
    expect(transactions).toEqual([{ status_id: statusId, success: false, mid }]);
  }

  it('declines on a MID that is not fully live with 3642', async () => {
    const tenant = await createMerchantTenant(app, { products: [oneOffProduct('ten', '10.00')], merchantAccounts: [merchantAccount('TESTING', { fullyLive: false })] });
    await expectDeclinedUnsent(await submit(tenant, 'ten', APPROVED, { mid: tenant.mids.TESTING }), 3642, tenant.mids.TESTING!);
  });

  it('declines an amount over the MID maxPrice with 3809', async () => {
    const tenant = await createMerchantTenant(app, { products: [oneOffProduct('dear', '20.01')], merchantAccounts: [merchantAccount('SMALL', { maxPrice: '20.00' })] });
    await expectDeclinedUnsent(await submit(tenant, 'dear', APPROVED, { mid: tenant.mids.SMALL }), 3809, tenant.mids.SMALL!);
  });

  it('declines a currency the MID is not configured for with 2931', async () => {
    const tenant = await createMerchantTenant(app, { products: [oneOffProduct('euros', '10.00', 'EUR')], merchantAccounts: [merchantAccount('USD-ONLY')] });
    await expectDeclinedUnsent(await submit(tenant, 'euros', APPROVED, { mid: tenant.mids['USD-ONLY'] }), 2931, tenant.mids['USD-ONLY']!);
  });

  it('declines a card network the MID does not accept with 4268', async () => {
    const tenant = await createMerchantTenant(app, { products: [oneOffProduct('ten', '10.00')], merchantAccounts: [merchantAccount('NO-B', { enabledNetworkB: false })] });
    await expectDeclinedUnsent(await submit(tenant, 'ten', APPROVED_NETWORK_B, { mid: tenant.mids['NO-B'] }), 4268, tenant.mids['NO-B']!);
  });

  it('declines once the amount would pass the MID monthly cap with 2892, after approving up to it', async () => {
    const tenant = await createMerchantTenant(app, { products: [oneOffProduct('ten', '10.00')], merchantAccounts: [merchantAccount('TIGHT', { monthlyCap: 15 })] });
    await approveOnForcedMid(tenant, 'ten', 'TIGHT');
    await expectDeclinedUnsent(await submit(tenant, 'ten', APPROVED, { mid: tenant.mids.TIGHT }), 2892, tenant.mids.TIGHT!);
  });

  it('approves only what fits the forced MID monthly cap when ten submits force it at once; the rest decline 2892 unsent', async () => {
    const tenant = await createMerchantTenant(app, {
      products: [oneOffProduct('ten', '10.00')],
      merchantAccounts: [merchantAccount('CROWDED', { monthlyCap: 35 }), merchantAccount('ROOMY')],
    });
    const results = await Promise.all(Array.from({ length: 10 }, () => submit(tenant, 'ten', APPROVED, { mid: tenant.mids.CROWDED })));
    const approved = results.filter((result) => result.info === 'Success');
    expect(approved).toHaveLength(3);
    for (const result of approved) expect(result.mid).toBe(tenant.mids.CROWDED);
    for (const result of results.filter((r) => r.info !== 'Success')) await expectDeclinedUnsent(result, 2892, tenant.mids.CROWDED!);
    const volumes = await app.orm.em.fork().execute(
      `select m.mid, v.approved_amount, v.reserved_amount from merchant_account_volumes v join merchant_accounts m on m.id = v.merchant_account_id where m.tenant_id = ?`,
      [tenant.id],
    );
    expect(volumes).toEqual([{ mid: tenant.mids.CROWDED, approved_amount: '30.00', reserved_amount: '0.00' }]);
  });

  it('never cascades away from a forced MID', async () => {
    const tenant = await createMerchantTenant(app, {
      products: [oneOffProduct('ten', '10.00')],
      merchantAccounts: [merchantAccount('FORCED'), merchantAccount('OTHER', { acquiringBank: 'Another bank' })],
    });
    const result = await submit(tenant, 'ten', DECLINED, { mid: tenant.mids.FORCED, cascade: true });
    expect(result).toMatchObject({ info: 'Error', statusId: 3617, mid: tenant.mids.FORCED });
    expect(result.gatewayResponses).toHaveLength(1);
  });
});
