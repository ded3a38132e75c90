import { Migration } from '@mikro-orm/migrations';
import { RESERVE_VOLUME_ROUTINE_021 } from './Migration20261126000021_volumes_per_currency.ts';

/**
 * The first reservations on an account's month and currency (the 1st of every month, a currency's first payment) could
 * be refused while the cap had room. The conditional update found no row; a concurrent reservation then created and
 * committed it; the check that followed ("does a row exist now?") saw it and answered "over the cap", though the update
 * had missed the row only because it was not yet there. Now a missed update always makes sure the row exists and tries
 * once more: that second update sees the row (its own insert, or the concurrent one it waited for), and only its
 * answer says whether the amount fits.
 */
export class Migration20261126000022_first_volume_row extends Migration {

  override name = 'Migration20261126000022_first_volume_row';

  override up(): void | Promise<void> {
    this.addSql(`drop function "routines"."reserve_volume"(int, int, text);`);
    this.addSql(`create function "routines"."reserve_volume"(p_order_id int, p_merchant_account_id int, p_reference text)
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
    -- Over the cap, or no row for the month and currency yet (or none when the update looked): the second round decides.
    if v_round = 2 then return false; end if;
    insert into merchant_account_volumes (merchant_account_id, month, currency, approved_amount, reserved_amount)
    values (p_merchant_account_id, v_month, v_currency, 0, 0)
    on conflict (merchant_account_id, month, currency) do nothing;
  end loop;
  return false;
end $$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function if exists "routines"."reserve_volume"(int, int, text);`);
    this.addSql(RESERVE_VOLUME_ROUTINE_021);
  }

}
