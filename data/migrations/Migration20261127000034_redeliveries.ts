import { Migration } from '@mikro-orm/migrations';

/**
 * A failed delivery may be sent again on request (`redeliverWebhook`), each time as a run of its own:
 * - `redeliveries`: the runs after the first (the current run's number, which names its workflow
 *   `webhook/<id>/again-<n>` and which a run's steps must still match: a late step of an earlier run changes nothing);
 * - `redelivered_at`: when the current run was asked for; `attempts_before_run`: the attempts made before it, which its
 *   own are numbered after.
 * The unstarted-deliveries sweep now reads runs not attempted yet (`attempt_count = attempts_before_run`), by when they
 * were asked for (index `webhook_deliveries_unstarted_runs_index`, replacing migration 033's), so a redelivery whose
 * start the gateway could not make is started as a first delivery is. A tenant's deliveries in one state
 * (`webhookDeliveries(state:)`) are read through an index of their own.
 */
export class Migration20261127000034_redeliveries extends Migration {

  override name = 'Migration20261127000034_redeliveries';

  override up(): void | Promise<void> {
    this.addSql(`alter table "webhook_deliveries" add column "redeliveries" int not null default 0, add column "redelivered_at" timestamptz null, add column "attempts_before_run" int not null default 0;`);
    // `if not exists`: on a large table an operator builds both concurrently first, under these names (a migration
    // runs in one transaction, where `concurrently` cannot). The sweep's index holds a few rows at any time.
    this.addSql(`create index if not exists "webhook_deliveries_unstarted_runs_index" on "webhook_deliveries" ((coalesce("redelivered_at", "created_at"))) where state = 'pending' and swept_at is null and attempt_count = attempts_before_run;`);
    this.addSql(`drop index if exists "webhook_deliveries_unstarted_index";`);
    this.addSql(`create index if not exists "webhook_deliveries_tenant_state_index" on "webhook_deliveries" ("tenant_id", "state", "created_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "webhook_deliveries_tenant_state_index";`);
    this.addSql(`drop index if exists "webhook_deliveries_unstarted_runs_index";`);
    this.addSql(`alter table "webhook_deliveries" drop column if exists "redeliveries", drop column if exists "redelivered_at", drop column if exists "attempts_before_run";`);
    this.addSql(`create index "webhook_deliveries_unstarted_index" on "webhook_deliveries" ("created_at") where state = 'pending' and attempt_count = 0 and swept_at is null;`);
  }

}
