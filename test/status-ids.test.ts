import { describe, expect, it } from 'vitest';
import { statusById } from '../domain/statuses/status-codes.ts';
import { StatusId } from '../domain/statuses/status-ids.ts';

/** The product's own names for the codes it sets must name the codes the reference table (spec 7.4) gives. */
describe('the status ids the product sets', () => {
  const specNames: Record<keyof typeof StatusId, string> = {
    SUBMITTED: 'Submitted',
    DUPLICATE_AT_PROCESSOR: 'Duplicate transaction at processor',
    PREAUTHORIZED: 'Preauthorized',
    VOIDED: 'Authorized then Voided/Cancelled',
    THREE_DS_FAILED: '3DS Failed',
    AUTHORIZATION_EXPIRED_OR_ALREADY_CAPTURED: 'AUTHORIZATION_EXPIRED_OR_ALREADY_CAPTURED',
    TRANSACTION_NOT_FOUND: 'Transaction Not Found',
    SYSTEM_TIMEOUT: 'Processing Error - System Timeout',
    PROCESSOR_CONFIGURATION_INVALID: 'Processor Configuration Invalid',
    CREDIT_EXCEEDS_ORIGINAL_AMOUNT: 'Credit Exceeds Original Amount',
  };

  it.each(Object.entries(StatusId))('%s (%i) is the table status of that meaning', (name, id) => {
    const specName = specNames[name as keyof typeof StatusId];
    expect(specName, `${name} has no spec name in this test`).toBeDefined();
    expect(statusById(id)?.status).toBe(specName);
  });
});
