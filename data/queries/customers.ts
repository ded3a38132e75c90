import type { EntityManager } from '@mikro-orm/postgresql';

/** The tenant's customer for an e-mail, created on first sight; names and phone given later fill in or replace earlier ones. */
export async function upsertCustomer(
  em: EntityManager,
  customer: { tenantId: number; email: string; firstName?: string; lastName?: string; phone?: string },
): Promise<number> {
  const [row] = await em.execute<{ id: number }[]>(
    `insert into customers (tenant_id, email, first_name, last_name, phone, created_at, updated_at) values (?, ?, ?, ?, ?, now(), now())
     on conflict (tenant_id, email) do update set first_name = coalesce(excluded.first_name, customers.first_name),
       last_name = coalesce(excluded.last_name, customers.last_name), phone = coalesce(excluded.phone, customers.phone), updated_at = now()
     returning id`,
    [customer.tenantId, customer.email, customer.firstName ?? null, customer.lastName ?? null, customer.phone ?? null],
  );
  return row!.id;
}
