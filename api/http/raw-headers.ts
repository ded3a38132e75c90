import type { FastifyRequest } from 'fastify';

/**
 * How many times the request carries a header, as sent. Node folds repeats before a handler sees them (it keeps the
 * first `Authorization`, joins other headers with `, `), so a header given twice reads as one value nobody sent.
 */
export function timesGiven(request: FastifyRequest, header: string): number {
  const name = header.toLowerCase();
  return request.raw.rawHeaders.filter((value, index) => index % 2 === 0 && value.toLowerCase() === name).length;
}
