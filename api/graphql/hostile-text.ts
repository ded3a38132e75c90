import { Kind, visit, type ExecutableDefinitionNode, type OperationDefinitionNode, type ValueNode } from 'graphql';
import { HOSTILE_VALUE_PROBLEM, isUnrepresentableNumber, type HostileKind } from '../../domain/validation/hostile-text.ts';
import { RejectedOperationError } from './errors.ts';

/** NUL, which PostgreSQL cannot store in text, and UTF-16 surrogates without their pair, which no encoding can carry. */
const UNSAFE_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Where a value sits inside an argument; the path is spelled out only for the value reported. */
interface Place {
  readonly parent?: Place;
  readonly key: string | number;
}

type Pending = { readonly place: Place } & ({ readonly node: ValueNode } | { readonly value: unknown });

/**
 * Refuses the request when any argument of the operation, written inline or sent as a variable, holds unsafe text in
 * any string (nested inputs, lists, JSON values and their keys included). One check for every argument, before any
 * resolver runs. The walk uses its own stack: a 64 KiB body can nest deeper than the call stack goes.
 */
export function refuseHostileText(definitions: readonly ExecutableDefinitionNode[], operation: OperationDefinitionNode, variables: Readonly<Record<string, unknown>>): void {
  const defaults = new Map((operation.variableDefinitions ?? []).map((definition) => [definition.variable.name.value, definition.defaultValue]));
  for (const definition of definitions) {
    visit(definition, {
      Argument(argument) {
        const unsafe = firstUnsafe({ node: argument.value, place: { key: argument.name.value } }, variables, defaults);
        if (!unsafe) return;
        const path = pathOf(unsafe.place);
        const problem = unsafe.kind === 'text' ? 'must not contain a NUL character (U+0000) or an unpaired UTF-16 surrogate' : HOSTILE_VALUE_PROBLEM.number;
        throw new RejectedOperationError(`${path} ${problem}`, 'BAD_USER_INPUT', { field: path, node: argument });
      },
    });
  }
}

function firstUnsafe(start: Pending, variables: Readonly<Record<string, unknown>>, defaults: ReadonlyMap<string, ValueNode | undefined>): { place: Place; kind: HostileKind } | undefined {
  const pending: Pending[] = [start];
  for (let item = pending.pop(); item; item = pending.pop()) {
    const { place } = item;
    if ('node' in item) {
      const node = item.node;
      if (node.kind === Kind.STRING && UNSAFE_TEXT.test(node.value)) return { place, kind: 'text' };
      if ((node.kind === Kind.FLOAT || node.kind === Kind.INT) && isUnrepresentableNumber(Number(node.value))) return { place, kind: 'number' };
      if (node.kind === Kind.LIST) node.values.forEach((value, index) => pending.push({ node: value, place: { parent: place, key: index } }));
      if (node.kind === Kind.OBJECT) node.fields.forEach((field) => pending.push({ node: field.value, place: { parent: place, key: field.name.value } }));
      if (node.kind === Kind.VARIABLE) {
        const name = node.name.value;
        const fallback = defaults.get(name);
        if (Object.hasOwn(variables, name)) pending.push({ value: variables[name], place });
        else if (fallback) pending.push({ node: fallback, place });
      }
      continue;
    }
    const value = item.value;
    if (typeof value === 'string' && UNSAFE_TEXT.test(value)) return { place, kind: 'text' };
    // 1e309 parses to Infinity, in a variable's JSON as in a literal, and a JSON scalar would take it.
    if (isUnrepresentableNumber(value)) return { place, kind: 'number' };
    if (Array.isArray(value)) value.forEach((entry, index) => pending.push({ value: entry, place: { parent: place, key: index } }));
    else if (value !== null && typeof value === 'object') {
      for (const [key, entry] of Object.entries(value)) {
        if (UNSAFE_TEXT.test(key)) return { place, kind: 'text' };
        pending.push({ value: entry, place: { parent: place, key } });
      }
    }
  }
  return undefined;
}

/** Longest path reported: a deeply nested value must not turn a small request into a large answer. */
const MAX_PATH_LENGTH = 200;

/** `fixture.tenants[0].slug`: the argument's name, then each key down to the value. */
function pathOf(place: Place): string {
  const keys: (string | number)[] = [];
  for (let at: Place | undefined = place; at; at = at.parent) keys.unshift(at.key);
  const path = keys.map((key, index) => (typeof key === 'number' ? `[${key}]` : index === 0 ? key : `.${key}`)).join('');
  return path.length > MAX_PATH_LENGTH ? `${path.slice(0, MAX_PATH_LENGTH)}…` : path;
}
