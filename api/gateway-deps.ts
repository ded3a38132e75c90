import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../platform/config.ts';
import type { SecretBox } from '../domain/crypto/secret-box.ts';
import type { Logger } from '../platform/logger.ts';
import type { DeliveryStarter } from '../domain/webhooks/delivery-starter.ts';
import type { EmailDispatcher } from '../domain/email/email-dispatcher.ts';
import type { ReadinessProbes } from './rest/health.routes.ts';
import type { CardVault } from '../domain/crypto/card-vault.ts';
import type { PaymentRunner } from '../domain/payments/payment-runner.ts';
import type { RefundRunner } from '../domain/payments-api/refund-outcome.ts';
import type { SubscriptionController } from '../domain/subscriptions/subscription-controller.ts';
import type { RateLimitPolicy } from './http/authentication.ts';
import type { ProductLookup } from '../services/catalog/product-cache.ts';

/** Everything the gateway needs, passed in by its entry point (or a test). */
export interface GatewayDeps {
  readonly config: Config;
  readonly orm: MikroORM;
  /**
   * The small pool rate-limit counters are written through, whose sessions commit asynchronously
   * (`openCounterOrm`); nothing but counting statements and the key look-ups joined to them runs on it.
   */
  readonly counterOrm: MikroORM;
  readonly logger: Logger;
  readonly secretBox: SecretBox;
  readonly deliveryStarter: DeliveryStarter;
  /** Starts the delivery workflow of accepted e-mails. */
  readonly emailDispatcher: EmailDispatcher;
  readonly readiness: ReadinessProbes;
  readonly cardVault: CardVault;
  readonly paymentRunner: PaymentRunner;
  readonly refundRunner: RefundRunner;
  readonly subscriptionController: SubscriptionController;
  /** The products card payments are for, cached in this process and dropped on change (services/catalog/product-cache.ts). */
  readonly productCache: ProductLookup;
  /** The clock rate-limit windows are counted by; tests inject one so a window never rolls over mid-test. */
  readonly now?: () => Date;
}

/** The subset resolvers reach through the GraphQL context. */
export interface GatewayServices {
  readonly operatorToken?: string;
  readonly rateLimit: RateLimitPolicy;
  readonly secretBox: SecretBox;
  readonly cardVault: CardVault;
  readonly deliveryStarter: DeliveryStarter;
  readonly subscriptionController: SubscriptionController;
}
