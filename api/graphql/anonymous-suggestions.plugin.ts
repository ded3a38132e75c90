import type { ApolloServerPlugin } from '@apollo/server';
import type { GraphQLContext } from './context.ts';

/** graphql-js's hint in a validation error: `Did you mean "customerLeads"?`, and its list form. */
const SUGGESTION = /\s*Did you mean [^?]*\?\s*$/;

/**
 * Takes graphql-js's "Did you mean …?" hints out of the errors anonymous callers get: each names fields, types or
 * arguments of the schema, so a caller without a key could map it by guessing, where introspection is refused to it
 * (`introspection-access.ts`). Callers with a key keep the hints (they may introspect anyway).
 */
export function anonymousSuggestionsPlugin(): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ contextValue, response }) {
          if (contextValue.caller.kind !== 'anonymous' || response.body.kind !== 'single') return;
          const { errors } = response.body.singleResult;
          if (!errors) return;
          response.body.singleResult.errors = errors.map((error) => (SUGGESTION.test(error.message) ? { ...error, message: error.message.replace(SUGGESTION, '') } : error));
        },
      };
    },
  };
}
