import { Migration } from '@mikro-orm/migrations';

/** The routine as this migration creates it (migration 000019 replaces it, and restores it when undone). */
export const RECORD_ATTEMPT_ROUTINE = `create function "routines"."record_attempt"(
  p_id uuid, p_order_id int, p_merchant_account_id int, p_reference text, p_attempt_number int, p_gateway text,
  p_gateway_transaction_id text, p_status_id int, p_status text, p_success boolean, p_amount numeric, p_currency text,
  p_mid text, p_descriptor text, p_auth_code text, p_email text, p_first_name text, p_last_name text,
  p_bin text, p_last4 text, p_brand text, p_bin_country text, p_card_fingerprint text, p_expiry_month int, p_expiry_year int,
  p_eci text, p_sandbox boolean, p_gateway_response jsonb, p_completed_at timestamptz, p_final boolean, p_order_state text,
  out transaction_id uuid, out was_success boolean)
language plpgsql volatile as $$
begin
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
    select t.id, t.success into transaction_id, was_success from transactions t where t.reference = p_reference for update;
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
 * One round trip to record an authorization attempt (issue 13): `routines.record_attempt` runs what was a
 * transaction of five round trips (begin, the attempt's upsert, the reservation's release, the approved volume,
 * commit), and, when the attempt's answer ends a payment without a plan, the order's final state with it.
 *
 * Whether the attempt was already recorded as approved (a run again after a crash) decides whether the approved
 * volume grows: the insert does nothing on a recorded reference and the row is then read locked, so a second run
 * that raced the first waits for it and sees its committed answer (the volume grows once).
 */
export class Migration20261124000018_attempt_routine extends Migration {

  override name = 'Migration20261124000018_attempt_routine';

  override up(): void | Promise<void> {
    this.addSql(RECORD_ATTEMPT_ROUTINE);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function if exists "routines"."record_attempt"(uuid, int, int, text, int, text, text, int, text, boolean, numeric, text, text, text, text, text, text, text, text, text, text, text, text, int, int, text, boolean, jsonb, timestamptz, boolean, text);`);
  }

}
