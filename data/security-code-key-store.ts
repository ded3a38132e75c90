import { randomBytes } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { KeyWrapper, SecurityCodeKey, SecurityCodeKeys } from '../domain/crypto/card-vault.ts';
import { findSecurityCodeKey, proposeSecurityCodeKey } from './queries/security-code-keys.ts';
import { poolExecutor } from './sql-executor.ts';

/** Security codes sealed within one period share its key: one key statement per period and process, not per payment. */
export const SECURITY_CODE_SEALING_PERIOD_MS = 15 * 60_000;
/**
 * How long after its sealing period a key may still open what it sealed: a payment's first step, a cascade, or an
 * authorization sent again after a lost answer. Later the card is sent without its security code (as a rebill is).
 */
export const SECURITY_CODE_KEY_GRACE_MS = 30 * 60_000;

/**
 * The security-code keys of `CardVault`, kept in `card_security_code_keys` (wrapped) and in each process's memory
 * until they are due to be destroyed; the retention pass deletes them from the table then. Each sealing period has
 * one key whatever the number of gateways: its id is the period's start, and the first gateway to store one keeps it.
 * The id also names the wrapper (of DATA_ENCRYPTION_KEY): processes with another one (a key being rotated) keep keys
 * of their own rather than meet one they cannot unwrap.
 */
export function createSecurityCodeKeyStore(deps: { orm: MikroORM; keyWrapper: KeyWrapper; now?: () => number }): SecurityCodeKeys {
  const sql = poolExecutor(deps.orm);
  const now = deps.now ?? Date.now;
  const known = new Map<string, { key: Uint8Array; destroyAfter: number }>();
  let sealing: { key: SecurityCodeKey; until: number } | undefined;
  let asking: Promise<SecurityCodeKey> | undefined;

  const unwrap = (wrappedKey: string) => new Uint8Array(Buffer.from(deps.keyWrapper.open(wrappedKey), 'base64'));

  async function load(id: string): Promise<Uint8Array | undefined> {
    const stored = await findSecurityCodeKey(sql, id);
    if (!stored) return undefined;
    const key = unwrap(stored.wrappedKey);
    known.set(id, { key, destroyAfter: stored.destroyAfter.getTime() });
    return key;
  }

  async function keyOfThisPeriod(): Promise<SecurityCodeKey> {
    const periodStart = Math.floor(now() / SECURITY_CODE_SEALING_PERIOD_MS) * SECURITY_CODE_SEALING_PERIOD_MS;
    const id = `cvv-${new Date(periodStart).toISOString()}-${deps.keyWrapper.id}`;
    const sealingUntil = periodStart + SECURITY_CODE_SEALING_PERIOD_MS;
    await proposeSecurityCodeKey(sql, {
      id,
      wrappedKey: deps.keyWrapper.seal(randomBytes(32).toString('base64')),
      sealingUntil: new Date(sealingUntil),
      destroyAfter: new Date(sealingUntil + SECURITY_CODE_KEY_GRACE_MS),
    });
    const key = await load(id);
    // Only a clock half an hour off the database's gets here: sealing with a key already due to go would lose the code.
    if (!key) throw new Error(`The security-code key ${id} is already past its end by the database's clock`);
    sealing = { key: { id, key }, until: sealingUntil };
    return sealing.key;
  }

  return {
    async current() {
      if (sealing && now() < sealing.until) return sealing.key;
      // Submits arriving together at a period's start wait for one key, not one statement each.
      asking ??= keyOfThisPeriod().finally(() => (asking = undefined));
      return asking;
    },
    async find(id) {
      for (const [knownId, { destroyAfter }] of known) if (now() >= destroyAfter) known.delete(knownId);
      return known.get(id)?.key ?? (await load(id));
    },
  };
}
