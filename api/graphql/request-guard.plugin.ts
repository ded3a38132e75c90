import type { ApolloServerPlugin } from '@apollo/server';
import type { GraphQLSchema } from 'graphql';
import type { GraphQLContext } from './context.ts';
import { RejectedOperationError } from './errors.ts';
import { refuseHostileText } from './hostile-text.ts';
import { refuseAnonymousIntrospection } from './introspection-access.ts';
import { createCostCheck } from './query-cost.ts';
import { reachableDefinitions } from './reachable-definitions.ts';

/**
 * The checks that need the caller or the variables, run once the operation is known and before it executes: who may
 * introspect, text no resolver should see, and what the request costs. (Checks on the document alone are validation
 * rules: see operation-shape.rule.ts.)
 */
export function requestGuardPlugin(schema: GraphQLSchema): ApolloServerPlugin<GraphQLContext> {
  const checkCost = createCostCheck(schema);
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ contextValue, document, operation, request }) {
          // Without an operation Apollo answers with its own error and runs nothing.
          if (!operation) return;
          // This schema has no subscriptions: graphql-js would refuse one at execution, as an error without a code.
          if (!schema.getRootType(operation.operation)) {
            throw new RejectedOperationError(`This API has no ${operation.operation} operations; send a query or a mutation`, 'OPERATION_NOT_SUPPORTED', { node: operation });
          }
          const definitions = reachableDefinitions(document, operation);
          const variables = request.variables ?? {};
          refuseAnonymousIntrospection(contextValue.caller, definitions);
          refuseHostileText(definitions, operation, variables);
          checkCost({ document, operation, variables });
        },
      };
    },
  };
}
