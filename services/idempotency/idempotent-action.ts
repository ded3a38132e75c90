import type { EntityManager } from '@mikro-orm/postgresql';
import { claimActionKey, findActionKey, releaseActionKey, storeActionAnswer, type ActionRequest } from '../../data/queries/action-idempotency-keys.ts';
import type { Logger } from '../../domain/logger.ts';
import { PaymentApiError } from '../../domain/payments-api/errors.ts';

/** What an action may take beyond the answer timeout: its claim and answer's statements, a subscription's signal. */
const ACTION_MARGIN_SECONDS = 30;

/**
 * How old a claim with no answer must be to count as abandoned (its process died mid-action), so that a retry of the
 * same request takes it over: the longest an action of a live request can take, which is a capture or void waiting
 * at most the answer timeout (`SUBMIT_ANSWER_TIMEOUT_MS`), and a margin; a subscription action takes some seconds.
 * A claim taken over while its first request still runs would only act twice, and each action sets a state.
 */
export function abandonedActionAfterSeconds(answerTimeoutMs: number): number {
  return Math.ceil(answerTimeoutMs / 1000) + ACTION_MARGIN_SECONDS;
}

/**
 * Runs an action on an existing resource (capture, void; a subscription's cancel, pause, resume) at most once per
 * Idempotency-Key: the key's first request acts and its answer is kept; a repeat answers that answer, whatever has
 * happened to the resource since (a pause retried after someone resumed does not pause again); the key used with
 * another action or resource is 409 `idempotency_key_reused`, and while its first request runs, 409
 * `idempotency_key_in_use`. An action that fails keeps no key: its retry runs again. Without a key the action runs
 * as asked, each time (the actions are idempotent by themselves: they set a state).
 */
export async function actOnce<Answer>(
  deps: { em: EntityManager; logger: Logger; abandonedAfterSeconds: number },
  request: Omit<ActionRequest, 'key'> & { key: string | undefined },
  act: () => Promise<Answer>,
): Promise<Answer> {
  const { key } = request;
  if (key === undefined) return act();
  const keyed: ActionRequest = { ...request, key };
  const claim = await claimActionKey(deps.em, keyed, deps.abandonedAfterSeconds);
  if (claim === undefined) return replay(deps.em, keyed);
  let answer: Answer;
  try {
    answer = await act();
  } catch (error) {
    // The action's own refusal is the answer; a key that cannot be given back waits until it counts as abandoned (409 meanwhile).
    await releaseActionKey(deps.em, keyed, claim).catch((releaseError: unknown) => {
      deps.logger.error({ action: keyed.action, target: keyed.target, error: releaseError instanceof Error ? releaseError.name : typeof releaseError }, 'idempotent action key not given back');
    });
    throw error;
  }
  // The action is done: its answer is the caller's even when it cannot be kept (a repeat then finds the key running,
  // 409, until the claim is abandoned and a retry takes it over: the actions set a state, so acting again is safe).
  await storeActionAnswer(deps.em, keyed, claim, answer).catch((error: unknown) => {
    deps.logger.error({ action: keyed.action, target: keyed.target, error: error instanceof Error ? error.name : typeof error }, 'idempotent action answer not kept');
  });
  return answer;
}

async function replay<Answer>(em: EntityManager, request: ActionRequest): Promise<Answer> {
  const stored = await findActionKey(em, request.tenantId, request.key);
  // Released between the claim and this read (its action failed): the caller retries and acts.
  if (!stored) throw inUse();
  if (stored.action !== request.action || stored.target !== request.target) {
    throw new PaymentApiError('idempotency_error', 'idempotency_key_reused', `Idempotency-Key was already used with a different request (${stored.action} of ${stored.target})`, { param: 'Idempotency-Key' });
  }
  if (stored.answer === null) throw inUse();
  return stored.answer as Answer;
}

const inUse = () => new PaymentApiError('idempotency_error', 'idempotency_key_in_use', 'The first request with this Idempotency-Key is still running; retry it shortly', { param: 'Idempotency-Key' });
