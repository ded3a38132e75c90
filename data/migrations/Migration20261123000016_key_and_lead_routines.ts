import { Migration } from '@mikro-orm/migrations';

/**
 * Fewer CPU cycles per lead write and per key (issue 9, issue 13). MikroORM sends every statement as text with
 * its values inlined, so PostgreSQL parsed and planned the key-and-admission CTE and the lead upsert for every
 * request: measured with pgbench at concurrency 32, planning was half of the admission's cost and a third of the
 * upsert's. PL/pgSQL keeps the plans of its statements for the session, so the hot statements move into routines
 * (schema `routines`, beside `screen_submit`), and each request sends one short call instead:
 * - `count_request(subject, limit, window…)`: the sliding-window admission (DESIGN rate limits): counts the
 *   request only when `current + 1 + previous × weight <= limit` holds on the locked row, so concurrent gateways
 *   never admit more than the limit; answers whether it was admitted and the counts before it.
 * - `admit_api_key(…)` and `admit_lead_key(…)`: the key's row and its admission in one call (an unknown key
 *   answers no row; a publishable key from a foreign origin is not counted).
 * - `upsert_lead(…)`: the lead upsert of one session, unchanged (`on conflict (tenant_id, session_id)`).
 * The filter indexes on `transaction_id` and `subscription_id` become partial (`is not null`): nine leads in ten
 * have neither, and every write maintained both for rows no such filter can find.
 */
export class Migration20261123000016_key_and_lead_routines extends Migration {

  override name = 'Migration20261123000016_key_and_lead_routines';

