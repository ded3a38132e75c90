import { readFileSync } from 'node:fs';
import { temporal } from '@temporalio/proto';
import { paymentAnswerSinks } from '../adapters/temporal/payment-answers.ts';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleWorkflows } from '../worker/create-worker.ts';

/**
 * Held authorizations wait for days and subscriptions bill for months, so workflows that met a failure before the
 * `held-authorizations-always-end` and `subscription-steps-outlast-failures` patches must replay on today's code as
 * they ran: a capture the processor refused (409, the authorization voided there) that left the hold as it was,
 * recorded by the worker of before these patches, and a subscription whose rebill PostgreSQL refused (SQLSTATE
 * 23514), which failed the workflow, recorded with its patch switched off (the steps the code took before it).
 */
let workflowBundle: WorkflowBundle;
beforeAll(async () => {
  workflowBundle = await bundleWorkflows();
}, 60_000);

const history = (path: string) => temporal.api.history.v1.History.decode(readFileSync(new URL(`./fixtures/${path}.binpb`, import.meta.url)));

describe('workflows that met a failure before the patches', () => {
  it('a held authorization whose capture the processor refused replays', async () => {
    await expect(Worker.runReplayHistory({ workflowBundle, sinks: paymentAnswerSinks() }, history('payment-histories/held-capture-refused-before-patch'), 'payment/replay-capture-refused')).resolves.toBeUndefined();
  });

  it('a paused subscription of before `subscription-waits-roll-over` that got a resume and a pause in one task replays', async () => {
    // Recorded by the worker of 7695019: paused, then resume and pause delivered together; it resumed and paused again.
    await expect(
      Worker.runReplayHistory({ workflowBundle, sinks: paymentAnswerSinks() }, history('subscription-histories/resume-and-pause-in-one-task-before-roll-over'), 'subscription/replay-resume-pause'),
    ).resolves.toBeUndefined();
  });

  it('a subscription whose rebill the gateway could not process, before `uncertain-rebill-charges-pause`, replays', async () => {
    // Recorded with that patch's branch taken out (the code of before): no merchant account had room for the rebill,
    // which was recorded, told and tried again after a continue-as-new, as the code of before did.
    await expect(
      Worker.runReplayHistory({ workflowBundle, sinks: paymentAnswerSinks() }, history('subscription-histories/rebill-not-processed-before-patch'), 'subscription/replay-not-processed'),
    ).resolves.toBeUndefined();
  });

  it('a subscription whose rebill payment was terminated, before `unfinished-rebill-payments-pause`, replays (its billing failed)', async () => {
    // Recorded with that patch's branch taken out: an operator terminated the rebill's payment while it asked about a
    // lost answer, and the subscription's workflow failed with it, as the code of before did.
    await expect(
      Worker.runReplayHistory({ workflowBundle, sinks: paymentAnswerSinks() }, history('subscription-histories/rebill-payment-terminated-before-patch'), 'subscription/replay-terminated'),
    ).resolves.toBeUndefined();
  });

  it('a subscription whose failed rebill said its charge was uncertain, before `payments-tell-uncertain-charges`, replays', async () => {
    // Recorded with that patch's branch taken out (a worker of before driving the subscription while a new one ran its
    // payment): the payment's end said `chargeUncertain`, the database had no row of it, and billing tried it again later.
    await expect(
      Worker.runReplayHistory({ workflowBundle, sinks: paymentAnswerSinks() }, history('subscription-histories/payment-told-uncertain-before-patch'), 'subscription/replay-told-uncertain'),
    ).resolves.toBeUndefined();
  });

  it('a subscription resumed after an uncertain charge, before `ask-about-uncertain-charge-before-charging-again`, replays', async () => {
    // Recorded with that patch's branch taken out: paused for a rebill whose answer was lost, resumed by the merchant,
    // and the period charged under a new order without asking the processor first, as the code of before did.
    await expect(
      Worker.runReplayHistory({ workflowBundle, sinks: paymentAnswerSinks() }, history('subscription-histories/uncertain-charge-resumed-before-patch'), 'subscription/replay-uncertain-resumed'),
    ).resolves.toBeUndefined();
  });

  it('a run started paused that took a resume before its first wait, before `resumes-at-run-start-told`, replays', async () => {
    // Recorded with that patch's branch taken out: continued as new while paused (its pause told), a resume in its
    // first workflow task, and billing went on unpaused without recording it, as the code of before did.
    await expect(
      Worker.runReplayHistory({ workflowBundle, sinks: paymentAnswerSinks() }, history('subscription-histories/resume-at-run-start-before-patch'), 'subscription/replay-resume-at-start'),
    ).resolves.toBeUndefined();
  });

  it('a subscription paused and resumed by updates, twelve at once among them, replays', async () => {
    // Recorded from "answers pauses and resumes sent at once each after its own turn" (test/rebills.test.ts).
    await expect(
      Worker.runReplayHistory({ workflowBundle, sinks: paymentAnswerSinks() }, history('subscription-histories/pauses-and-resumes-as-updates'), 'subscription/replay-updates'),
    ).resolves.toBeUndefined();
  });

  it('a subscription whose billing step failed replays', async () => {
    await expect(Worker.runReplayHistory({ workflowBundle, sinks: paymentAnswerSinks() }, history('subscription-histories/step-failed-before-patch'), 'subscription/replay-step-failed')).resolves.toBeUndefined();
  });
});
