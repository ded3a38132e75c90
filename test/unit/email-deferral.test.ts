import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { whatIsLeft } from '../../domain/email/deferral.ts';

/** One e-mail's attempts as they went: who was left after each, whether someone had it, who refused it for good. */
interface State {
  readonly recipients: readonly string[] | undefined;
  readonly delivered: boolean;
  readonly undelivered: readonly string[];
}

/** A chain of attempts from "every recipient, nothing known" on: each leaves a non-empty part of those it tried. */
const attemptChain = fc
  .uniqueArray(fc.emailAddress(), { minLength: 1, maxLength: 6 })
  .chain((everyone) =>
    fc.array(fc.tuple(fc.array(fc.boolean(), { minLength: everyone.length, maxLength: everyone.length }), fc.boolean()), { maxLength: 5 }).map((attempts) => {
      const chain: State[] = [{ recipients: undefined, delivered: false, undelivered: [] }];
      for (const [keeps, tookSome] of attempts) {
        const before = chain.at(-1)!;
        const tried = before.recipients ?? everyone;
        const left = tried.filter((_, index) => keeps[index]);
        if (left.length === 0) break; // nobody left: the e-mail is no longer queued
        const refused = tried.filter((address) => !left.includes(address) && !tookSome);
        chain.push({ recipients: left, delivered: before.delivered || (tookSome && left.length < tried.length), undelivered: [...before.undelivered, ...refused] });
      }
      return chain;
    }),
  );

const asSet = (list: readonly string[] | undefined) => (list === undefined ? undefined : [...list].sort());

describe('what is left of a deferred e-mail', () => {
  it('is what the later of the two records knows, whichever of them (workflow or row) is behind', () => {
    fc.assert(
      fc.property(attemptChain, fc.nat(), fc.nat(), (chain, i, j) => {
        const workflowSaw = chain[i % chain.length]!;
        const rowSaw = chain[j % chain.length]!;
        const later = chain[Math.max(i % chain.length, j % chain.length)]!;
        const left = whatIsLeft(
          { id: 'e', ...(workflowSaw.recipients ? { recipients: workflowSaw.recipients } : {}), delivered: workflowSaw.delivered, undelivered: [...workflowSaw.undelivered] },
          { retryRecipients: rowSaw.recipients ?? null, deliveredToSomeone: rowSaw.delivered, undeliveredRecipients: rowSaw.undelivered },
        );
        expect(asSet(left.recipients)).toEqual(asSet(later.recipients));
        expect(left.delivered).toBe(later.delivered);
        expect(asSet(left.undelivered ?? [])).toEqual(asSet(later.undelivered));
      }),
    );
  });

  it('reads a workflow deferral written before `delivered` was kept as a delivery (it named recipients only then)', () => {
    const left = whatIsLeft({ id: 'e', recipients: ['late@inbox.example'] }, { retryRecipients: null, deliveredToSomeone: false, undeliveredRecipients: [] });
    expect(left).toEqual({ id: 'e', recipients: ['late@inbox.example'], delivered: true });
  });

  it('sends to every recipient when neither record names any', () => {
    expect(whatIsLeft({ id: 'e' }, { retryRecipients: null, deliveredToSomeone: false, undeliveredRecipients: [] })).toEqual({ id: 'e', delivered: false });
  });
});
