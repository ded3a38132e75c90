import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Application, Tenant } from '../../schema/entities/index.ts';
import { DomainError } from '../../domain/errors.ts';
import { canonicalOrigin } from '../../domain/leads/origins.ts';
import { assignChanges, type ChangeKind } from './changes.ts';
import type { TenantFixture } from './fixture.schema.ts';

/** The application a tenant provisioned without any gets, so products and lead keys always have one. */
export const DEFAULT_APPLICATION_SLUG = 'default';

/**
 * Creates or updates the tenant itself, matched by slug, with its applications (storefronts); a clientId is never
 * shared by two tenants. Application changes count as changes of the tenant (one audit entry names them).
 */
export async function upsertTenant(em: EntityManager, fixture: TenantFixture): Promise<{ tenant: Tenant; change: ChangeKind; values: Record<string, unknown> }> {
  const clash = await em.findOne(Tenant, { clientId: fixture.clientId, slug: { $ne: fixture.slug } });
  if (clash) throw new DomainError('conflict', `clientId ${fixture.clientId} already belongs to tenant ${clash.slug}`, { field: 'clientId' });

  const existing = await em.findOne(Tenant, { slug: fixture.slug });
  const values: Record<string, unknown> = {
    name: fixture.name,
    clientId: fixture.clientId,
    // A setting left out of a fixture keeps its value (fixtures add and update): a fixture that only adds an endpoint
    // must not throttle a tenant back to the default rate limit. A null rate limit asks for the default.
    ...(fixture.parentCompany !== undefined ? { parentCompanyName: fixture.parentCompany } : {}),
    ...(fixture.rateLimitPerMinute !== undefined ? { rateLimitPerMinute: fixture.rateLimitPerMinute } : {}),
    ...(fixture.email?.tenantKey ? { emailTenantKey: fixture.email.tenantKey } : {}),
  };
  let tenant: Tenant;
  let change: ChangeKind;
  if (!existing) {
    tenant = em.create(Tenant, { slug: fixture.slug, emailTenantKey: randomUUID(), ...(values as { name: string; clientId: string }) });
    change = 'created';
  } else {
    tenant = existing;
    change = assignChanges(existing, values);
  }
  const applications = await upsertApplications(em, tenant, fixture);
  if (applications.length > 0) {
    values.applications = applications;
    if (change === 'unchanged') change = 'updated';
  }
  await em.flush();
  return { tenant, change, values };
}

/**
 * The fixture's applications matched by slug (none given: one `default`). The first application takes the
 * allowed origins of the fixture's `leads` block when it declares none itself (fixtures written before
 * applications existed). Applications missing from a later fixture are kept: products may still belong to them.
 */
async function upsertApplications(em: EntityManager, tenant: Tenant, fixture: TenantFixture): Promise<{ slug: string; change: ChangeKind }[]> {
  const declared = fixture.applications?.length ? fixture.applications : [{ slug: DEFAULT_APPLICATION_SLUG, name: fixture.name }];
  const changed: { slug: string; change: ChangeKind }[] = [];
  for (const app of declared) {
    const leadsTarget = (fixture.leads?.application ?? declared[0]!.slug) === app.slug;
    const origins = 'allowedOrigins' in app && app.allowedOrigins ? app.allowedOrigins : leadsTarget ? fixture.leads?.allowedOrigins : undefined;
    const values = { name: app.name, ...(origins ? { leadAllowedOrigins: canonicalOrigins(origins) } : {}) };
    // A tenant created by this run has no applications yet (and no id to look them up by).
    const existing = tenant.id === undefined ? null : await em.findOne(Application, { tenant, slug: app.slug });
    if (!existing) {
      em.create(Application, { tenant, slug: app.slug, ...values });
      changed.push({ slug: app.slug, change: 'created' });
    } else {
      const change = assignChanges(existing, values);
      if (change !== 'unchanged') changed.push({ slug: app.slug, change });
    }
  }
  return changed;
}

/** Allowed origins as browsers send them (the fixture's pattern admits `https://Shop.example:443`, which none sends). */
function canonicalOrigins(origins: readonly string[]): string[] {
  return [
    ...new Set(
      origins.map((origin) => {
        const canonical = canonicalOrigin(origin);
        if (canonical === undefined) throw new DomainError('validation', `Allowed origin ${origin.slice(0, 300)} must be scheme://host[:port] with a host name or IP address (no wildcard), as browsers send Origin`, { field: 'allowedOrigins' });
        return canonical;
      }),
    ),
  ];
}

/** The application a product or lead key pair belongs to: the named one, else the tenant's first (its oldest). */
export async function applicationOf(em: EntityManager, tenant: Tenant, slug: string | undefined): Promise<Application> {
  const application = slug ? await em.findOne(Application, { tenant, slug }) : await em.findOne(Application, { tenant }, { orderBy: { id: 'asc' } });
  if (!application) throw new DomainError('validation', `Unknown application ${slug ?? ''}: declare it in the tenant's applications`, { field: 'application' });
  return application;
}
