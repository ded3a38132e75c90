import { Migration } from '@mikro-orm/migrations';

/**
 * A lead key reads the leads of its own environment only (a test key, test leads). Its unfiltered page needs them
 * newest first without passing the other environment's: a shop's test leads are few beside its live ones.
 */
export class Migration20261129000041_lead_environment_index extends Migration {

  override name = 'Migration20261129000041_lead_environment_index';

  override up(): void | Promise<void> {
    // `if not exists`: on a large table an operator builds it concurrently first, under this name (a migration runs
    // in one transaction, where `concurrently` cannot).
    this.addSql(`create index if not exists "customer_leads_tenant_environment_updated_index" on "customer_leads" ("tenant_id", "environment", "updated_at" desc, "id" desc);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "customer_leads_tenant_environment_updated_index";`);
  }

}
