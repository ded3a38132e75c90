import { Migration } from '@mikro-orm/migrations';

/**
 * Idempotency keys claimed before this migration hold an unkeyed SHA-256 of the whole request, card
 * included: from a database read the card could be recovered by brute force. The digest cannot be
 * recomputed under the new key (the request is not stored), so it is overwritten: a repeat of such a key
 * answers 409 (its request can no longer be verified), never a second charge.
 */
export class Migration20261122000009_keyed_request_hashes extends Migration {

  override name = 'Migration20261122000009_keyed_request_hashes';

  override up(): void | Promise<void> {
    this.addSql(`update "idempotency_keys" set "request_hash" = 'unverifiable: claimed before keyed request digests';`);
  }

  override down(): void | Promise<void> {}

}
