import { Migration } from '@mikro-orm/migrations';
import { RECORD_ATTEMPT_ROUTINE_019, RESERVE_VOLUME_ROUTINE_019 } from './Migration20261124000019_attempt_guards.ts';

/** `reserve_volume` as this migration made it (per currency); a later migration's `down` restores it. */
export const RESERVE_VOLUME_ROUTINE_021 = `create function "routines"."reserve_volume"(p_order_id int, p_merchant_account_id int, p_reference text)
returns boolean language plpgsql volatile as $$
declare
  v_amount numeric;
  v_currency text;
  v_held int;
  v_state text;
  v_month date := date_trunc('month', now())::date;
begin
  select o.amount, o.currency, o.cap_reservation_id, o.state into v_amount, v_currency, v_held, v_state from orders o where o.id = p_order_id for update;
  if not found then return false; end if;
  if v_held is not null then return v_held = p_merchant_account_id; end if;
  if v_state not in ('processing', 'pending_3ds') or exists (select 1 from transactions t where t.reference = p_reference) then
    return false;
  end if;
  for v_round in 1..2 loop
    update merchant_account_volumes v set reserved_amount = v.reserved_amount + v_amount
      from merchant_accounts m
     where m.id = p_merchant_account_id and v.merchant_account_id = m.id and v.month = v_month and v.currency = v_currency
       and (m.monthly_cap is null or v.approved_amount + v.reserved_amount + v_amount <= m.monthly_cap);
    if found then
      update orders set cap_reservation_id = p_merchant_account_id, cap_reservation_month = v_month where id = p_order_id;
      return true;
    end if;
    -- Over the cap, unless the account has no row for the month and currency yet: then it is created and the update tried again.
    if v_round = 2 or exists (select 1 from merchant_account_volumes v where v.merchant_account_id = p_merchant_account_id and v.month = v_month and v.currency = v_currency) then
      return false;
    end if;
    insert into merchant_account_volumes (merchant_account_id, month, currency, approved_amount, reserved_amount)
    values (p_merchant_account_id, v_month, v_currency, 0, 0)
    on conflict (merchant_account_id, month, currency) do nothing;
  end loop;
  return false;
end $$;`;

/** `record_attempt` as this migration made it (volumes per currency); a later migration's `down` restores it. */
export const RECORD_ATTEMPT_ROUTINE_021 = `create function "routines"."record_attempt"(
  p_id uuid, p_order_id int, p_merchant_account_id int, p_reference text, p_attempt_number int, p_gateway text,
  p_gateway_transaction_id text, p_status_id int, p_status text, p_success boolean, p_amount numeric, p_currency text,
  p_mid text, p_descriptor text, p_auth_code text, p_email text, p_first_name text, p_last_name text,
  p_bin text, p_last4 text, p_brand text, p_bin_country text, p_card_fingerprint text, p_expiry_month int, p_expiry_year int,
  p_eci text, p_sandbox boolean, p_gateway_response jsonb, p_completed_at timestamptz, p_final boolean, p_order_state text,
  out transaction_id uuid, out was_success boolean, out already_settled boolean)
language plpgsql volatile as $$
declare
  v_reserved_month date;
  v_reserved_amount numeric;
  v_reserved_currency text;
begin
  already_settled := false;
  insert into transactions (id, tenant_id, order_id, product_id, customer_id, merchant_account_id, kind, reference, attempt_number, gateway,
    gateway_transaction_id, status_id, status, success, amount, currency, mid, descriptor, auth_code, email, first_name, last_name,
    bin, last4, brand, bin_country, card_fingerprint, expiry_month, expiry_year, eci, partner_session, sandbox, refundable, gateway_response, sent_at, completed_at)
  select p_id, o.tenant_id, o.id, o.product_id, o.customer_id, p_merchant_account_id, 'authorization', p_reference, p_attempt_number, p_gateway,
    p_gateway_transaction_id, p_status_id, p_status, p_success, p_amount, p_currency, p_mid, p_descriptor, p_auth_code, p_email, p_first_name, p_last_name,
    p_bin, p_last4, p_brand, p_bin_country, p_card_fingerprint, p_expiry_month, p_expiry_year, p_eci, o.partner_session, p_sandbox, p_success, p_gateway_response, now(), p_completed_at
    from orders o where o.id = p_order_id
  on conflict (reference) do nothing
  returning id into transaction_id;
  if transaction_id is null then
    -- 4285: a timeout, recorded while the answer is unknown (an open challenge has no completion time yet).
    select t.id, t.success, t.success or (t.completed_at is not null and t.status_id <> 4285)
      into transaction_id, was_success, already_settled
      from transactions t where t.reference = p_reference for update;
    if transaction_id is null or already_settled then return; end if;
    update transactions t set gateway_transaction_id = coalesce(p_gateway_transaction_id, t.gateway_transaction_id), status_id = p_status_id,
      status = p_status, success = p_success, auth_code = p_auth_code, eci = p_eci, refundable = p_success, gateway_response = p_gateway_response,
      completed_at = p_completed_at
     where t.id = transaction_id;
  end if;
  if p_final then
    update orders o set cap_reservation_id = null, cap_reservation_month = null
      from orders previous
     where o.id = p_order_id and previous.id = o.id and o.cap_reservation_id = p_merchant_account_id
     returning previous.cap_reservation_month, o.amount, o.currency into v_reserved_month, v_reserved_amount, v_reserved_currency;
    if v_reserved_month is not null then
      update merchant_account_volumes v set reserved_amount = v.reserved_amount - v_reserved_amount
       where v.merchant_account_id = p_merchant_account_id and v.month = v_reserved_month and v.currency = v_reserved_currency;
    end if;
  end if;
  if p_success and was_success is not true then
    -- Counted where the cap let it through: the month and currency it was reserved in.
    insert into merchant_account_volumes as v (merchant_account_id, month, currency, approved_amount, reserved_amount)
    values (p_merchant_account_id, coalesce(v_reserved_month, date_trunc('month', now())::date), coalesce(v_reserved_currency, p_currency), p_amount, 0)
    on conflict (merchant_account_id, month, currency) do update set approved_amount = v.approved_amount + excluded.approved_amount;
  end if;
  if p_order_state is not null then
    update orders set state = p_order_state, updated_at = now() where id = p_order_id;
  end if;
end $$;`;

