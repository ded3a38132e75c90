import { randomUUID } from 'node:crypto';
import { parseFixture } from '../../services/provisioning/parse-fixture.ts';
import { provision, type TenantProvisioningResult } from '../../services/provisioning/provision.ts';
import type { TestApp } from './harness.ts';

export interface TestTenant {
  readonly result: TenantProvisioningResult;
  readonly id: number;
  readonly clientId: string;
  readonly apiKey: string;
  /** Headers of an admin call (spec 5.2). */
  readonly adminHeaders: Record<string, string>;
}

/** A fresh tenant with a known API key; extra fixture fields merge in. */
export async function createTestTenant(app: TestApp, extra: Record<string, unknown> = {}): Promise<TestTenant> {
  const unique = randomUUID().slice(0, 8);
  const apiKey = `sk_test_${randomUUID().replaceAll('-', '')}`;
  const clientId = `client-${unique}`;
  const [result] = await provision(
    { em: app.orm.em.fork(), secretBox: app.secretBox, fingerprintCard: app.cardVault.fingerprint, actor: 'test' },
    parseFixture({ tenants: [{ slug: `t-${unique}`, name: `Tenant ${unique}`, clientId, apiKeys: [{ name: 'default', value: apiKey }], ...extra }] }),
  );
  return {
    result: result!,
    id: result!.id,
    clientId,
    apiKey,
    adminHeaders: { authorization: `Bearer ${apiKey}`, clientid: clientId, useremail: 'admin@example.com' },
  };
}
