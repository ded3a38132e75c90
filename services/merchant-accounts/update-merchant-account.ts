import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAuditEntry } from '../../data/queries/audit-entries.ts';
import {
  findReferenceName,
  findVisibleMerchantAccount,
  replaceMerchantAccountCurrencies,
  updateMerchantAccountAtVersion,
  type StoredMerchantAccount,
} from '../../data/queries/merchant-account-admin.ts';
import type { SecretBox } from '../../domain/crypto/secret-box.ts';
import { DomainError } from '../../domain/errors.ts';
import { MASKED_IN_AUDIT, maskBankNumber, mergeCredentials, parseCredentials, sameCredentials, type GatewayCredentials } from '../../domain/merchant-accounts/credentials.ts';
import {
  planFieldChanges,
  RESOLVED_NAMES,
  type FieldChange,
  type MerchantAccountUpdate,
  type MerchantAccountView,
  type ResolvedName,
  type StoredValue,
  type WritableField,
} from '../../domain/merchant-accounts/merchant-account.ts';
import { compile, createStrictAjv, describeSchemaErrors } from '../../domain/validation/json-schema.ts';
import { MerchantAccountUpdateInput } from '../../schema/inputs/merchant-account-update.input.ts';
import { toView } from './merchant-account-views.ts';

const validateUpdate = compile(createStrictAjv(), MerchantAccountUpdateInput);

/** Checks an update body against the schema REST validates with, so GraphQL gets the same answers. */
export function parseMerchantAccountUpdate(body: unknown): MerchantAccountUpdate {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new DomainError('validation', 'body must be object');
  if (!validateUpdate(body)) {
    const error = validateUpdate.errors![0]!;
    throw new DomainError('validation', describeSchemaErrors(validateUpdate.errors!), { field: error.instancePath.replace(/^\//, '').replaceAll('/', '.') || undefined });
  }
  return body as unknown as MerchantAccountUpdate;
}

export interface MerchantAccountUpdateRequest {
  readonly tenantId: number;
  readonly id: number;
  /** `UserEmail` of the admin (spec 5.2), recorded in the audit trail. */
  readonly actor: string;
  readonly update: MerchantAccountUpdate;
}

/**
 * Applies an admin update (spec 4.8) in one transaction: 404 when the account is not the tenant's (or a child
 * company's), 409 when `rowVersion` is not the current version, else the changed fields, the currencies and an audit
 * entry (before and after, credentials left out) are written and the version goes up by one. The version check is the
 * conditional update itself, so of two updates of one version exactly one applies.
 */
export async function updateMerchantAccount(em: EntityManager, secretBox: SecretBox, request: MerchantAccountUpdateRequest): Promise<MerchantAccountView> {
  return em.transactional(async (tx) => {
    const current = await findVisibleMerchantAccount(tx, request.tenantId, request.id);
    if (!current) throw new DomainError('not_found', `Merchant account ${request.id} not found`);
    if (current.view.rowVersion !== request.update.rowVersion) throw staleVersion(current.view.rowVersion);

    const changes = planFieldChanges({ ...current.view, currencies: [] }, request.update);
    const values = new Map<WritableField | ResolvedName, StoredValue>([...changes].map(([field, change]) => [field, change.after]));
    for (const [name, idField] of Object.entries(RESOLVED_NAMES) as [ResolvedName, WritableField][]) {
      const change = changes.get(idField);
      if (!change) continue;
      if (change.after === null) {
        values.set(name, null);
        continue;
      }
      // Names are reference data provisioning writes beside the id; an id no account carries a name for would leave
      // the name silently null, so it is refused until provisioning introduces it.
      const known = await findReferenceName(tx, request.tenantId, name, idField, change.after as number);
      if (known === null) throw new DomainError('validation', `${idField} ${String(change.after)} is not known: no merchant account of the company carries its ${name} name (provisioning introduces new ones)`, { field: idField });
      values.set(name, known);
    }

    if (!(await updateMerchantAccountAtVersion(tx, { tenantId: request.tenantId, id: request.id, rowVersion: request.update.rowVersion }, values))) {
      throw staleVersion();
    }
    const currencyAudit = request.update.currencies ? await writeCurrencies(tx, secretBox, current, request.update.currencies) : {};

    const audit: Record<string, unknown> = Object.fromEntries([...changes].map(([field, change]) => [field, auditedChange(field, change)]));
    for (const name of Object.keys(RESOLVED_NAMES) as ResolvedName[]) {
      if (values.has(name) && values.get(name) !== current.view[name]) audit[name] = { before: current.view[name], after: values.get(name) };
    }
    Object.assign(audit, currencyAudit, { rowVersion: { before: current.view.rowVersion, after: current.view.rowVersion + 1 } });
    await recordAuditEntry(tx, { tenantId: current.tenantId, actor: request.actor, action: 'merchant_account.updated', entityType: 'MerchantAccount', entityId: String(request.id), changes: audit });

    const updated = await findVisibleMerchantAccount(tx, request.tenantId, request.id);
    return toView(updated!, secretBox);
  });
}

/** Bank account details are shown in the audit masked to their last 4 characters, as a bank statement shows them. */
function auditedChange(field: WritableField, change: FieldChange): FieldChange {
  if (!MASKED_IN_AUDIT.has(field)) return change;
  const mask = (value: StoredValue) => (typeof value === 'string' ? maskBankNumber(value) : value);
  return { before: mask(change.before), after: mask(change.after) };
}

function staleVersion(current?: number): DomainError {
  const now = current === undefined ? '' : ` (current ${current})`;
  return new DomainError('conflict', `rowVersion is stale${now}: the merchant account changed since it was read; read it again and reapply the change`);
}

/** Replaces the currency set; returns what the audit may say about it (codes, and which credentials changed, never values). */
async function writeCurrencies(
  em: EntityManager,
  secretBox: SecretBox,
  current: StoredMerchantAccount,
  wanted: NonNullable<MerchantAccountUpdate['currencies']>,
): Promise<Record<string, unknown>> {
  const seen = new Set<string>();
  for (const { currency } of wanted) {
    if (seen.has(currency)) throw new DomainError('validation', `currencies lists ${currency} twice`, { field: 'currencies' });
    seen.add(currency);
  }
  const stored = new Map(current.currencies.map((c) => [c.currency, parseCredentials(secretBox.open(c.sealedCredentials))] as const));
  const credentialsChanged: string[] = [];
  const rows = wanted.map(({ currency, gatewayCredentials }) => {
    const before = stored.get(currency);
    const after: GatewayCredentials = mergeCredentials(before, gatewayCredentials);
    if (!before || !sameCredentials(before, after)) credentialsChanged.push(currency);
    return { currency, sealedCredentials: before && sameCredentials(before, after) ? current.currencies.find((c) => c.currency === currency)!.sealedCredentials : secretBox.seal(JSON.stringify(after)) };
  });
  await replaceMerchantAccountCurrencies(em, current.view.id, rows);
  const before = [...stored.keys()].sort();
  const after = [...seen].sort();
  const audit: Record<string, unknown> = {};
  if (before.join() !== after.join()) audit.currencies = { before, after };
  if (credentialsChanged.length > 0) audit.gatewayCredentialsChanged = credentialsChanged.sort();
  return audit;
}
