import {
  getIntrospectionQuery,
  getNullableType,
  getVariableValues,
  isAbstractType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isObjectType,
  parse,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { fieldExtensionsEstimator, getComplexity, simpleEstimator, type ComplexityEstimator } from 'graphql-query-complexity';
import { RejectedOperationError } from './errors.ts';
import { OPERATION_LIMITS } from './operation-limits.ts';

export interface CostedRequest {
  readonly document: DocumentNode;
  readonly operation: OperationDefinitionNode;
  readonly variables: Readonly<Record<string, unknown>>;
}

const isIntrospectionField = (parentTypeName: string, fieldName: string) => fieldName.startsWith('__') || parentTypeName.startsWith('__');

/**
 * Two budgets, checked with the request's variables (so `pageSize: $n` is costed at its value) before execution:
 * - data: field costs from cost.ts, every other field 1, against OPERATION_LIMITS.maxComplexity;
 * - introspection: each introspection list multiplied by the longest such list this schema has, against what the
 *   full standard introspection query costs. Tools that introspect fit; aliased or self-nested introspection
 *   (`fields { type { fields ... } }`), whose answer grows exponentially, does not.
 */
export function createCostCheck(schema: GraphQLSchema): (request: CostedRequest) => void {
  const dataEstimators: ComplexityEstimator[] = [
    ({ type, field }) => (isIntrospectionField(type.name, field.name) ? 0 : undefined),
    fieldExtensionsEstimator(),
    simpleEstimator({ defaultComplexity: 1 }),
  ];
  const introspectionEstimators = [introspectionEstimator(schema)];
  const introspectionBudget = getComplexity({ schema, query: parse(getIntrospectionQuery(FULL_INTROSPECTION)), estimators: introspectionEstimators });

  return ({ document, operation, variables }) => {
    // Variables that do not fit their types are refused by execution before any resolver runs, with a better message.
    if (getVariableValues(schema, operation.variableDefinitions ?? [], variables).errors) return;
    const cost = (estimators: ComplexityEstimator[]): number => {
      try {
        return getComplexity({ schema, query: document, operationName: operation.name?.value, variables, estimators });
      } catch {
        // The estimator gives up when fragments expand past its node limit: that query is too complex by any measure.
        return Number.POSITIVE_INFINITY;
      }
    };
    const data = cost(dataEstimators);
    if (data > OPERATION_LIMITS.maxComplexity) {
      const costs = Number.isFinite(data) ? `costs ${data}` : 'spreads its fragments too many times to be costed';
      throw new RejectedOperationError(
        `The query ${costs}, over the limit of ${OPERATION_LIMITS.maxComplexity}: ask for smaller pages, fewer fields or fewer aliases`,
        'QUERY_TOO_COMPLEX',
      );
    }
    const introspection = cost(introspectionEstimators);
    if (introspection > introspectionBudget) {
      throw new RejectedOperationError(
        `The introspection costs ${introspection}, more than the full introspection query (${introspectionBudget}): ask for the schema once, without nesting it in itself`,
        'QUERY_TOO_COMPLEX',
      );
    }
  };
}

/** Every option on: the most any tool asks for. */
const FULL_INTROSPECTION = { descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true, oneOf: true };

/** Introspection fields cost 1 each, lists times their longest length in this schema; data fields belong to the other budget. */
function introspectionEstimator(schema: GraphQLSchema): ComplexityEstimator {
  const lengths = longestIntrospectionLists(schema);
  return ({ type, field, childComplexity }) => {
    if (!isIntrospectionField(type.name, field.name) || field.name === '__typename') return childComplexity;
    const items = isListType(getNullableType(field.type)) ? (lengths.get(field.name) ?? lengths.get('types')!) : 1;
    return 1 + items * childComplexity;
  };
}

function longestIntrospectionLists(schema: GraphQLSchema): Map<string, number> {
  const types = Object.values(schema.getTypeMap());
  const directives = schema.getDirectives();
  const longest = (lengths: number[]) => Math.max(1, ...lengths);
  const fieldLists = types.flatMap((type) => (isObjectType(type) || isInterfaceType(type) ? [Object.values(type.getFields())] : []));
  return new Map([
    ['types', types.length],
    ['directives', directives.length],
    ['fields', longest(fieldLists.map((fields) => fields.length))],
    ['args', longest([...fieldLists.flat().map((field) => field.args.length), ...directives.map((directive) => directive.args.length)])],
    ['inputFields', longest(types.flatMap((type) => (isInputObjectType(type) ? [Object.keys(type.getFields()).length] : [])))],
    ['enumValues', longest(types.flatMap((type) => (isEnumType(type) ? [type.getValues().length] : [])))],
    ['interfaces', longest(types.flatMap((type) => (isObjectType(type) || isInterfaceType(type) ? [type.getInterfaces().length] : [])))],
    ['possibleTypes', longest(types.flatMap((type) => (isAbstractType(type) ? [schema.getPossibleTypes(type).length] : [])))],
  ]);
}
