/** The merchant's side: the `/v1/authorizations` API the gateway's sandbox adapter calls. */
import type { FastifyInstance } from 'fastify';
import type { Authorization, Ledger } from './ledger.ts';
import { amountRule, authorize, completedAnswer, differingDetails, voidedAnswer } from './outcomes.ts';
import { parseAuthorizationBody, parseProceedWithoutAuthentication } from './request-bodies.ts';
import type { SlowAnswers } from './slow-answers.ts';
import { APPROVED, PREAUTHORIZED } from './test-cards.ts';

export interface AuthorizationRoutesContext {
  readonly ledger: Ledger;
  readonly slowAnswers: SlowAnswers;
  readonly slowResponseMs: number;
  /** Read per request: the listening URL is known only once the server listens. */
  readonly publicUrl: () => string;
}

export function registerAuthorizationRoutes(app: FastifyInstance, { ledger, slowAnswers, slowResponseMs, publicUrl }: AuthorizationRoutesContext): void {
  app.post('/v1/authorizations', async (request, reply) => {
    const body = parseAuthorizationBody(request.body);

    const known = ledger.byReference(body.reference);
    if (known) {
      const differing = differingDetails(known, body);
      if (differing.length > 0) return reply.code(409).send({ error: 'reference_reused', fields: differing });
      return reply.header('sandbox-replayed', 'true').send(known.answer);
    }

    const rule = amountRule(body.amount);
    if (rule === 'unavailable') return reply.code(500).send({ error: 'processor unavailable' });

    const authorization = authorize(body, ledger.firstMerchantOf(body.orderReference, body.merchantId), publicUrl());
    // Authorize only: an approval now, or one its 3-D Secure challenge gives later, waits for its capture.
    if (!body.capture && (authorization.answer.status === 'approved' || authorization.answer.status === 'challenge_required')) authorization.capture = 'pending';
    authorization.answer = heldIfAuthorizeOnly(authorization);
    ledger.record(authorization);

    // Snapshot: a 3DS completion during the delay must not change what this first answer says.
    const answer = { ...authorization.answer };
    if (rule === 'slow') await slowAnswers.wait(slowResponseMs);
    return reply.send(answer);
  });

  app.get('/v1/authorizations/:reference', async (request, reply) => {
    const { reference } = request.params as { reference: string };
    const authorization = ledger.byReference(reference);
    if (!authorization) return reply.code(404).send({ error: 'not_found' });
    return reply.send(authorization.answer);
  });

  app.post('/v1/authorizations/:id/3ds-complete', async (request, reply) => {
    const authorization = ledger.byId((request.params as { id: string }).id);
    if (!authorization) return reply.code(404).send({ error: 'not_found' });
    const proceedWithoutAuthentication = parseProceedWithoutAuthentication(request.body);
    const { challenge } = authorization;
    if (!challenge) return reply.code(409).send({ error: 'no_challenge', status: authorization.answer.status });
    // Already final (completed or voided): the same answer again.
    if (authorization.answer.status !== 'challenge_required') return reply.send(authorization.answer);
    if (challenge.state === 'pending') return reply.code(409).send({ status: 'challenge_pending' });
    authorization.answer = completedAnswer(authorization, proceedWithoutAuthentication);
    authorization.answer = heldIfAuthorizeOnly(authorization);
    return reply.send(authorization.answer);
  });

  app.post('/v1/authorizations/:id/void', async (request, reply) => {
    const authorization = ledger.byId((request.params as { id: string }).id);
    if (!authorization) return reply.code(404).send({ error: 'not_found' });
    const { status } = authorization.answer;
    if (status === 'declined') return reply.code(409).send({ error: 'not_voidable', status });
    if (authorization.capture === 'captured') return reply.code(409).send({ error: 'already_captured', status });
    if (status !== 'voided') authorization.answer = voidedAnswer(authorization);
    return reply.send({ id: authorization.id, status: 'voided' });
  });

  // Captures an authorization made with `capture: false`; capturing again answers the same.
  app.post('/v1/authorizations/:id/capture', async (request, reply) => {
    const authorization = ledger.byId((request.params as { id: string }).id);
    if (!authorization) return reply.code(404).send({ error: 'not_found' });
    if (authorization.answer.status !== 'approved') return reply.code(409).send({ error: 'not_capturable', status: authorization.answer.status });
    if (authorization.capture === 'pending') {
      authorization.capture = 'captured';
      authorization.answer = { ...authorization.answer, code: APPROVED.statusId, message: APPROVED.message };
    }
    return reply.send({ id: authorization.id, status: 'captured', code: APPROVED.statusId, message: APPROVED.message });
  });
}

/** An approval of an authorization made with `capture: false` answers Preauthorized: nothing is charged until captured. */
function heldIfAuthorizeOnly(authorization: Authorization): Authorization['answer'] {
  const { answer } = authorization;
  return authorization.capture === 'pending' && answer.status === 'approved' ? { ...answer, code: PREAUTHORIZED.statusId, message: PREAUTHORIZED.message } : answer;
}

