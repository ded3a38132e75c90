import { Migration } from '@mikro-orm/migrations';

/**
 * Leads are found by e-mail whatever its case (`Ann@Example.com` by `ann@example.com`), as payments and the mitigation
 * search find e-mails: the e-mail filter compares `lower(email)`, and its index follows. The lead keeps the e-mail as
 * written. On a large table an operator builds the new index concurrently first, under this name.
 */
export class Migration20261126000026_lead_email_any_case extends Migration {

  override name = 'Migration20261126000026_lead_email_any_case';

  override up(): void | Promise<void> {
    this.addSql(`create index if not exists "customer_leads_tenant_lower_email_updated_index" on "customer_leads" ("tenant_id", lower("email"), "updated_at" desc, "id" desc);`);
    this.addSql(`drop index if exists "customer_leads_tenant_email_updated_index";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`create index if not exists "customer_leads_tenant_email_updated_index" on "customer_leads" ("tenant_id", "email", "updated_at" desc, "id" desc);`);
    this.addSql(`drop index if exists "customer_leads_tenant_lower_email_updated_index";`);
  }

}
