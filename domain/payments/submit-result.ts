/** `info` values of spec 2.3 / 3.1. */
export const SUBMIT_INFOS = ['Success', 'Error', 'Failed', 'LimitReached', 'UserBlocked', 'None', 'AlreadySubscribed', 'Pending', 'RedirectRequired'] as const;
export type SubmitInfo = (typeof SUBMIT_INFOS)[number];

/** A first answer that waits on the cardholder (a 3-D Secure challenge or a redirect), completed through `/3ds`. */
export const awaitsCardholder = (result: { readonly info: SubmitInfo }): boolean => result.info === 'Pending' || result.info === 'RedirectRequired';

export interface GatewayResponse {
  readonly gateway: string;
  readonly httpStatus: number;
  readonly response: string;
}

/** The submit result of spec 2.3: every field present, for submit and 3DS completion alike. */
export interface SubmitResult {
  serviceSession: string;
  partnerSession: string;
  subscribeSuccess: boolean;
  chargeSuccess: boolean;
  info: SubmitInfo;
  error: string;
  email: string;
  message: string;
  orderId: number;
  descriptor: string;
  mid: string;
  threeDSecureId: string;
  transactionId: string;
  amount: number;
  statusId: number;
  declineSalvage: boolean;
  merchantAccountId: number;
  midPortalUrl: string;
  bin: string;
  binCountry: string;
  last4: string;
  eci: string;
  networkTokenized: boolean;
  submitOrderId: number;
  mobileWalletA: boolean;
  mobileWalletB: boolean;
  gatewayResponses: GatewayResponse[];
  subscriptionId: number;
}

/**
 * How a payment ends: its final result and, when it ended failed though the card may have been charged all the same
 * (an authorization whose outcome stayed unknown when its inquiries gave up, an approval it could not void),
 * `chargeUncertain`. Never part of a caller's answer: billing reads it, so as not to charge the period again.
 */
export type PaymentEnd = SubmitResult & { readonly chargeUncertain?: true };

/** What every result carries from the request, whatever the outcome. */
export interface ResultContext {
  readonly serviceSession?: string;
  readonly partnerSession?: string;
  readonly email?: string;
  readonly amount: string;
  readonly bin?: string;
  readonly binCountry?: string;
  readonly last4?: string;
  readonly mobileWalletA?: boolean;
}

/**
 * A result with every field at its empty value. `amount` is the product price as a JSON number: the
 * decimal string has at most 2 fraction digits, so `Number` gives the nearest double of an exact
 * cents value, and no arithmetic is ever done on it.
 */
export function emptyResult(context: ResultContext): SubmitResult {
  return {
    serviceSession: context.serviceSession ?? '',
    partnerSession: context.partnerSession ?? '',
    subscribeSuccess: false,
    chargeSuccess: false,
    info: 'None',
    error: '',
    email: context.email ?? '',
    message: '',
    orderId: 0,
    descriptor: '',
    mid: '',
    threeDSecureId: '',
    transactionId: '',
    amount: Number(context.amount),
    statusId: 0,
    declineSalvage: false,
    merchantAccountId: 0,
    midPortalUrl: '',
    bin: context.bin ?? '',
    binCountry: context.binCountry ?? '',
    last4: context.last4 ?? '',
    eci: '',
    networkTokenized: false,
    submitOrderId: 0,
    mobileWalletA: context.mobileWalletA ?? false,
    mobileWalletB: false,
    gatewayResponses: [],
    subscriptionId: 0,
  };
}

/** A pre-processing outcome (7.1): no transaction, `statusId` 0, `message` mirrors `error`. */
export function preProcessingResult(context: ResultContext, info: SubmitInfo, error: string): SubmitResult {
  return { ...emptyResult(context), info, error, message: error };
}
