import type { SqlExecutor } from '../sql-executor.ts';

/** A security-code key as stored: wrapped under DATA_ENCRYPTION_KEY, with the end of its use. */
export interface StoredSecurityCodeKey {
  readonly wrappedKey: string;
  /** After this the key is destroyed: never handed out again, and deleted by the next retention pass. */
  readonly destroyAfter: Date;
}

/**
 * Stores the key of a sealing period unless one is stored already: every gateway sealing in that period proposes
 * one, the first to commit keeps it (the others then read it with `findSecurityCodeKey`).
 */
export async function proposeSecurityCodeKey(sql: SqlExecutor, key: { id: string; wrappedKey: string; sealingUntil: Date; destroyAfter: Date }): Promise<void> {
  await sql.execute(
    `insert into card_security_code_keys (id, wrapped_key, sealing_until, destroy_after) values (?, ?, ?, ?) on conflict (id) do nothing`,
    [key.id, key.wrappedKey, key.sealingUntil, key.destroyAfter],
  );
}

/** The key of that id while it may still be used (by the database's clock); undefined once it is due to be destroyed. */
export async function findSecurityCodeKey(sql: SqlExecutor, id: string): Promise<StoredSecurityCodeKey | undefined> {
  const [row] = await sql.execute<{ wrapped_key: string; destroy_after: Date }[]>(
    `select wrapped_key, destroy_after from card_security_code_keys where id = ? and destroy_after > now()`,
    [id],
  );
  return row ? { wrappedKey: row.wrapped_key, destroyAfter: new Date(row.destroy_after) } : undefined;
}
