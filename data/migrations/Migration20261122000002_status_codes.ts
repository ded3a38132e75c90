import { Migration } from '@mikro-orm/migrations';
import { STATUS_CODES } from '../../domain/statuses/status-codes.ts';

/** Seeds the status-code reference of spec 7.5; a later change of the list gets its own migration. */
export class Migration20261122000002_status_codes extends Migration {
  override name = 'Migration20261122000002_status_codes';

  override async up(): Promise<void> {
    const columns = ['id', 'status', 'successful', 'is_gateway_level_status', 'is_issuer_decline', 'is_insufficient_funds', 'is_invalid_card_details', 'is_other'];
    const params: unknown[] = [];
    const rows = STATUS_CODES.map((code) => {
      params.push(
        code.id,
        code.status,
        code.group === 'successful',
        code.isGatewayLevelStatus,
        code.group === 'issuerDecline',
        code.group === 'insufficientFunds',
        code.group === 'invalidCardDetails',
        code.group === 'other',
      );
      return `(${columns.map(() => '?').join(', ')})`;
    });
    await this.execute(`insert into "status_codes" (${columns.map((c) => `"${c}"`).join(', ')}) values ${rows.join(', ')}`, params);
    // Case-insensitive search on the description (the status list `search` parameter).
    this.addSql(`create index "status_codes_status_lower_index" on "status_codes" (lower("status"))`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "status_codes_status_lower_index"`);
    this.addSql(`delete from "status_codes"`);
  }
}
