import { randomUUID } from 'node:crypto';
import { generateWebhookSecret, type SecretBox } from '../../domain/crypto/secret-box.ts';
import { DomainError } from '../../domain/errors.ts';
import { isUsableSigningSecret } from '../../domain/webhooks/signing.ts';
import { WebhookEndpoint } from '../../schema/entities/index.ts';
import { assignChanges, type ChangeKind } from './changes.ts';
import type { TenantFixture } from './fixture.schema.ts';
import type { TenantScope } from './tenant-scope.ts';
import { ENDPOINT_GONE_REASON } from '../../domain/webhooks/retry-policy.ts';

export interface ProvisionedWebhookEndpoint {
  slug: string;
  id: string;
  change: ChangeKind;
  /** Only a signing secret this run generated; it is stored sealed. */
  secret?: string;
}

/**
 * Webhook endpoints matched by slug; a new secret in the fixture starts a rotation. An endpoint disabled by its
 * receiver's 410 Gone is enabled again when its URL or secret changes: the merchant has mended the receiver.
 */
export async function provisionWebhookEndpoints(
  { em, tenant, audit }: TenantScope,
  secretBox: SecretBox,
  fixtures: NonNullable<TenantFixture['webhookEndpoints']>,
): Promise<ProvisionedWebhookEndpoint[]> {
  const results: ProvisionedWebhookEndpoint[] = [];
  for (const fixture of fixtures) {
    if (fixture.secret !== undefined && !isUsableSigningSecret(fixture.secret)) {
      throw new DomainError('validation', `Webhook endpoint ${fixture.slug}: secret must be whsec_ followed by base64`, { field: 'webhookEndpoints.secret' });
    }
    const endpoint = await em.findOne(WebhookEndpoint, { tenant, slug: fixture.slug });
    const values = { url: fixture.url, eventTypes: fixture.eventTypes ?? [] };
    if (!endpoint) {
      const secret = fixture.secret ?? generateWebhookSecret();
      const created = em.create(WebhookEndpoint, { id: randomUUID(), tenant, slug: fixture.slug, ...values, secretCiphertext: secretBox.seal(secret) });
      audit('webhook_endpoint.created', 'WebhookEndpoint', created.id, values);
      results.push({ slug: created.slug, id: created.id, change: 'created', ...(fixture.secret ? {} : { secret }) });
      continue;
    }
    const [urlBefore, secretBefore] = [endpoint.url, endpoint.secretCiphertext];
    let change = assignChanges(endpoint, values);
    if (fixture.secret && secretBox.open(endpoint.secretCiphertext) !== fixture.secret) {
      // Rotation: keep signing with the old secret too until the receiver has switched.
      endpoint.previousSecretCiphertext = endpoint.secretCiphertext;
      endpoint.secretCiphertext = secretBox.seal(fixture.secret);
      change = 'updated';
    }
    // A receiver that answered 410 Gone is mended by a new address or secret; an endpoint disabled on request
    // (`disableWebhookEndpoint`, by the tenant or held by the operator) stays disabled until enabled on request.
    const gone = endpoint.disabledAt && endpoint.disabledReason === ENDPOINT_GONE_REASON && !endpoint.disabledByOperator;
    if (change !== 'unchanged' && gone && (endpoint.url !== urlBefore || endpoint.secretCiphertext !== secretBefore)) {
      endpoint.disabledAt = null;
      endpoint.disabledReason = null;
    }
    if (change !== 'unchanged') audit('webhook_endpoint.updated', 'WebhookEndpoint', endpoint.id, values);
    results.push({ slug: endpoint.slug, id: endpoint.id, change });
  }
  return results;
}
