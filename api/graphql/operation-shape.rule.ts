import { Kind, type ASTVisitor, type OperationDefinitionNode, type SelectionSetNode, type ValidationContext } from 'graphql';
import { RejectedOperationError } from './errors.ts';
import { executedRootFields } from './executed-root-fields.ts';
import { OPERATION_LIMITS } from './operation-limits.ts';

/** What a selection set asks for once its fragments are expanded. */
interface Shape {
  /** Deepest field nesting. */
  readonly depth: number;
  /** Aliased fields anywhere below, every selection counted (merged or not). */
  readonly aliases: number;
}

const EMPTY: Shape = { depth: 0, aliases: 0 };

/**
 * Refuses an operation with too many aliases, root fields or mutations, or nested too deep, during validation: before
 * any resolver runs. Depends on the document alone, so Apollo's cache of validated documents keeps it sound. Root fields
 * and mutations are counted as GraphQL runs them (executed-root-fields.ts); aliases and depth count every selection.
 */
export function operationShapeRule(context: ValidationContext): ASTVisitor {
  // A fragment is measured once however often it is spread, so nested spreads cannot make this rule itself exponential.
  const fragmentShapes = new Map<string, Shape>();
  const visiting = new Set<string>();

  const shapeOf = (selectionSet: SelectionSetNode): Shape => {
    let depth = 0;
    let aliases = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const inner = selection.selectionSet ? shapeOf(selection.selectionSet) : EMPTY;
        depth = Math.max(depth, 1 + inner.depth);
        aliases += (selection.alias ? 1 : 0) + inner.aliases;
        continue;
      }
      const inner = selection.kind === Kind.INLINE_FRAGMENT ? shapeOf(selection.selectionSet) : fragmentShape(selection.name.value);
      depth = Math.max(depth, inner.depth);
      aliases += inner.aliases;
    }
    return { depth, aliases };
  };

  const fragmentShape = (name: string): Shape => {
    const known = fragmentShapes.get(name);
    if (known) return known;
    const fragment = context.getFragment(name);
    // Unknown fragments and cycles are reported by graphql's own rules.
    if (!fragment || visiting.has(name)) return EMPTY;
    visiting.add(name);
    const shape = shapeOf(fragment.selectionSet);
    visiting.delete(name);
    fragmentShapes.set(name, shape);
    return shape;
  };

  return {
    OperationDefinition(operation) {
      const rootFields = executedRootFields(context, operation.selectionSet).size;
      const problem = firstExceededLimit(operation, shapeOf(operation.selectionSet), rootFields);
      if (problem) context.reportError(problem);
      return false;
    },
  };
}

/** `rootFields` counts the root fields that run: selections GraphQL merges (same response key, field and arguments) count once. */
function firstExceededLimit(operation: OperationDefinitionNode, shape: Shape, rootFields: number): RejectedOperationError | undefined {
  const limits = OPERATION_LIMITS;
  if (operation.operation === 'mutation' && rootFields > limits.maxMutationFields) {
    return new RejectedOperationError(
      `A request may run at most ${limits.maxMutationFields} mutation field; this one has ${rootFields}. Send each mutation as its own request`,
      'TOO_MANY_MUTATIONS',
    );
  }
  if (shape.aliases > limits.maxAliases) {
    return new RejectedOperationError(`An operation may use at most ${limits.maxAliases} aliases; this one has ${shape.aliases}`, 'TOO_MANY_ALIASES');
  }
  if (rootFields > limits.maxRootFields) {
    return new RejectedOperationError(`An operation may select at most ${limits.maxRootFields} root fields; this one has ${rootFields}`, 'TOO_MANY_ROOT_FIELDS');
  }
  if (shape.depth > limits.maxDepth) {
    return new RejectedOperationError(`An operation may nest fields at most ${limits.maxDepth} deep; this one nests ${shape.depth}`, 'QUERY_TOO_DEEP');
  }
  return undefined;
}
