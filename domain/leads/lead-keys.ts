/** Where a lead key works: `test` keys pair with sandbox merchant accounts, `live` keys with real ones. */
export const LEAD_ENVIRONMENTS = ['test', 'live'] as const;
export type LeadEnvironment = (typeof LEAD_ENVIRONMENTS)[number];

export type LeadKeyKind = 'publishable' | 'secret';

/** `pk_test_`, `sk_live_`, ...: the prefix tells kind and environment at a glance (and to secret scanners). */
export function leadKeyPrefix(kind: LeadKeyKind, environment: LeadEnvironment): string {
  return `${kind === 'publishable' ? 'pk' : 'sk'}_${environment}_`;
}

const KEY_PATTERN = /^(pk|sk)_(test|live)_[A-Za-z0-9_-]{16,200}$/;

/** Kind and environment of a well-formed lead key; undefined for anything else (never looked up). */
export function parseLeadKey(key: string): { kind: LeadKeyKind; environment: LeadEnvironment } | undefined {
  const match = KEY_PATTERN.exec(key);
  if (!match) return undefined;
  return { kind: match[1] === 'pk' ? 'publishable' : 'secret', environment: match[2] as LeadEnvironment };
}

/** The gateway whose merchant accounts are sandbox accounts; every other gateway is live. */
export const SANDBOX_GATEWAY = 'sandbox';

/** The lead environment a payment on a merchant account of this gateway belongs to (DESIGN 4, paid matching). */
export function environmentOfGateway(gateway: string): LeadEnvironment {
  return gateway === SANDBOX_GATEWAY ? 'test' : 'live';
}
