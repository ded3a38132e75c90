import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TenantProvisioningResult } from '../../services/provisioning/provision.ts';
import { loadConfig } from '../../platform/config.ts';

/**
 * Development credentials, kept under DATA_DIR so a restart prints the same ones: the operator token,
 * the data-encryption key (`data-encryption.key`, its own file as before) and the secrets the demo
 * provisioning returned (API keys and webhook secrets are shown by the product only once).
 * In production none of this exists: every secret comes from the environment.
 */
export interface DevCredentials {
  operatorToken?: string;
  demo?: TenantProvisioningResult[];
}

const CREDENTIALS_FILE = 'credentials.json';
const ENCRYPTION_KEY_FILE = 'data-encryption.key';

/** In production (NODE_ENV) no development secret is generated or kept: secrets come from the environment. */
export function isProductionMode(): boolean {
  return loadConfig().nodeEnv === 'production';
}

function refuseInProduction(setting: string): void {
  if (isProductionMode()) throw new Error(`${setting} must be set: with NODE_ENV=production no development secret is generated or stored.`);
}

export function readDevCredentials(dataDir: string): DevCredentials {
  const file = path.resolve(dataDir, CREDENTIALS_FILE);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as DevCredentials) : {};
}

function writeDevCredentials(dataDir: string, credentials: DevCredentials): void {
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(path.resolve(dataDir, CREDENTIALS_FILE), `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
}

/** The stored development operator token, generated on first use. */
export function developmentOperatorToken(dataDir: string): string {
  refuseInProduction('OPERATOR_TOKEN');
  const stored = readDevCredentials(dataDir);
  if (stored.operatorToken) return stored.operatorToken;
  const operatorToken = randomBytes(24).toString('base64url');
  writeDevCredentials(dataDir, { ...stored, operatorToken });
  return operatorToken;
}

/** Keeps what provisioning the demo tenant returned, secrets included, for later starts and `npm run credentials`. */
export function storeDemoCredentials(dataDir: string, demo: TenantProvisioningResult[]): void {
  refuseInProduction('Demo credentials storage');
  writeDevCredentials(dataDir, { ...readDevCredentials(dataDir), demo });
}

/** The data-encryption key kept under DATA_DIR by an earlier start, if any (read only: nothing is generated). */
export function storedEncryptionKey(dataDir: string): string | undefined {
  const file = path.resolve(dataDir, ENCRYPTION_KEY_FILE);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}

/** A data-encryption key kept under DATA_DIR so secrets stored by one run can be read by the next. */
export function developmentEncryptionKey(dataDir: string): string {
  refuseInProduction('DATA_ENCRYPTION_KEY');
  const stored = storedEncryptionKey(dataDir);
  if (stored !== undefined) return stored;
  const file = path.resolve(dataDir, ENCRYPTION_KEY_FILE);
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('base64');
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}

/**
 * The lines `npm start` and `npm run credentials` print. A secret given as `undefined` came from the environment and
 * is named, never printed: whoever set it has it, and a terminal or its log is no place for a production secret.
 */
export function describeCredentials(credentials: { operatorToken: string | undefined; dataEncryptionKey: string | undefined; demo?: TenantProvisioningResult[] }): string[] {
  const lines = [
    credentials.operatorToken === undefined
      ? 'Operator token   from OPERATOR_TOKEN (not printed)'
      : `Operator token   ${credentials.operatorToken}   (GraphQL operator mutations: Authorization: Bearer <token>)`,
  ];
  if (!credentials.demo) {
    lines.push('Demo tenant      its keys were shown when it was provisioned and not kept; delete DATA_DIR to provision it again');
  }
  for (const tenant of credentials.demo ?? []) {
    lines.push(`Demo tenant      ${tenant.slug} (ClientId ${tenant.clientId})`);
    for (const key of tenant.apiKeys) lines.push(`  API key        ${key.key ?? '(not kept)'}   (${key.name})`);
    lines.push(`  Products       ${tenant.products.map((product) => `${product.slug} → /api/${product.id}`).join(', ')}`);
    for (const endpoint of tenant.webhookEndpoints) lines.push(`  Webhook secret ${endpoint.secret ?? '(not kept)'}   (endpoint ${endpoint.slug})`);
    if (tenant.leadKeys?.publishableKey) lines.push(`  Lead keys      ${tenant.leadKeys.publishableKey} / ${tenant.leadKeys.secretKey ?? '(not kept)'}`);
    lines.push(`  E-mail key     ${tenant.emailTenantKey}`);
  }
  lines.push(credentials.dataEncryptionKey === undefined ? 'Encryption key   from DATA_ENCRYPTION_KEY (not printed)' : `Encryption key   ${credentials.dataEncryptionKey}   (DATA_ENCRYPTION_KEY)`);
  return lines;
}
