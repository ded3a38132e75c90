import { visit, type JSONPath } from 'jsonc-parser';

/** What every API says of a field given twice, after its name. */
export const DUPLICATE_KEY_PROBLEM = 'is given more than once in its object; give each field once';

/**
 * The path (`card.number`, `emails[1].to`) of the first field given twice in one object of `text`, which is valid
 * JSON (read by `JSON.parse` already); undefined when there is none. Keys compare as `JSON.parse` reads them, escapes
 * decoded (`"a"` and `"\u0061"` are one key). Throws a RangeError for a body nested too deep to walk.
 */
export function firstDuplicateKey(text: string): string | undefined {
  const keysOfOpenObjects: Set<string>[] = [];
  try {
    visit(text, {
      onObjectBegin: () => void keysOfOpenObjects.push(new Set()),
      onObjectProperty: (property, _offset, _length, _line, _character, pathSupplier) => {
        const keys = keysOfOpenObjects.at(-1)!;
        // The first one found ends the walk: nothing after it is looked at.
        if (keys.has(property)) throw new FoundDuplicate(pathOf([...pathSupplier(), property]));
        keys.add(property);
      },
      onObjectEnd: () => void keysOfOpenObjects.pop(),
    });
  } catch (error) {
    if (error instanceof FoundDuplicate) return error.path;
    throw error;
  }
  return undefined;
}

/** Thrown out of the walk once a key is found twice. */
class FoundDuplicate {
  constructor(readonly path: string) {}
}

/** `emails[1].to`, as the APIs name a field. */
function pathOf(path: JSONPath): string {
  return path.reduce<string>((text, step) => (typeof step === 'number' ? `${text}[${step}]` : text === '' ? step : `${text}.${step}`), '');
}
