import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Tenant } from '../../schema/entities/index.ts';
import { DomainError } from '../../domain/errors.ts';
import { assignChanges, type ChangeKind } from './changes.ts';
import type { TenantFixture } from './fixture.schema.ts';

/** Creates or updates the tenant itself, matched by slug; a clientId is never shared by two tenants. */
export async function upsertTenant(em: EntityManager, fixture: TenantFixture): Promise<{ tenant: Tenant; change: ChangeKind; values: Record<string, unknown> }> {
  const clash = await em.findOne(Tenant, { clientId: fixture.clientId, slug: { $ne: fixture.slug } });
  if (clash) throw new DomainError('conflict', `clientId ${fixture.clientId} already belongs to tenant ${clash.slug}`, { field: 'clientId' });

  const existing = await em.findOne(Tenant, { slug: fixture.slug });
  const values = {
    name: fixture.name,
    clientId: fixture.clientId,
    parentCompanyName: fixture.parentCompany ?? null,
    rateLimitPerMinute: fixture.rateLimitPerMinute ?? null,
    leadAllowedOrigins: fixture.leads?.allowedOrigins ?? existing?.leadAllowedOrigins ?? [],
    ...(fixture.email?.tenantKey ? { emailTenantKey: fixture.email.tenantKey } : {}),
  };
  if (!existing) {
    const tenant = em.create(Tenant, { slug: fixture.slug, emailTenantKey: randomUUID(), ...values });
    await em.flush();
    return { tenant, change: 'created', values };
  }
  const change = assignChanges(existing, values);
  await em.flush();
  return { tenant: existing, change, values };
}
