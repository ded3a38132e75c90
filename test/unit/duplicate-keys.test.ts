import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstDuplicateKey } from '../../domain/validation/duplicate-keys.ts';

describe('a field given twice in one object of a JSON body', () => {
  it.each([
    ['{"a":1,"a":2}', 'a'],
    ['{"a":1,"\\u0061":2}', 'a'],
    ['{"card":{"number":"1","number":"2"}}', 'card.number'],
    ['{"emails":[{"to":1},{"to":1,"to":2}]}', 'emails[1].to'],
    ['{"x":{"y":1},"x":{"y":2}}', 'x'],
    ['{"a":1,"a":2,"b":{"c":1,"c":2}}', 'a'],
  ])('is found in %s, named %s', (text, path) => {
    expect(firstDuplicateKey(text)).toBe(path);
  });

  it.each(['{"a":{"b":1},"b":1}', '[1,2,{"x":1},{"x":2}]', '{"a":[{"a":1}],"b":{"a":2}}', '"text"', '{}', '{"a":"a","b":"a"}'])('is not found where each object gives each key once: %s', (text) => {
    expect(firstDuplicateKey(text)).toBeUndefined();
  });

  it('is never found in what JSON.stringify writes, whatever the value', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => firstDuplicateKey(JSON.stringify(value)) === undefined));
  });

  it('is found, and named, when an object gives its first key again after all the others, whatever they hold', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }), fc.jsonValue(), (object, extra) => {
        const [key] = Object.keys(object);
        const text = JSON.stringify(object);
        const repeated = `${text.slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(extra) ?? 'null'}}`;
        // Nothing before the repeated key gives a key twice (JSON.stringify wrote it), so it is the one found.
        return firstDuplicateKey(`{"wrapper":${repeated}}`) === `wrapper.${key}`;
      }),
    );
  });

  it('gives up on a body nested deeper than it can walk (a RangeError: such bodies are left to the routes, which refuse that depth naming the field)', () => {
    expect(() => firstDuplicateKey(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)).toThrow(RangeError);
  });
});
