import { Migration } from '@mikro-orm/migrations';

/**
 * Fewer round trips per card submit (issue 13):
 * - `notify_catalog_change()`: every change of a product (insert, update, delete, truncate) sends a
 *   `catalog_changes` notification at commit, `<tenant id>/<product id>` (both the old and the new row of an
 *   update), or `*` for a truncate. The gateway caches the products it sells (services/catalog/product-cache.ts)
 *   and drops an entry when its notification arrives.
 * - `routines.screen_submit(...)`: the database checks of a submit in one call: blocklist hits, the live-subscription
 *   early answer, and the velocity claim (lock the card and the e-mail, count their recent submits against
 *   the product's limits, record this submit when under both), and, when asked, the submit order id of a submit
 *   that passed (`nextval('orders_id_seq')`, as `reserveOrderId` would). It is VOLATILE PL/pgSQL on purpose: in READ
 *   COMMITTED each statement inside it takes a new snapshot, so the counts, taken after the locks are held,
 *   see every attempt a submit that held the same locks before has committed (one plain statement would count
 *   from a snapshot taken before it waited for the lock). The locks are transaction-scoped: the single-statement
 *   transaction of the call commits the attempt before they are released. Which answer a hit or a count gives
 *   stays in TypeScript (services/payments/screening.ts), which reads the columns returned.
 *   It lives in its own schema, `routines`, outside `public`, whose routines MikroORM expects to be declared
 *   in its configuration (and would otherwise drop in a schema diff).
 * - The row trigger is declared on the `Product` entity as raw DDL (`expression`), so the schema diff knows it.
 *   The truncate trigger is invisible to MikroORM (information_schema lists no truncate triggers).
 */
export class Migration20261123000014_catalog_notify extends Migration {

  override name = 'Migration20261123000014_catalog_notify';

  override up(): void | Promise<void> {
    this.addSql(`create function "notify_catalog_change"() returns trigger language plpgsql as $$
begin
  if tg_op = 'TRUNCATE' then
    perform pg_notify('catalog_changes', '*');
    return null;
  end if;
  if tg_op in ('UPDATE', 'DELETE') then
    perform pg_notify('catalog_changes', old.tenant_id || '/' || old.id);
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    perform pg_notify('catalog_changes', new.tenant_id || '/' || new.id);
  end if;
  return null;
end $$;`);
    this.addSql(`create trigger "products_notify_catalog_change" after insert or update or delete on "products" for each row execute function "notify_catalog_change"();`);
    this.addSql(`create trigger "products_notify_catalog_truncate" after truncate on "products" for each statement execute function "notify_catalog_change"();`);

    this.addSql(`create schema "routines";`);
    this.addSql(`create function "routines"."screen_submit"(
  p_tenant_id int, p_product_id int, p_email text, p_card_fingerprint text, p_bin_prefixes text[], p_bin_country text,
  p_check_subscription boolean, p_card_lock text, p_email_lock text, p_now timestamptz, p_email_window_seconds int,
  p_reserve_order_id boolean)
returns table (tenant_blocks text[], platform_blocks text[], subscribed boolean, product_found boolean,
  card_count int, card_limit int, email_count int, email_limit int, recorded boolean, order_id bigint)
language plpgsql volatile as $$
declare
  v_card_window_seconds int;
begin
  select coalesce(array_agg(b.kind) filter (where b.tenant_id is not null), '{}'), coalesce(array_agg(b.kind) filter (where b.tenant_id is null), '{}')
    into tenant_blocks, platform_blocks
    from blocklist_entries b
   where (b.tenant_id is null or b.tenant_id = p_tenant_id)
     and ((b.kind = 'email' and b.value = p_email) or (b.kind = 'card' and b.value = p_card_fingerprint)
       or (b.kind = 'bin' and b.value = any(p_bin_prefixes)) or (b.kind = 'bin_country' and b.value = p_bin_country));
  recorded := false;
  if cardinality(tenant_blocks) + cardinality(platform_blocks) > 0 then
    return next;
    return;
  end if;

  if p_check_subscription then
    subscribed := exists (select 1 from subscriptions s
      where s.tenant_id = p_tenant_id and s.product_id = p_product_id and lower(s.email) = lower(p_email) and s.state in ('pending', 'active', 'grace'));
    if subscribed then
      return next;
      return;
    end if;
  end if;

  -- The limits as committed now, not as a cache remembers them.
  select p.card_submit_limit, p.card_submit_window_seconds, p.email_submit_limit into card_limit, v_card_window_seconds, email_limit
    from products p where p.id = p_product_id and p.tenant_id = p_tenant_id;
  product_found := found;
  if not product_found then
    return next;
    return;
  end if;

  -- Card first, then e-mail: two submits never wait on each other's locks.
  perform pg_advisory_xact_lock(hashtextextended(p_card_lock, 0));
  perform pg_advisory_xact_lock(hashtextextended(p_email_lock, 0));
  -- New snapshots from here on: these counts include every attempt recorded under the same locks before.
  select count(*) into card_count from submit_attempts s
   where s.tenant_id = p_tenant_id and s.card_fingerprint = p_card_fingerprint and s.created_at > p_now - make_interval(secs => v_card_window_seconds);
  select count(*) into email_count from submit_attempts s
   where s.product_id = p_product_id and s.email = p_email and s.created_at > p_now - make_interval(secs => p_email_window_seconds);
  if card_count < card_limit and email_count < email_limit then
    insert into submit_attempts (tenant_id, product_id, card_fingerprint, email, created_at) values (p_tenant_id, p_product_id, p_card_fingerprint, p_email, p_now);
    recorded := true;
    -- The submit order id of a submit that passed, when its caller has none yet: no round trip of its own.
    if p_reserve_order_id then
      order_id := nextval('orders_id_seq');
    end if;
  end if;
  return next;
end $$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function if exists "routines"."screen_submit"(int, int, text, text, text[], text, boolean, text, text, timestamptz, int, boolean);`);
    this.addSql(`drop schema if exists "routines";`);
    this.addSql(`drop trigger if exists "products_notify_catalog_truncate" on "products";`);
    this.addSql(`drop trigger if exists "products_notify_catalog_change" on "products";`);
    this.addSql(`drop function if exists "notify_catalog_change"();`);
  }

}
