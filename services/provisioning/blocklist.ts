import { normalizeEmail } from '../../domain/payments/card.ts';
import { BlocklistEntry, type BlocklistKind } from '../../schema/entities/index.ts';
import type { TenantFixture } from './fixture.schema.ts';
import type { TenantScope } from './tenant-scope.ts';

/** The tenant's blocklist becomes exactly the fixture's (a set per kind); cards are kept only as fingerprints. */
export async function syncBlocklist(
  { em, tenant, audit }: TenantScope,
  blocklist: NonNullable<TenantFixture['blocklist']>,
  fingerprintCard: (pan: string) => string,
): Promise<void> {
  const wanted = new Set<string>([
    // Kept as the submit keeps the address it compares: one spelling per mailbox.
    ...(blocklist.emails ?? []).map((v) => `email:${normalizeEmail(v)}`),
    ...(blocklist.cards ?? []).map((v) => `card:${fingerprintCard(v)}`),
    ...(blocklist.bins ?? []).map((v) => `bin:${v}`),
    ...(blocklist.binCountries ?? []).map((v) => `bin_country:${v}`),
  ]);
  const current = await em.find(BlocklistEntry, { tenant });
  for (const entry of current) {
    if (!wanted.delete(`${entry.kind}:${entry.value}`)) {
      em.remove(entry);
      audit('blocklist.removed', 'BlocklistEntry', entry.id, { kind: entry.kind });
    }
  }
  for (const item of wanted) {
    const [kind, ...rest] = item.split(':') as [BlocklistKind, ...string[]];
    em.create(BlocklistEntry, { tenant, kind, value: rest.join(':') });
    audit('blocklist.added', 'BlocklistEntry', kind, { kind });
  }
}