  override up(): void | Promise<void> {
    this.addSql(`create function "routines"."count_request"(
  p_subject text, p_limit int, p_window_start timestamptz, p_previous_window_start timestamptz, p_previous_weight double precision,
  out admitted boolean, out current_count int, out previous_count int)
language plpgsql volatile as $$
declare
  v_count int;
begin
  previous_count := coalesce((select w.request_count from rate_limit_windows w where w.subject = p_subject and w.window_start = p_previous_window_start), 0);
  insert into rate_limit_windows as w (subject, window_start, request_count)
  select p_subject, p_window_start, 1 where 1 + previous_count * p_previous_weight <= p_limit
  on conflict (subject, window_start) do update set request_count = w.request_count + 1
   where w.request_count + 1 + previous_count * p_previous_weight <= p_limit
  returning w.request_count into v_count;
  admitted := v_count is not null;
  if admitted then
    current_count := v_count - 1;
  else
    current_count := coalesce((select w.request_count from rate_limit_windows w where w.subject = p_subject and w.window_start = p_window_start), 0);
  end if;
end $$;`);

    this.addSql(`create function "routines"."admit_api_key"(
  p_key_hash text, p_default_limit int, p_window_start timestamptz, p_previous_window_start timestamptz, p_previous_weight double precision)
returns table (id int, tenant_id int, client_id text, rate_limit_per_minute int, subject text, rate_limit int,
  admitted boolean, current_count int, previous_count int)
language plpgsql volatile as $$
begin
  select k.id, k.tenant_id, t.client_id, t.rate_limit_per_minute into id, tenant_id, client_id, rate_limit_per_minute
    from api_keys k join tenants t on t.id = k.tenant_id
   where k.key_hash = p_key_hash and k.revoked_at is null;
  if not found then
    return;
  end if;
  subject := 'api-key:' || id;
  rate_limit := coalesce(rate_limit_per_minute, p_default_limit);
  select c.admitted, c.current_count, c.previous_count into admitted, current_count, previous_count
    from routines.count_request(subject, rate_limit, p_window_start, p_previous_window_start, p_previous_weight) c;
  return next;
end $$;`);

    this.addSql(`create function "routines"."admit_lead_key"(
  p_kind text, p_key_hash text, p_client_address text, p_origin text, p_default_limit int,
  p_window_start timestamptz, p_previous_window_start timestamptz, p_previous_weight double precision)
returns table (id int, tenant_id int, application_id int, environment text, lead_allowed_origins text[], rate_limit_per_minute int,
  subject text, rate_limit int, counted boolean, admitted boolean, current_count int, previous_count int)
language plpgsql volatile as $$
begin
  -- Two statements, not one with a computed column: each keeps its own plan on its own unique index.
  if p_kind = 'secret' then
    select k.id, k.tenant_id, k.application_id, k.environment, a.lead_allowed_origins, t.rate_limit_per_minute
      into id, tenant_id, application_id, environment, lead_allowed_origins, rate_limit_per_minute
      from lead_key_sets k join applications a on a.id = k.application_id join tenants t on t.id = k.tenant_id
     where k.secret_key_hash = p_key_hash;
  else
    select k.id, k.tenant_id, k.application_id, k.environment, a.lead_allowed_origins, t.rate_limit_per_minute
      into id, tenant_id, application_id, environment, lead_allowed_origins, rate_limit_per_minute
      from lead_key_sets k join applications a on a.id = k.application_id join tenants t on t.id = k.tenant_id
     where k.publishable_key_hash = p_key_hash;
  end if;
  if not found then
    return;
  end if;
  rate_limit := coalesce(rate_limit_per_minute, p_default_limit);
  if p_kind = 'secret' then
    subject := 'lead-sk:' || id;
    counted := true;
  else
    -- Every browser shares the publishable key: its requests are counted per caller address.
    subject := 'lead-pk:' || id || ':' || p_client_address;
    counted := coalesce(p_origin = any(lead_allowed_origins), false);
  end if;
  if counted then
    select c.admitted, c.current_count, c.previous_count into admitted, current_count, previous_count
      from routines.count_request(subject, rate_limit, p_window_start, p_previous_window_start, p_previous_weight) c;
  else
    admitted := false;
    current_count := 0;
    previous_count := 0;
  end if;
  return next;
end $$;`);

    this.addSql(`create function "routines"."upsert_lead"(
  p_id uuid, p_tenant_id int, p_application_id int, p_environment text, p_session_id text, p_email text,
  p_first_name text, p_last_name text, p_phone text, p_scans jsonb, p_pending_data jsonb, p_tracking_fields jsonb)
returns table (id uuid, session_id text, status text, created_at timestamptz, updated_at timestamptz, created boolean)
language plpgsql volatile as $$
#variable_conflict use_column
begin
  return query
  insert into customer_leads as l (id, tenant_id, application_id, environment, session_id, email, first_name, last_name, phone,
                                   scans, pending_data, tracking_fields, status, created_at, updated_at)
  values (p_id, p_tenant_id, p_application_id, p_environment, p_session_id, p_email, p_first_name, p_last_name, p_phone,
          coalesce(p_scans, '[]'::jsonb), p_pending_data, p_tracking_fields, 'lead', now(), now())
  on conflict (tenant_id, session_id) do update set
     email = excluded.email,
     first_name = coalesce(excluded.first_name, l.first_name),
     last_name = coalesce(excluded.last_name, l.last_name),
     phone = coalesce(excluded.phone, l.phone),
     scans = coalesce(p_scans, l.scans),
     pending_data = coalesce(excluded.pending_data, l.pending_data),
     tracking_fields = l.tracking_fields || excluded.tracking_fields,
     updated_at = now()
   where l.application_id = excluded.application_id and l.environment = excluded.environment
  returning l.id, l.session_id::text, l.status, l.created_at, l.updated_at, (l.xmax = 0);
end $$;`);

    // New names, built before the full indexes go: on a large table an operator builds them concurrently first
    // (`create index concurrently`, which cannot run in the migrations' transaction) under these names.
    this.addSql(`create index if not exists "customer_leads_tenant_transaction_paid_index" on "customer_leads" ("tenant_id", "transaction_id", "updated_at" desc, "id" desc) where "transaction_id" is not null;`);
    this.addSql(`create index if not exists "customer_leads_tenant_subscription_paid_index" on "customer_leads" ("tenant_id", "subscription_id", "updated_at" desc, "id" desc) where "subscription_id" is not null;`);
    this.addSql(`drop index if exists "customer_leads_tenant_transaction_updated_index";`);
    this.addSql(`drop index if exists "customer_leads_tenant_subscription_updated_index";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`create index if not exists "customer_leads_tenant_subscription_updated_index" on "customer_leads" ("tenant_id", "subscription_id", "updated_at" desc, "id" desc);`);
    this.addSql(`create index if not exists "customer_leads_tenant_transaction_updated_index" on "customer_leads" ("tenant_id", "transaction_id", "updated_at" desc, "id" desc);`);
    this.addSql(`drop index if exists "customer_leads_tenant_subscription_paid_index";`);
    this.addSql(`drop index if exists "customer_leads_tenant_transaction_paid_index";`);
    this.addSql(`drop function if exists "routines"."upsert_lead"(uuid, int, int, text, text, text, text, text, text, jsonb, jsonb, jsonb);`);
    this.addSql(`drop function if exists "routines"."admit_lead_key"(text, text, text, text, int, timestamptz, timestamptz, double precision);`);
    this.addSql(`drop function if exists "routines"."admit_api_key"(text, int, timestamptz, timestamptz, double precision);`);
    this.addSql(`drop function if exists "routines"."count_request"(text, int, timestamptz, timestamptz, double precision);`);
  }

}
