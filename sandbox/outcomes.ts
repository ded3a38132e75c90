/**
 * What the sandbox answers, decided by test card (`test-cards.ts`) and amount. The routes decide when
 * a rule applies; these functions only say what the answer is.
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { Answer, Authorization, Challenge } from './ledger.ts';
import type { AuthorizationBody } from './request-bodies.ts';
import { AMOUNT_DECLINES, APPROVED, INVALID_CARD_NUMBER, INVALID_SECURITY_CODE, SCA_REQUIRED, THREE_DS_FAILED, VOIDED, findTestCard, luhnValid, networkOf, type CardNetwork } from './test-cards.ts';

/** The amount rules of `AMOUNT_RULES`, by the amount's two decimals. */
export function amountRule(amount: string): 'unavailable' | 'slow' | undefined {
  const cents = amount.slice(-2);
  if (cents === '97') return 'unavailable';
  if (cents === '98') return 'slow';
  return undefined;
}

/**
 * A new authorization and its first answer. `firstMerchantOfOrder` decides the cascade card;
 * `publicUrl` is where the cardholder's browser reaches the challenge page.
 */
export function authorize(body: AuthorizationBody, firstMerchantOfOrder: string, publicUrl: string): Authorization {
  const id = `sbx_${randomUUID()}`;
  const network = networkOf(body.cardNumber);
  return {
    id,
    reference: body.reference,
    orderReference: body.orderReference,
    merchantId: body.merchantId,
    amount: body.amount,
    currency: body.currency,
    network,
    cardLastFour: body.cardNumber.slice(-4),
    ...firstAnswer(body, { id, reference: body.reference }, network, firstMerchantOfOrder, publicUrl),
  };
}

/**
 * The details of an authorization request that differ from those its reference was first authorized with (field
 * names only). A processor answers a reference it knows with what it did the first time, but only for the same
 * request: a reference sent again with another amount, card or merchant is a different payment under a reused
 * reference (an order numbering started again against a processor that remembers), and is refused, not answered
 * with someone else's outcome.
 */
export function differingDetails(known: Authorization, body: AuthorizationBody): string[] {
  const sent = { orderReference: body.orderReference, merchantId: body.merchantId, amount: body.amount, currency: body.currency, cardLastFour: body.cardNumber.slice(-4) };
  return (Object.keys(sent) as (keyof typeof sent)[]).filter((field) => known[field] !== undefined && known[field] !== sent[field]).map((field) => (field === 'cardLastFour' ? 'card' : field));
}

function firstAnswer(body: AuthorizationBody, ids: AnswerIds, network: CardNetwork, firstMerchantOfOrder: string, publicUrl: string): Pick<Authorization, 'answer' | 'challenge'> {
  // Frictionless 3-D Secure: authenticated without a challenge.
  const frictionlessEci = body.threeDSecure ? authenticatedEci(network) : undefined;

  const card = findTestCard(body.cardNumber);
  const byAmount = AMOUNT_DECLINES[body.amount.slice(-2)];
  const cardBehaviour = card?.behaviour ?? (luhnValid(body.cardNumber) ? { kind: 'approve' as const } : undefined);
  const behaviour = cardBehaviour?.kind === 'approve' && byAmount ? { kind: 'decline' as const, ...byAmount } : cardBehaviour;
  if (!behaviour) return { answer: declinedAnswer(ids, INVALID_CARD_NUMBER.statusId, INVALID_CARD_NUMBER.message) };
  switch (behaviour.kind) {
    case 'approve':
      if (behaviour.securityCodeRequired && !body.hasSecurityCode) return { answer: declinedAnswer(ids, INVALID_SECURITY_CODE.statusId, INVALID_SECURITY_CODE.message) };
      return { answer: approvedAnswer(ids, frictionlessEci) };
    case 'decline':
      return { answer: declinedAnswer(ids, behaviour.statusId, behaviour.message) };
    case 'cascade':
      return { answer: firstMerchantOfOrder === body.merchantId ? declinedAnswer(ids, behaviour.statusId, behaviour.message) : approvedUnlessByAmount(ids, frictionlessEci, byAmount) };
    case 'challenge':
      // The holder authenticated at the checkout that stored the card: a merchant-initiated charge of it is exempt (and
      // the amount rules hold for it, as for any approval: a rebill of it can be dunned).
      if (body.merchantInitiated) return { answer: approvedUnlessByAmount(ids, undefined, byAmount) };
      if (!body.threeDSecure && !behaviour.redirect) return { answer: declinedAnswer(ids, SCA_REQUIRED.statusId, SCA_REQUIRED.message) };
      return {
        challenge: { authenticationFails: behaviour.authenticationFails, state: 'pending' },
        answer: {
          id: ids.id,
          reference: ids.reference,
          status: 'challenge_required',
          code: 0,
          message: behaviour.redirect ? 'Browser redirect required' : '3-D Secure challenge required',
          challengeUrl: `${publicUrl}/challenge/${ids.id}`,
          ...(behaviour.redirect ? { redirect: true } : {}),
        },
      };
  }
}

