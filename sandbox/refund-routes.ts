/**
 * Refunds of approved authorizations: `POST /v1/authorizations/:id/refunds` (idempotent by `reference`) and the
 * inquiry `GET /v1/refunds/:reference`. The sandbox keeps its own total per authorization, as a real processor
 * does, and declines a refund that would exceed the authorized amount (4313 Credit Exceeds Original Amount).
 * Amount rules apply as for authorizations: `.97` answers HTTP 500 without refunding, `.98` refunds and then
 * answers late (the gateway's timeout fires first, so it must ask before sending again).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { SandboxHttpError } from './http-setup.ts';
import type { Ledger, RefundAnswer } from './ledger.ts';
import { amountRule } from './outcomes.ts';
import type { SlowAnswers } from './slow-answers.ts';
import { APPROVED } from './test-cards.ts';

const CREDIT_EXCEEDS_ORIGINAL = { statusId: 4313, message: 'Credit Exceeds Original Amount' } as const;

export function registerRefundRoutes(app: FastifyInstance, context: { ledger: Ledger; slowAnswers: SlowAnswers; slowResponseMs: number }): void {
  const { ledger } = context;

  app.post('/v1/authorizations/:id/refunds', async (request, reply) => {
    const authorization = ledger.byId((request.params as { id: string }).id);
    if (!authorization) return reply.code(404).send({ error: 'not_found' });
    const body = parseRefundBody(request.body);
    const known = ledger.refundByReference(body.reference);
    if (known) return reply.header('sandbox-replayed', 'true').send(known);
    if (authorization.answer.status !== 'approved') return reply.code(409).send({ error: 'not_refundable', status: authorization.answer.status });

    const rule = amountRule(body.amount);
    if (rule === 'unavailable') return reply.code(500).send({ error: 'processor unavailable' });
    const refunded = ledger.refundedCents(authorization.id);
    const exceeds = refunded + cents(body.amount) > cents(authorization.amount);
    const answer: RefundAnswer = exceeds
      ? { id: `sbr_${randomUUID()}`, reference: body.reference, authorizationId: authorization.id, status: 'declined', code: CREDIT_EXCEEDS_ORIGINAL.statusId, message: CREDIT_EXCEEDS_ORIGINAL.message, amount: body.amount }
      : { id: `sbr_${randomUUID()}`, reference: body.reference, authorizationId: authorization.id, status: 'refunded', code: APPROVED.statusId, message: APPROVED.message, amount: body.amount };
    ledger.recordRefund(answer);
    if (rule === 'slow') await context.slowAnswers.wait(context.slowResponseMs);
    return reply.send(answer);
  });

  app.get('/v1/refunds/:reference', async (request, reply) => {
    const refund = ledger.refundByReference((request.params as { reference: string }).reference);
    if (!refund) return reply.code(404).send({ error: 'not_found' });
    return reply.send(refund);
  });
}

function parseRefundBody(body: unknown): { reference: string; amount: string } {
  const record = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  const reference = record?.reference;
  const amount = record?.amount;
  if (typeof reference !== 'string' || reference.length === 0 || reference.length > 200) throw new SandboxHttpError(400, 'reference must be a string of 1 to 200 characters');
  if (typeof amount !== 'string' || !/^\d{1,15}\.\d{2}$/.test(amount) || /^0+\.00$/.test(amount)) throw new SandboxHttpError(400, 'amount must be a positive decimal string with two decimals');
  return { reference, amount };
}

/** Exact cents of a two-decimal string. */
function cents(amount: string): bigint {
  return BigInt(amount.replace('.', ''));
}
