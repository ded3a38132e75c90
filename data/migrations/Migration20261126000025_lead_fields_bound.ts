import { Migration } from '@mikro-orm/migrations';

/**
 * A lead holds at most 50 CFA/D2D fields (`LEAD_LIMITS.trackingFields`), not 50 more with every write: the upsert
 * merged each write's fields into the stored ones without a bound, so a browser holding the publishable key could
 * grow one lead to megabytes (and every read and `customer_lead.paid` webhook carrying it). The merge now refuses a
 * result over the limit that adds names with SQLSTATE `LD001`, which the gateway answers 422; the upsert is otherwise
 * unchanged.
 */
const UPSERT_LEAD_MERGING = `create or replace function "routines"."upsert_lead"(
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
end $$;`;

export class Migration20261126000025_lead_fields_bound extends Migration {

  override name = 'Migration20261126000025_lead_fields_bound';

  override up(): void | Promise<void> {
    this.addSql(`create function "routines"."merge_tracking_fields"(p_stored jsonb, p_written jsonb)
returns jsonb language plpgsql immutable as $$
declare
  v_merged jsonb := p_stored || p_written;
  v_count int := (select count(*) from jsonb_object_keys(v_merged));
begin
  -- 50: LEAD_LIMITS.trackingFields (domain/leads/lead.ts). Only a write that adds names is refused: a lead grown
  -- past the limit before this migration can still be written, and its fields' values changed.
  if v_count > 50 and v_count > (select count(*) from jsonb_object_keys(p_stored)) then
    raise exception 'A lead holds at most 50 CFA/D2D fields' using errcode = 'LD001';
  end if;
  return v_merged;
end $$;`);
    this.addSql(`create or replace function "routines"."upsert_lead"(
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
     tracking_fields = routines.merge_tracking_fields(l.tracking_fields, excluded.tracking_fields),
     updated_at = now()
   where l.application_id = excluded.application_id and l.environment = excluded.environment
  returning l.id, l.session_id::text, l.status, l.created_at, l.updated_at, (l.xmax = 0);
end $$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(UPSERT_LEAD_MERGING);
    this.addSql(`drop function if exists "routines"."merge_tracking_fields"(jsonb, jsonb);`);
  }

}
