import { Migration } from '@mikro-orm/migrations';

/**
 * Whether the operator disabled a webhook endpoint (a receiver that misbehaves, a tenant under review): such an
 * endpoint stays disabled until the operator enables it; the tenant's own enable is refused.
 */
export class Migration20261128000039_endpoint_operator_hold extends Migration {

  override name = 'Migration20261128000039_endpoint_operator_hold';

  override up(): void | Promise<void> {
    this.addSql(`alter table "webhook_endpoints" add column "disabled_by_operator" boolean not null default false;`);
    this.addSql(`alter table "webhook_endpoints" add constraint "webhook_endpoints_operator_hold_is_disabled" check (not "disabled_by_operator" or "disabled_at" is not null);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhook_endpoints" drop constraint "webhook_endpoints_operator_hold_is_disabled";`);
    this.addSql(`alter table "webhook_endpoints" drop column "disabled_by_operator";`);
  }

}
