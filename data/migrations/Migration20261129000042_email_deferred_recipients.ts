import { Migration } from '@mikro-orm/migrations';

/**
 * What a deferral left of an e-mail (some recipients took it, another answered 4xx) is kept with the e-mail, not only
 * in the delivery attempt's result: a worker lost before returning that result left the retried attempt to send the
 * e-mail to every recipient again, those who already had it included. Rows written before keep null / false / [] and
 * are read as before (the workflow's own record of the deferral still counts).
 */
export class Migration20261129000042_email_deferred_recipients extends Migration {

  override name = 'Migration20261129000042_email_deferred_recipients';

  override up(): void | Promise<void> {
    this.addSql(`alter table "emails" add column "retry_recipients" jsonb null, add column "delivered_to_someone" boolean not null default false, add column "undelivered_recipients" jsonb not null default '[]';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "emails" drop column "retry_recipients", drop column "delivered_to_someone", drop column "undelivered_recipients";`);
  }

}
