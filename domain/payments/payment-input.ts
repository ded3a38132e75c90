import type { SubscriptionPlan } from '../catalog/product.ts';
import type { ResultContext } from './submit-result.ts';
import { fitsCharacters } from '../validation/characters.ts';

/** Card facts safe to keep in workflow history: no PAN, no CVV. */
export interface CardSummary {
  readonly bin: string;
  readonly last4: string;
  readonly network: string;
  readonly binCountry?: string;
  readonly expiryMonth: number;
  readonly expiryYear: number;
  readonly fingerprint: string;
  readonly holderName?: string;
}

/** The longest partnerSession the order keeps for correlation (spec 2.1); a longer one lives only in the workflow. */
export const PERSISTED_PARTNER_SESSION_LENGTH = 50;

/**
 * The partnerSession as the order keeps it, or undefined when it is longer than 50 characters: characters as the
 * column (and the lead's `session_id`) count them, code points, so an emoji counts once, not as two UTF-16 units.
 */
export function persistedPartnerSession(partnerSession: string | undefined): string | undefined {
  return partnerSession && fitsCharacters(partnerSession, PERSISTED_PARTNER_SESSION_LENGTH) ? partnerSession : undefined;
}

/** What the order records besides money (spec 2.1). */
export interface OrderDetails {
  readonly partnerSession?: string;
  readonly serviceSession?: string;
  readonly campaignName?: string;
  readonly affiliateName?: string;
  readonly subAffiliatePrimary?: string;
  readonly subAffiliateSecondary?: string;
  readonly trackerClickId?: string;
  readonly props?: Record<string, unknown>;
  readonly userAgent?: string;
  readonly ip?: string;
  readonly billingAddress?: Record<string, string>;
  readonly shippingAddress?: Record<string, string>;
  readonly storefront?: Record<string, boolean>;
  readonly phone?: string;
  readonly mobileWalletA: boolean;
  readonly firstName?: string;
  readonly lastName?: string;
}

export interface PaymentSettings {
  readonly processorTimeoutMs: number;
  readonly threeDSecureTimeoutSeconds: number;
  readonly webhookSchedule: readonly number[];
  readonly webhookTimeoutMs: number;
  /**
   * How long a lost authorization answer is asked about before the payment ends failed with its outcome unknown
   * (absent, as in payments and subscriptions started before it was a setting: a week).
   */
  readonly unknownOutcomeGiveUpSeconds?: number;
  /** How long an authorization made with `capture: false` waits for a capture before it is voided (absent: never authorize only). */
  readonly authorizationVoidAfterSeconds?: number;
}

export interface PaymentWorkflowInput {
  readonly tenantId: number;
  readonly productId: number;
  readonly submitOrderId: number;
  readonly amount: string;
  readonly currency: string;
  readonly email: string;
  /** AES-256-GCM ciphertext of the card; only the authorization activity opens it. */
  readonly sealedCard: string;
  readonly card: CardSummary;
  readonly order: OrderDetails;
  readonly forcedMerchantAccountId?: number;
  readonly cascade: boolean;
  readonly threeDSecure: { readonly enabled: boolean; readonly cancelOnFail: boolean };
  /** False: authorize only, then wait for a capture or void (`POST /payments` with `capture: false`); absent: charge at once. */
  readonly capture?: boolean;
  readonly subscriptionPlan: SubscriptionPlan | null;
  readonly resultContext: ResultContext;
  readonly settings: PaymentSettings;
  /** A rebill: the subscription it charges, which its transaction event names (absent in rebills of before). */
  readonly rebillOf?: number;
}
