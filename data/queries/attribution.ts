import type { EntityManager } from '@mikro-orm/postgresql';

/** The id of the tenant's campaign of this name, created on first use. */
export function ensureCampaign(em: EntityManager, tenantId: number, name: string): Promise<number> {
  return ensureNamed(em, 'campaigns', tenantId, name);
}

/** The id of the tenant's affiliate of this name, created on first use. */
export function ensureAffiliate(em: EntityManager, tenantId: number, name: string): Promise<number> {
  return ensureNamed(em, 'affiliates', tenantId, name);
}

async function ensureNamed(em: EntityManager, table: 'campaigns' | 'affiliates', tenantId: number, name: string): Promise<number> {
  // `do update` rather than `do nothing`, so that RETURNING yields the existing row's id too.
  const [row] = await em.execute<{ id: number }[]>(
    `insert into ${table} (tenant_id, name, created_at) values (?, ?, now()) on conflict (tenant_id, name) do update set name = excluded.name returning id`,
    [tenantId, name.trim()],
  );
  return row!.id;
}