/** An approval, unless the amount's rule declines what would have been approved. */
function approvedUnlessByAmount(ids: AnswerIds, eci: string | undefined, byAmount: { statusId: number; message: string } | undefined): Answer {
  return byAmount ? declinedAnswer(ids, byAmount.statusId, byAmount.message) : approvedAnswer(ids, eci);
}

/** The cardholder's first choice on the challenge page; a card with `authenticationFails` never authenticates. */
export function challengeResult(challenge: Challenge, outcome: 'authenticate' | 'fail'): 'authenticated' | 'failed' {
  return outcome === 'authenticate' && !challenge.authenticationFails ? 'authenticated' : 'failed';
}

/** The final answer of a challenge the cardholder has finished. */
export function completedAnswer(authorization: Authorization, proceedWithoutAuthentication: boolean): Answer {
  const authenticated = authorization.challenge?.state === 'authenticated';
  if (!authenticated && !proceedWithoutAuthentication) return declinedAnswer(authorization, THREE_DS_FAILED.statusId, THREE_DS_FAILED.message);
  // The amount rules hold after a challenge as without one: the issuer declines what it would have declined.
  // Authenticated: liability shifts; authentication failed, authorized anyway: no liability shift.
  const eci = authenticated ? authenticatedEci(authorization.network) : authorization.network === 'NetworkB' ? '00' : '07';
  return approvedUnlessByAmount(authorization, eci, AMOUNT_DECLINES[authorization.amount.slice(-2)]);
}

/** Voiding an approval releases it (its auth code stays on record); voiding a pending challenge cancels it. */
export function voidedAnswer(authorization: Authorization): Answer {
  const { authCode } = authorization.answer;
  return {
    id: authorization.id,
    reference: authorization.reference,
    status: 'voided',
    code: VOIDED.statusId,
    message: VOIDED.message,
    ...(authCode ? { authCode } : {}),
  };
}

type AnswerIds = Pick<Answer, 'id' | 'reference'>;

function authenticatedEci(network: CardNetwork): string {
  return network === 'NetworkB' ? '02' : '05';
}

function approvedAnswer(ids: AnswerIds, eci: string | undefined): Answer {
  return {
    id: ids.id,
    reference: ids.reference,
    status: 'approved',
    code: APPROVED.statusId,
    message: APPROVED.message,
    authCode: newAuthCode(),
    ...(eci ? { eci } : {}),
  };
}

function declinedAnswer(ids: AnswerIds, code: number, message: string): Answer {
  return { id: ids.id, reference: ids.reference, status: 'declined', code, message };
}

const AUTH_CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';
function newAuthCode(): string {
  let code = '';
  for (let i = 0; i < 6; i++) code += AUTH_CODE_ALPHABET[randomInt(AUTH_CODE_ALPHABET.length)];
  return code;
}
