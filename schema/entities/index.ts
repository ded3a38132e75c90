import { AuditEntry, RateLimitWindow } from './audit.entity.ts';
import { MerchantAccount, MerchantAccountCurrency } from './merchant-account.entity.ts';
import { Product } from './product.entity.ts';
import { StatusCode } from './status-code.entity.ts';
import { ApiKey, LeadKeySet, SenderDomain, Tenant } from './tenant.entity.ts';
import { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from './webhook.entity.ts';

export * from './audit.entity.ts';
export * from './merchant-account.entity.ts';
export * from './product.entity.ts';
export * from './status-code.entity.ts';
export * from './tenant.entity.ts';
export * from './webhook.entity.ts';

export const ENTITIES = [
  Tenant,
  ApiKey,
  LeadKeySet,
  SenderDomain,
  Product,
  MerchantAccount,
  MerchantAccountCurrency,
  StatusCode,
  WebhookEndpoint,
  WebhookDelivery,
  WebhookAttempt,
  AuditEntry,
  RateLimitWindow,
];
