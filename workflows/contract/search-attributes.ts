import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Typed search attributes: an engineer finds any checkout or delivery in the Temporal UI by these.
 * They are registered by the dev server flags and by the worker at start (idempotent).
 */
export const TenantIdAttribute = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD);
export const ProductIdAttribute = defineSearchAttributeKey('ProductId', SearchAttributeType.KEYWORD);
export const PartnerSessionAttribute = defineSearchAttributeKey('PartnerSession', SearchAttributeType.KEYWORD);
export const CustomerEmailAttribute = defineSearchAttributeKey('CustomerEmail', SearchAttributeType.KEYWORD);
export const OutcomeAttribute = defineSearchAttributeKey('Outcome', SearchAttributeType.KEYWORD);
export const WebhookEndpointIdAttribute = defineSearchAttributeKey('WebhookEndpointId', SearchAttributeType.KEYWORD);
export const WebhookEventTypeAttribute = defineSearchAttributeKey('WebhookEventType', SearchAttributeType.KEYWORD);

export const ALL_SEARCH_ATTRIBUTES = [
  TenantIdAttribute,
  ProductIdAttribute,
  PartnerSessionAttribute,
  CustomerEmailAttribute,
  OutcomeAttribute,
  WebhookEndpointIdAttribute,
  WebhookEventTypeAttribute,
] as const;
