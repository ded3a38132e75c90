import { Migration } from '@mikro-orm/migrations';

/**
 * Refunds that cannot end on their own (issue 12 review, H2/H3):
 * - `refunds.submitted_at`: set by the refund workflow before it first calls the processor. A request whose
 *   workflow could not be started undoes its refund (row and hold) only while this is null, in one conditional
 *   statement, so a workflow that did start after all finds no refund and sends nothing.
 * - `refunds.review_required_at`: the refund workflow gave up learning the processor's answer (the processor or
 *   its configuration refuses every inquiry, or stays away for days). The refund stays `pending` with its amount
 *   held, because the money may have moved; an operator settles it. Nothing resumes it automatically.
 * - `refunds.requested_amount`: the amount the request named (null: "what is left"), so a replay of its
 *   Idempotency-Key is compared with the request, not with the amount that was left then (review L1).
 */
export class Migration20261123000015_refund_recovery extends Migration {

  override name = 'Migration20261123000015_refund_recovery';

  override up(): void | Promise<void> {
    this.addSql(`alter table "refunds" add column "requested_amount" numeric(14,2) null, add column "submitted_at" timestamptz null, add column "review_required_at" timestamptz null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "refunds" drop column "requested_amount", drop column "submitted_at", drop column "review_required_at";`);
  }

}
