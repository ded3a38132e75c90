import { Client, Connection } from '@temporalio/client';
import { ALL_SEARCH_ATTRIBUTES } from '../../workflows/contract/search-attributes.ts';

export interface TemporalHandle {
  readonly connection: Connection;
  readonly client: Client;
  close(): Promise<void>;
}

export async function connectTemporal(options: { address: string; namespace: string }): Promise<TemporalHandle> {
  const connection = await Connection.connect({ address: options.address });
  const client = new Client({ connection, namespace: options.namespace });
  return { connection, client, close: () => connection.close() };
}

const SEARCH_ATTRIBUTE_ENUM: Record<string, number> = { TEXT: 1, KEYWORD: 2, INT: 3, DOUBLE: 4, BOOL: 5, DATETIME: 6, KEYWORD_LIST: 7 };

/**
 * Registers the product's search attributes on servers that do not have them yet (a Temporal
 * deployed by docker compose); the dev server gets them as start flags.
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set([...Object.keys(existing.customAttributes ?? {}), ...Object.keys(existing.systemAttributes ?? {})]);
  const missing = ALL_SEARCH_ATTRIBUTES.filter((key) => !known.has(key.name));
  if (missing.length === 0) return;
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((key) => [key.name, SEARCH_ATTRIBUTE_ENUM[key.type]!])),
  });
}
