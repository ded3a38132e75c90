import { Migration } from '@mikro-orm/migrations';
import { RECORD_ATTEMPT_ROUTINE } from './Migration20261124000018_attempt_routine.ts';

/** The routines as this migration created them (migration 021 replaces them, and restores them on the way down). */
export const RESERVE_VOLUME_ROUTINE_019 = `create function "routines"."reserve_volume"(p_order_id int, p_merchant_account_id int, p_reference text)
returns boolean language plpgsql volatile as $$
declare
  v_amount numeric;
  v_held int;
  v_state text;
  v_month date := date_trunc('month', now())::date;
begin
  select o.amount, o.cap_reservation_id, o.state into v_amount, v_held, v_state from orders o where o.id = p_order_id for update;
  if not found then return false; end if;
  if v_held is not null then return v_held = p_merchant_account_id; end if;
  if v_state not in ('processing', 'pending_3ds') or exists (select 1 from transactions t where t.reference = p_reference) then
    return false;
  end if;
  for v_round in 1..2 loop
    update merchant_account_volumes v set reserved_amount = v.reserved_amount + v_amount
      from merchant_accounts m
     where m.id = p_merchant_account_id and v.merchant_account_id = m.id and v.month = v_month
       and (m.monthly_cap is null or v.approved_amount + v.reserved_amount + v_amount <= m.monthly_cap);
    if found then
      update orders set cap_reservation_id = p_merchant_account_id, cap_reservation_month = v_month where id = p_order_id;
      return true;
    end if;
    -- Over the cap, unless the account has no row for the month yet: then it is created and the update tried again.
    if v_round = 2 or exists (select 1 from merchant_account_volumes v where v.merchant_account_id = p_merchant_account_id and v.month = v_month) then
      return false;
    end if;
    insert into merchant_account_volumes (merchant_account_id, month, approved_amount, reserved_amount)
    values (p_merchant_account_id, v_month, 0, 0)
    on conflict (merchant_account_id, month) do nothing;
  end loop;
  return false;
end $$;`;

export const RECORD_ATTEMPT_ROUTINE_019 = `create function "routines"."record_attempt"(
  p_id uuid, p_order_id int, p_merchant_account_id int, p_reference text, p_attempt_number int, p_gateway text,
  p_gateway_transaction_id text, p_status_id int, p_status text, p_success boolean, p_amount numeric, p_currency text,
  p_mid text, p_descriptor text, p_auth_code text, p_email text, p_first_name text, p_last_name text,
  p_bin text, p_last4 text, p_brand text, p_bin_country text, p_card_fingerprint text, p_expiry_month int, p_expiry_year int,
  p_eci text, p_sandbox boolean, p_gateway_response jsonb, p_completed_at timestamptz, p_final boolean, p_order_state text,
  out transaction_id uuid, out was_success boolean, out already_settled boolean)
language plpgsql volatile as $$
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
    with released as (
      update orders o set cap_reservation_id = null, cap_reservation_month = null
        from orders previous
       where o.id = p_order_id and previous.id = o.id and o.cap_reservation_id = p_merchant_account_id
       returning previous.cap_reservation_id as merchant_account_id, previous.cap_reservation_month as month, o.amount)
    update merchant_account_volumes v set reserved_amount = v.reserved_amount - r.amount
      from released r
     where v.merchant_account_id = r.merchant_account_id and v.month = r.month;
  end if;
  if p_success and was_success is not true then
    insert into merchant_account_volumes as v (merchant_account_id, month, approved_amount, reserved_amount)
    values (p_merchant_account_id, date_trunc('month', now())::date, p_amount, 0)
    on conflict (merchant_account_id, month) do update set approved_amount = v.approved_amount + excluded.approved_amount;
  end if;
  if p_order_state is not null then
    update orders set state = p_order_state, updated_at = now() where id = p_order_id;
  end if;
end $$;`;

/**
 * Guards for a payment run that outlived its time limit (issue 13 review). A local activity that times out is not
 * stopped: it goes on beside the run the workflow starts next, so every step of a payment must be safe against a
 * second run of itself that is arbitrarily late.
 *
 * - `routines.reserve_volume`: a cap reservation in one round trip, deciding on the order's row locked first, so the
 *   checks after the lock see every committed change of that order (each PL/pgSQL statement takes a new snapshot).
 *   No new reservation for a closed order, nor for an attempt already recorded (its reservation ended with its
 *   record): a late run must never send that attempt to another merchant account, where the processor would see a
 *   new authorization. The account's month row is created on its first reservation, in the same call.
 * - `routines.record_attempt`: an attempt recorded with the processor's final word (approved, or declined with a
 *   status the processor gave) is kept as it is; a later run's answer changes nothing (`already_settled`), so an
 *   approval is never overwritten by an unknown answer and its amount is counted in the approved volume once. An
 *   attempt of an order that does not exist changes nothing (no volume counted).
 */
export class Migration20261124000019_attempt_guards extends Migration {

  override name = 'Migration20261124000019_attempt_guards';

  override up(): void | Promise<void> {
    this.addSql(RESERVE_VOLUME_ROUTINE_019);

    this.addSql(`drop function "routines"."record_attempt"(uuid, int, int, text, int, text, text, int, text, boolean, numeric, text, text, text, text, text, text, text, text, text, text, text, text, int, int, text, boolean, jsonb, timestamptz, boolean, text);`);
    this.addSql(RECORD_ATTEMPT_ROUTINE_019);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function if exists "routines"."reserve_volume"(int, int, text);`);
    this.addSql(`drop function if exists "routines"."record_attempt"(uuid, int, int, text, int, text, text, int, text, boolean, numeric, text, text, text, text, text, text, text, text, text, text, text, text, int, int, text, boolean, jsonb, timestamptz, boolean, text);`);
    this.addSql(RECORD_ATTEMPT_ROUTINE);
  }

}
