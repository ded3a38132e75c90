import type { FastifyInstance } from 'fastify';
import { maskCardNumbers } from '../../domain/payments/card-echo.ts';

/**
 * An error answer never repeats a card number in plain text. Error texts quote what they refuse so that a caller can
 * find it (`No such payment: '…'`, `is not a valid e-mail address: …`, an Origin, a query parameter's name), and a
 * card number pasted into the wrong field, path or header would travel back whole, into whatever the caller's
 * proxies and logs keep. It is masked as a processor's echo is (first 6 and last 4 digits, only a number passing
 * Luhn: the amounts and ids errors quote stay as they are). Successful answers are records as they are stored.
 */
export function maskCardNumbersInErrorAnswers(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply, payload) => (reply.statusCode >= 400 && typeof payload === 'string' ? maskCardNumbers(payload) : payload));
}
