import { Migration } from '@mikro-orm/migrations';

/** What JavaScript's `trim()` takes off (its white space and line terminators), as a class of PostgreSQL's regular expressions. */
const SPACE = String.raw`[\s\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]`;

/**
 * The names of a transaction are kept as a search finds them: without the spaces around them and in one Unicode form
 * (NFC), as the gateway now writes them. Names written before as sent (`Ada ` from a checkout form) could not be found
 * by any search; they are brought to that form here. Nothing to undo on the way down.
 */
export class Migration20261127000029_names_as_searched extends Migration {

  override name = 'Migration20261127000029_names_as_searched';

  override up(): void | Promise<void> {
    for (const column of ['first_name', 'last_name']) {
      const kept = `nullif(normalize(regexp_replace("${column}", '^${SPACE}+|${SPACE}+$', '', 'g'), NFC), '')`;
      this.addSql(`update "transactions" set "${column}" = ${kept} where "${column}" is not null and "${column}" is distinct from ${kept};`);
    }
  }

  override down(): void | Promise<void> {}

}