/**
 * A merchant account's monthly volume per currency. One total per account and month added every currency's amounts
 * as if they were one (60.00 JPY and 60.00 USD made 120 against a cap of 100), so `monthlyCap` now limits each
 * currency's volume in that currency's units, as `maxPrice` limits each payment in its own. The totals are rebuilt
 * from what they count, per currency: approved authorizations by the month they were sent in, and the reservations
 * orders hold. Deploy it with the gateways and workers of before stopped: their statements know no currency.
 *
 * The routines read the order's currency beside its amount; `record_attempt` also counts an approval in the month
 * its reservation was taken in (an attempt in flight at midnight on the 1st counted in the new month, on top of that
 * month's reservations).
 */
export class Migration20261126000021_volumes_per_currency extends Migration {

  override name = 'Migration20261126000021_volumes_per_currency';

  override up(): void | Promise<void> {
    this.addSql(`delete from "merchant_account_volumes";`);
    this.addSql(`alter table "merchant_account_volumes" add column "currency" varchar(3) not null;`);
    this.addSql(`alter table "merchant_account_volumes" drop constraint "merchant_account_volumes_pkey";`);
    this.addSql(`alter table "merchant_account_volumes" add constraint "merchant_account_volumes_pkey" primary key ("merchant_account_id", "month", "currency");`);
    this.addSql(`insert into "merchant_account_volumes" ("merchant_account_id", "month", "currency", "approved_amount", "reserved_amount")
      select "merchant_account_id", "month", "currency", sum("approved"), sum("reserved") from (
        select t."merchant_account_id", date_trunc('month', t."sent_at")::date, t."currency", t."amount", 0
          from "transactions" t where t."kind" = 'authorization' and t."success" and t."merchant_account_id" is not null
        union all
        select o."cap_reservation_id", o."cap_reservation_month", o."currency", 0, o."amount"
          from "orders" o where o."cap_reservation_id" is not null and o."cap_reservation_month" is not null
      ) as "counted" ("merchant_account_id", "month", "currency", "approved", "reserved")
      group by "merchant_account_id", "month", "currency";`);

    this.addSql(`drop function "routines"."reserve_volume"(int, int, text);`);
    this.addSql(RESERVE_VOLUME_ROUTINE_021);

    this.addSql(`drop function "routines"."record_attempt"(uuid, int, int, text, int, text, text, int, text, boolean, numeric, text, text, text, text, text, text, text, text, text, text, text, text, int, int, text, boolean, jsonb, timestamptz, boolean, text);`);
    this.addSql(RECORD_ATTEMPT_ROUTINE_021);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function if exists "routines"."reserve_volume"(int, int, text);`);
    this.addSql(`drop function if exists "routines"."record_attempt"(uuid, int, int, text, int, text, text, int, text, boolean, numeric, text, text, text, text, text, text, text, text, text, text, text, text, int, int, text, boolean, jsonb, timestamptz, boolean, text);`);
    this.addSql(`alter table "merchant_account_volumes" drop constraint "merchant_account_volumes_pkey";`);
    // Each account's currencies become one total again, as before.
    this.addSql(`create temporary table "volumes_of_before" as
      select "merchant_account_id", "month", sum("approved_amount") as "approved_amount", sum("reserved_amount") as "reserved_amount"
        from "merchant_account_volumes" group by "merchant_account_id", "month";`);
    this.addSql(`delete from "merchant_account_volumes";`);
    this.addSql(`alter table "merchant_account_volumes" drop column "currency";`);
    this.addSql(`insert into "merchant_account_volumes" select "merchant_account_id", "month", "approved_amount", "reserved_amount" from "volumes_of_before";`);
    this.addSql(`drop table "volumes_of_before";`);
    this.addSql(`alter table "merchant_account_volumes" add constraint "merchant_account_volumes_pkey" primary key ("merchant_account_id", "month");`);
    this.addSql(RESERVE_VOLUME_ROUTINE_019);
    this.addSql(RECORD_ATTEMPT_ROUTINE_019);
  }

}
