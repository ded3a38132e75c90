/** Validation of request bodies; error messages name fields, never their values. */
import { SandboxHttpError } from './http-setup.ts';

export interface AuthorizationBody {
  reference: string;
  orderReference: string;
  merchantId: string;
  amount: string;
  currency: string;
  cardNumber: string;
  /** A CVV was sent (its value is not kept). */
  hasSecurityCode: boolean;
  threeDSecure: boolean;
  /** False: authorize only; the amount waits for `POST /v1/authorizations/:id/capture` (or a void). */
  capture: boolean;
  /** A stored card charged without its holder (a rebill): exempt from strong customer authentication. */
  merchantInitiated: boolean;
}

export function parseAuthorizationBody(body: unknown): AuthorizationBody {
  if (!isRecord(body)) throw new SandboxHttpError(400, 'body must be a JSON object');
  const problems: string[] = [];
  const text = (field: string, max = 200): string => {
    const value = body[field];
    if (typeof value !== 'string' || value.length === 0 || value.length > max) {
      problems.push(`${field} must be a string of 1 to ${max} characters`);
      return '';
    }
    return value;
  };
  const reference = text('reference');
  const orderReference = text('orderReference');
  const merchantId = text('merchantId');
  const amount = text('amount', 20);
  if (amount && !/^\d{1,15}\.\d{2}$/.test(amount)) problems.push('amount must be a decimal string with two decimals, e.g. "29.99"');
  const currency = text('currency', 3);
  if (currency && !/^[A-Z]{3}$/.test(currency)) problems.push('currency must be an ISO 4217 code');
  if (typeof body.threeDSecure !== 'boolean') problems.push('threeDSecure must be a boolean');
  if (body.capture !== undefined && typeof body.capture !== 'boolean') problems.push('capture must be a boolean');
  if (body.merchantInitiated !== undefined && typeof body.merchantInitiated !== 'boolean') problems.push('merchantInitiated must be a boolean');
  if (body.credentials !== undefined && !isRecord(body.credentials)) problems.push('credentials must be an object');

  let cardNumber = '';
  const card = body.card;
  if (!isRecord(card)) {
    problems.push('card must be an object');
  } else {
    if (typeof card.number !== 'string' || !/^\d{12,19}$/.test(card.number)) problems.push('card.number must be 12 to 19 digits');
    else cardNumber = card.number;
    if (!Number.isInteger(card.expiryMonth) || (card.expiryMonth as number) < 1 || (card.expiryMonth as number) > 12) problems.push('card.expiryMonth must be an integer from 1 to 12');
    if (!Number.isInteger(card.expiryYear) || (card.expiryYear as number) < 0 || (card.expiryYear as number) > 9999) problems.push('card.expiryYear must be an integer year');
    if (card.cvv !== undefined && (typeof card.cvv !== 'string' || !/^\d{3,4}$/.test(card.cvv))) problems.push('card.cvv must be 3 or 4 digits');
    if (card.holderName !== undefined && typeof card.holderName !== 'string') problems.push('card.holderName must be a string');
  }
  if (problems.length > 0) throw new SandboxHttpError(400, problems.join('; '));
  return { reference, orderReference, merchantId, amount, currency, cardNumber, hasSecurityCode: isRecord(card) && card.cvv !== undefined, threeDSecure: body.threeDSecure as boolean, capture: body.capture !== false, merchantInitiated: body.merchantInitiated === true };
}

/** The `proceedWithoutAuthentication` flag of a 3ds-complete body. */
export function parseProceedWithoutAuthentication(body: unknown): boolean {
  if (!isRecord(body) || typeof body.proceedWithoutAuthentication !== 'boolean') {
    throw new SandboxHttpError(400, 'proceedWithoutAuthentication must be a boolean');
  }
  return body.proceedWithoutAuthentication;
}

/** The cardholder's choice posted from the challenge page (form-encoded) or by a test (JSON). */
export function parseChallengeOutcome(body: unknown): 'authenticate' | 'fail' {
  const outcome = isRecord(body) ? body.outcome : undefined;
  if (outcome !== 'authenticate' && outcome !== 'fail') throw new SandboxHttpError(400, 'outcome must be "authenticate" or "fail"');
  return outcome;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
