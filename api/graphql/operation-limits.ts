/**
 * How much one GraphQL request may ask for. Each bound stops one way of turning a single (rate-limited) request into
 * many: aliases and root fields repeat a resolver, depth and cost multiply lists, mutations repeat a side effect.
 * The numbers leave room for every query an admin UI sends, and for the full introspection query.
 */
export const OPERATION_LIMITS = {
  /** Parser tokens in the document; the full introspection query has under 1,000. */
  maxTokens: 10_000,
  /** Aliased fields per operation, fragments included. */
  maxAliases: 20,
  /** Fields at the root of a query (each one is its own database read). */
  maxRootFields: 10,
  /** Fields of a mutation: each is a side effect (a key generated, a webhook sent), so one per request. */
  maxMutationFields: 1,
  /** Nesting of fields; the full introspection query needs 15 (its type references nest `ofType` nine deep). */
  maxDepth: 15,
  /** Estimated cost of the data a query reads (see cost.ts); the largest page of deliveries with attempts and endpoint costs about 11,000. */
  maxComplexity: 20_000,
} as const;
