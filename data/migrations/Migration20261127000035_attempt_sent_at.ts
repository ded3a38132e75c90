import { Migration } from '@mikro-orm/migrations';
import { RECORD_ATTEMPT_ROUTINE_027 } from './Migration20261127000027_released_volume.ts';

/**
 * An attempt's `sent_at` is when its authorization went to the processor, as the mitigation search's `sent` and its
 * date filters say, not when its answer was recorded: `record_attempt` takes the time the caller sent it
 * (`p_sent_at`; the recording's own time when not given, as before). A slow processor's answer (ten seconds, a lost
 * answer asked about later) no longer moves the attempt's `sent` past its `completed`, nor across midnight. The old
 * signature is dropped in the same migration, so a worker of the previous build (calling without the new argument)
 * reaches this one by its default. Attempts recorded before keep the time they were recorded.
 */
export class Migration20261127000035_attempt_sent_at extends Migration {

  override name = 'Migration20261127000035_attempt_sent_at';

  override up(): void | Promise<void> {
    this.addSql(`drop function if exists "routines"."record_attempt"(uuid, int, int, text, int, text, text, int, text, boolean, numeric, text, text, text, text, text, text, text, text, text, text, text, text, int, int, text, boolean, jsonb, timestamptz, boolean, text);`);
    this.addSql(`create or replace function "routines"."record_attempt"(
  p_id uuid, p_order_id int, p_merchant_account_id int, p_reference text, p_attempt_number int, p_gateway text,
  p_gateway_transaction_id text, p_status_id int, p_status text, p_success boolean, p_amount numeric, p_currency text,
  p_mid text, p_descriptor text, p_auth_code text, p_email text, p_first_name text, p_last_name text,
  p_bin text, p_last4 text, p_brand text, p_bin_country text, p_card_fingerprint text, p_expiry_month int, p_expiry_year int,
  p_eci text, p_sandbox boolean, p_gateway_response jsonb, p_completed_at timestamptz, p_final boolean, p_order_state text,
  p_sent_at timestamptz default null,
  out transaction_id uuid, out was_success boolean, out already_settled boolean)
language plpgsql volatile as $$
declare
  v_reserved_month date;
  v_reserved_amount numeric;
  v_reserved_currency text;
  v_counted_month date;
begin
  already_settled := false;
  insert into transactions (id, tenant_id, order_id, product_id, customer_id, merchant_account_id, kind, reference, attempt_number, gateway,
    gateway_transaction_id, status_id, status, success, amount, currency, mid, descriptor, auth_code, email, first_name, last_name,
    bin, last4, brand, bin_country, card_fingerprint, expiry_month, expiry_year, eci, partner_session, sandbox, refundable, gateway_response, sent_at, completed_at)
  select p_id, o.tenant_id, o.id, o.product_id, o.customer_id, p_merchant_account_id, 'authorization', p_reference, p_attempt_number, p_gateway,
    p_gateway_transaction_id, p_status_id, p_status, p_success, p_amount, p_currency, p_mid, p_descriptor, p_auth_code, p_email, p_first_name, p_last_name,
    p_bin, p_last4, p_brand, p_bin_country, p_card_fingerprint, p_expiry_month, p_expiry_year, p_eci, o.partner_session, p_sandbox, p_success, p_gateway_response, coalesce(p_sent_at, now()), p_completed_at
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
    -- Counted where the cap let it through: the month and currency it was reserved in. The row keeps the month, so
    -- a void can give the room back (the currency is the order's, which the attempt is made in).
    v_counted_month := coalesce(v_reserved_month, date_trunc('month', now())::date);
    insert into merchant_account_volumes as v (merchant_account_id, month, currency, approved_amount, reserved_amount)
    values (p_merchant_account_id, v_counted_month, coalesce(v_reserved_currency, p_currency), p_amount, 0)
    on conflict (merchant_account_id, month, currency) do update set approved_amount = v.approved_amount + excluded.approved_amount;
    update transactions set volume_month = v_counted_month where id = transaction_id;
  end if;
  if p_order_state is not null then
    update orders set state = p_order_state, updated_at = now() where id = p_order_id;
  end if;
end $$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function if exists "routines"."record_attempt"(uuid, int, int, text, int, text, text, int, text, boolean, numeric, text, text, text, text, text, text, text, text, text, text, text, text, int, int, text, boolean, jsonb, timestamptz, boolean, text, timestamptz);`);
    this.addSql(RECORD_ATTEMPT_ROUTINE_027);
  }

}
