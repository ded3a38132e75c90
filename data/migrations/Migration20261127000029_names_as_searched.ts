import { Migration } from '@mikro-orm/migrations';

/**
 * The names of a transaction are kept as a search finds them: without the spaces around them and in one Unicode form
 * (NFC), as the gateway now writes them. Names written before as sent (`Ada ` from a checkout form) could not be found
 * by any search; they are brought to that form here. Nothing to undo on the way down.
 */
export class Migration20261127000029_names_as_searched extends Migration {

  override name = 'Migration20261127000029_names_as_searched';

  override up(): void | Promise<void> {
    for (const column of ['first_name', 'last_name']) {
      this.addSql(`update "transactions" set "${column}" = nullif(normalize(regexp_replace("${column}", '^\\s+|\\s+$', '', 'g'), NFC), '')
        where "${column}" is not null and "${column}" is distinct from nullif(normalize(regexp_replace("${column}", '^\\s+|\\s+$', '', 'g'), NFC), '');`);
    }
  }

  override down(): void | Promise<void> {}

}
