import { visit, type ExecutableDefinitionNode } from 'graphql';
import type { GraphQLCaller } from './context.ts';
import { RejectedOperationError } from './errors.ts';

const INTROSPECTION_FIELDS = new Set(['__schema', '__type']);

/**
 * The schema is described to callers with a tenant key or the operator token only: anonymous callers get nothing but
 * `__typename`. Checked per request, not as a validation rule, because Apollo caches validated documents for everyone.
 */
export function refuseAnonymousIntrospection(caller: GraphQLCaller, definitions: readonly ExecutableDefinitionNode[]): void {
  if (caller.kind !== 'anonymous') return;
  for (const definition of definitions) {
    visit(definition, {
      Field(field) {
        if (INTROSPECTION_FIELDS.has(field.name.value)) {
          throw new RejectedOperationError('Introspection needs an API key or the operator token in the Authorization header', 'UNAUTHENTICATED', { status: 401, node: field });
        }
      },
    });
  }
}
