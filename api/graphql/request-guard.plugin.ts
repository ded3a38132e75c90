import type { ApolloServerPlugin } from '@apollo/server';
import type { GraphQLSchema } from 'graphql';
import type { GraphQLContext } from './context.ts';
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
