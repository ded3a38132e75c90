import { Kind, type FieldNode, type SelectionSetNode, type ValueNode, type ValidationContext } from 'graphql';

/**
 * The root fields an operation runs, as GraphQL executes them: fields with the same response key (alias or name) in one
 * selection set are merged into one resolver call, fragment spreads and inline fragments included, and a fragment spread
 * twice adds nothing. `__typename` is free. Linear in the document: each fragment is expanded at most once, as graphql's
 * own collectFields does.
 *
 * Two selections count as one only when graphql would merge them without a conflict on the field itself: same response
 * key, same field, same arguments (compared as OverlappingFieldsCanBeMerged compares them). Any other pair under one key
 * is refused by that rule anyway; counting it twice here keeps this limit refusing it too.
 */
export function executedRootFields(context: ValidationContext, selectionSet: SelectionSetNode): ReadonlySet<string> {
  const fields = new Set<string>();
  const expanded = new Set<string>();
  const collect = (selections: SelectionSetNode): void => {
    for (const selection of selections.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value !== '__typename') fields.add(mergeKey(selection));
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        collect(selection.selectionSet);
      } else if (!expanded.has(selection.name.value)) {
        expanded.add(selection.name.value);
        // Unknown fragments are reported by graphql's own rules; a cycle stops here, at a fragment already expanded.
        const fragment = context.getFragment(selection.name.value);
        if (fragment) collect(fragment.selectionSet);
      }
    }
  };
  collect(selectionSet);
  return fields;
}

/** Response key, field name and arguments (in any order), directives aside: they decide whether the merged field runs, not how often. */
function mergeKey(field: FieldNode): string {
  const args = [...(field.arguments ?? [])].sort((a, b) => compareNames(a.name.value, b.name.value)).map((arg) => [arg.name.value, valueKey(arg.value)]);
  return JSON.stringify([field.alias?.value ?? field.name.value, field.name.value, args]);
}

/** A value as graphql's OverlappingFieldsCanBeMerged compares it: object fields in any order, variables by name, literals as written. */
function valueKey(value: ValueNode): unknown {
  switch (value.kind) {
    case Kind.VARIABLE:
      return [value.kind, value.name.value];
    case Kind.LIST:
      return [value.kind, value.values.map(valueKey)];
    case Kind.OBJECT:
      return [value.kind, [...value.fields].sort((a, b) => compareNames(a.name.value, b.name.value)).map((field) => [field.name.value, valueKey(field.value)])];
    case Kind.STRING:
      return [value.kind, value.value, value.block === true];
    case Kind.NULL:
      return [value.kind, null];
    default:
      return [value.kind, value.value];
  }
}

const compareNames = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
