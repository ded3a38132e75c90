import { Kind, visit, type DocumentNode, type ExecutableDefinitionNode, type FragmentDefinitionNode, type OperationDefinitionNode } from 'graphql';

/** The operation about to run and every fragment it spreads, directly or through other fragments. */
export function reachableDefinitions(document: DocumentNode, operation: OperationDefinitionNode): ExecutableDefinitionNode[] {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const reached: ExecutableDefinitionNode[] = [];
  const seen = new Set<string>();
  const pending: ExecutableDefinitionNode[] = [operation];
  for (let definition = pending.pop(); definition; definition = pending.pop()) {
    reached.push(definition);
    visit(definition, {
      FragmentSpread(spread) {
        const fragment = fragments.get(spread.name.value);
        if (fragment && !seen.has(fragment.name.value)) {
          seen.add(fragment.name.value);
          pending.push(fragment);
        }
      },
    });
  }
  return reached;
}
