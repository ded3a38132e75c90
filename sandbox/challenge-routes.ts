/** The cardholder's side of 3-D Secure: the challenge page and the choice posted from it. */
import type { FastifyInstance } from 'fastify';
import { challengeFormPage, challengeResultPage, finishedChallengePage, unknownChallengePage } from './challenge-page.ts';
import type { Ledger } from './ledger.ts';
import { challengeResult } from './outcomes.ts';
import { parseChallengeOutcome } from './request-bodies.ts';

export function registerChallengeRoutes(app: FastifyInstance, ledger: Ledger): void {
  app.get('/challenge/:id', async (request, reply) => {
    const authorization = ledger.byId((request.params as { id: string }).id);
    reply.type('text/html; charset=utf-8');
    if (!authorization?.challenge) return reply.code(404).send(unknownChallengePage());
    if (authorization.challenge.state !== 'pending' || authorization.answer.status !== 'challenge_required') {
      return reply.send(finishedChallengePage(authorization.challenge.state));
    }
    return reply.send(challengeFormPage(authorization));
  });

  app.post('/challenge/:id', async (request, reply) => {
    const authorization = ledger.byId((request.params as { id: string }).id);
    const wantsJson = String(request.headers['content-type'] ?? '').includes('json') || String(request.headers.accept ?? '').includes('application/json');
    if (!authorization?.challenge) {
      return wantsJson ? reply.code(404).send({ error: 'not_found' }) : reply.code(404).type('text/html; charset=utf-8').send(unknownChallengePage());
    }
    const outcome = parseChallengeOutcome(request.body);
    const { challenge } = authorization;
    // The cardholder's first choice counts; later posts only show it.
    if (challenge.state === 'pending' && authorization.answer.status === 'challenge_required') {
      challenge.state = challengeResult(challenge, outcome);
    }
    if (wantsJson) return reply.send({ id: authorization.id, challenge: challenge.state });
    return reply.type('text/html; charset=utf-8').send(challengeResultPage(challenge.state));
  });
}
