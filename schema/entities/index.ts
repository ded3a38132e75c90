import { Application, LeadKeySet } from './application.entity.ts';
import { AuditEntry, RateLimitWindow } from './audit.entity.ts';
import { Affiliate, Campaign, Customer } from './customer.entity.ts';
import { Order, Rebill, Subscription } from './order.entity.ts';
import { ActionIdempotencyKey, BlocklistEntry, IdempotencyKey, SubmitAttempt } from './risk.entity.ts';
import { CustomerLead } from './lead.entity.ts';
import { Email, EmailEvent, EmailIdempotencyKey } from './email.entity.ts';
import { Transaction } from './transaction.entity.ts';
import { Refund } from './refund.entity.ts';
import { MerchantAccount, MerchantAccountCurrency, MerchantAccountVolume } from './merchant-account.entity.ts';
import { Product } from './product.entity.ts';
import { StatusCode } from './status-code.entity.ts';
import { ApiKey, CardEncryptionKey, SenderDomain, Tenant } from './tenant.entity.ts';
import { CardSecurityCodeKey } from './card-security-code-key.entity.ts';
import { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from './webhook.entity.ts';

export * from './application.entity.ts';
export * from './audit.entity.ts';
export * from './card-security-code-key.entity.ts';
export * from './customer.entity.ts';
export * from './email.entity.ts';
export * from './lead.entity.ts';
export * from './order.entity.ts';
export * from './risk.entity.ts';
export * from './transaction.entity.ts';
export * from './refund.entity.ts';
export * from './merchant-account.entity.ts';
export * from './product.entity.ts';
export * from './status-code.entity.ts';
export * from './tenant.entity.ts';
export * from './webhook.entity.ts';

export const ENTITIES = [
  Tenant,
  ApiKey,
  Application,
  LeadKeySet,
  SenderDomain,
  Product,
  MerchantAccount,
  MerchantAccountCurrency,
  MerchantAccountVolume,
  StatusCode,
  WebhookEndpoint,
  WebhookDelivery,
  WebhookAttempt,
  AuditEntry,
  RateLimitWindow,
  Customer,
  Campaign,
  Affiliate,
  Order,
  Subscription,
  Rebill,
  Transaction,
  Refund,
  BlocklistEntry,
  SubmitAttempt,
  IdempotencyKey,
  ActionIdempotencyKey,
  CardEncryptionKey,
  CardSecurityCodeKey,
  CustomerLead,
  Email,
  EmailEvent,
  EmailIdempotencyKey,
];
