import { readFileSync } from 'node:fs';
import { temporal } from '@temporalio/proto';
import { paymentAnswerSinks } from '../adapters/temporal/payment-answers.ts';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleWorkflows } from '../worker/create-worker.ts';

/**
 * Payments outlive deploys: a held authorization waits up to a week, a 3-D Secure challenge minutes. Histories
 * recorded by the worker before the payment workflow took fewer steps before its answer (`test/fixtures/
 * payment-histories/`: the client's `fetchHistory()` of real payments, encoded as binary protobuf; read one with
 * `temporal.api.history.v1.History.decode`) must replay on today's workflow code without a nondeterminism error:
 * the `fewer-steps-before-the-answer` patch keeps their old steps. So must payments recorded before the first attempt
 * became one step (`three-steps-*`: order and account, authorization, settlement as three local activities, recorded
 * by the gateway's hosted worker): the `first-attempt-in-one-step` patch keeps those.
 */
let workflowBundle: WorkflowBundle;
beforeAll(async () => {
  workflowBundle = await bundleWorkflows();
}, 60_000);

const history = (name: string) => temporal.api.history.v1.History.decode(readFileSync(new URL(`./fixtures/payment-histories/${name}.binpb`, import.meta.url)));

describe('payments recorded by the previous worker', () => {
  it('an approved submit (order, account, authorization, settlement, webhook and lead as local activities) replays', async () => {
    await expect(Worker.runReplayHistory({ workflowBundle, sinks: paymentAnswerSinks() }, history('approved-submit'), 'payment/replay-approved')).resolves.toBeUndefined();
  });

  it('an authorization held for capture replays up to its wait', async () => {
    await expect(Worker.runReplayHistory({ workflowBundle, sinks: paymentAnswerSinks() }, history('held-authorization'), 'payment/replay-held')).resolves.toBeUndefined();
  });
});

describe('payments recorded before the first step told the tenant', () => {
  // `one-step-*`: a checkout with a lead and a webhook endpoint; the first step's answer was followed by a step that
  // recorded the webhook and the paid lead. Today's first step records them itself; its result says so.
  it.each(['one-step-approved', 'one-step-declined'])('%s replays its step after the answer', async (name) => {
    await expect(Worker.runReplayHistory({ workflowBundle, sinks: paymentAnswerSinks() }, history(name), `payment/replay-${name}`)).resolves.toBeUndefined();
  });
});

describe('payments recorded before the first attempt became one step', () => {
  it.each(['three-steps-approved', 'three-steps-declined', 'three-steps-subscription'])('%s replays its three steps', async (name) => {
    await expect(Worker.runReplayHistory({ workflowBundle, sinks: paymentAnswerSinks() }, history(name), `payment/replay-${name}`)).resolves.toBeUndefined();
  });
});
