import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { writeInGroups } from '../../activities/shared/write-in-groups.ts';

describe('writing items in groups as they arrive', () => {
  it('writes the first item at once and what arrives during that write together next', async () => {
    const groups: string[][] = [];
    let finishWrite: () => void = () => {};
    const writer = writeInGroups<string>(async (group) => {
      groups.push([...group]);
      await new Promise<void>((resolve) => (finishWrite = resolve));
    });
    writer.add('a');
    expect(groups).toEqual([['a']]);
    writer.add('b');
    writer.add('c');
    expect(groups).toEqual([['a']]);
    finishWrite();
    await new Promise((resolve) => setImmediate(resolve));
    expect(groups).toEqual([['a'], ['b', 'c']]);
    finishWrite();
    await writer.settled();
    // Idle again: the next item is written at once, on its own.
    writer.add('d');
    expect(groups).toEqual([['a'], ['b', 'c'], ['d']]);
    finishWrite();
    await writer.settled();
  });

  it('goes on writing after a write that throws, and settles with its error', async () => {
    const written: string[][] = [];
    const writer = writeInGroups<string>(async (group) => {
      if (group.includes('bad')) throw new Error('statement refused');
      written.push([...group]);
    });
    writer.add('bad');
    writer.add('after');
    await expect(writer.settled()).rejects.toThrow('statement refused');
    expect(written).toEqual([['after']]);
  });

  it('writes every item once, in the order added, one write at a time, and is settled only when all are written', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(fc.integer(), { minLength: 1, maxLength: 30 }), async (s, items) => {
        const added: number[] = [];
        const written: number[] = [];
        let writesInFlight = 0;
        let mostInFlight = 0;
        const writer = writeInGroups<number>(async (group) => {
          mostInFlight = Math.max(mostInFlight, ++writesInFlight);
          // What a write sends is what it was given when it started (a statement's parameters).
          const sent = [...group];
          await s.schedule(Promise.resolve(), 'write');
          written.push(...sent);
          writesInFlight--;
        });
        // Items arrive in whatever order and at whatever moment the scheduler picks, between writes or during one.
        const arrivals = items.map((item) => s.schedule(Promise.resolve(item), 'arrival').then((value) => (added.push(value), writer.add(value))));
        let writtenWhenSettled = -1;
        const settled = Promise.all(arrivals)
          .then(() => writer.settled())
          .then(() => (writtenWhenSettled = written.length));
        await s.waitFor(settled);
        expect(written).toEqual(added);
        expect(writtenWhenSettled).toBe(items.length);
        expect(mostInFlight).toBe(1);
      }),
    );
  });
});
