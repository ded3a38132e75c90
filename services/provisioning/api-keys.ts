import { generateSecret, hashSecret } from '../../domain/crypto/secret-box.ts';
import { ApiKey } from '../../schema/entities/index.ts';
import { assignChanges, type ChangeKind } from './changes.ts';
import type { TenantFixture } from './fixture.schema.ts';
import type { TenantScope } from './tenant-scope.ts';

export interface ProvisionedApiKey {
  name: string;
  id: number;
  change: ChangeKind;
  /** Only when this run generated the key: it is stored hashed and never readable again. */
  key?: string;
}

/** API keys matched by name; a key given in the fixture replaces the stored one, none given keeps it. */
export async function provisionApiKeys({ em, tenant, audit }: TenantScope, fixtures: NonNullable<TenantFixture['apiKeys']>): Promise<ProvisionedApiKey[]> {
  const results: ProvisionedApiKey[] = [];
  for (const fixture of fixtures) {
    const apiKey = await em.findOne(ApiKey, { tenant, name: fixture.name });
    const value = fixture.value;
    if (!apiKey) {
      const key = value ?? generateSecret('sk_api_');
      const created = em.create(ApiKey, { tenant, name: fixture.name, keyHash: hashSecret(key), displayPrefix: key.slice(0, 12) });
      await em.flush();
      audit('api_key.created', 'ApiKey', created.id);
      results.push({ name: created.name, id: created.id, change: 'created', ...(value ? {} : { key }) });
      continue;
    }
    const change = value ? assignChanges(apiKey, { keyHash: hashSecret(value), displayPrefix: value.slice(0, 12) }) : 'unchanged';
    if (change !== 'unchanged') audit('api_key.replaced', 'ApiKey', apiKey.id);
    results.push({ name: apiKey.name, id: apiKey.id, change });
  }
  return results;
}
