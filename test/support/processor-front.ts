import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

/** What the front does instead of passing a request on to the sandbox processor. */
export interface FrontRules {
  /** Refuse this many status inquiries (`GET /v1/authorizations/:reference`) with 401 first, as a processor refusing our credentials. */
  readonly refusedInquiries?: number;
  /** Refuse every void (`POST /v1/authorizations/:id/void`) with 401, as a processor refusing our credentials for it. */
  readonly refusedVoids?: boolean;
  /** Decline every authorization of the first order it sees with this status (the sandbox's own answer shape), as an issuer would. */
  readonly declineFirstOrder?: { readonly code: number; readonly message: string };
  /**
   * Echo the card an authorization was sent with, as careless processors do: `answer` adds it to the sandbox's answer,
   * `refusal` refuses the authorization (400) with an error naming it.
   */
  readonly echoCard?: 'answer' | 'refusal';
  /** Fields laid over every approval the sandbox answers an authorization with (an odd auth code, an ECI that is none). */
  readonly approvalFields?: Record<string, unknown>;
  /** Drop every authorization of this amount unsent (the connection closed without an answer): the processor never sees it. */
  readonly dropAuthorizationsOf?: string;
}

/**
 * A real HTTP front before the sandbox processor, for what the sandbox decides by card and amount alone and a test
 * needs otherwise (an issuer declining one order and approving the next at the same amount, a status inquiry
 * refused). Everything else passes through unchanged.
 */
export async function startProcessorFront(target: string, initialRules: FrontRules) {
  let rules = initialRules;
  let inquiries = 0;
  const inquired: string[] = [];
  let declinedOrder: string | undefined;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const answer = (status: number, json: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
      if (request.method === 'GET' && request.url?.startsWith('/v1/authorizations/')) inquired.push(decodeURIComponent(request.url.slice('/v1/authorizations/'.length)));
      if (request.method === 'GET' && request.url?.startsWith('/v1/authorizations/') && ++inquiries <= (rules.refusedInquiries ?? 0)) {
        return answer(401, { error: 'unauthorized' });
      }
      if (request.method === 'POST' && request.url === '/v1/authorizations' && rules.dropAuthorizationsOf !== undefined) {
        if ((JSON.parse(body.toString('utf8')) as { amount: string }).amount === rules.dropAuthorizationsOf) return response.destroy();
      }
      if (request.method === 'POST' && rules.refusedVoids && /^\/v1\/authorizations\/[^/]+\/void$/.test(request.url ?? '')) return answer(401, { error: 'unauthorized' });
      if (request.method === 'POST' && request.url === '/v1/authorizations' && rules.declineFirstOrder) {
        const authorization = JSON.parse(body.toString('utf8')) as { reference: string; orderReference: string };
        declinedOrder ??= authorization.orderReference;
        if (authorization.orderReference === declinedOrder) {
          return answer(200, { id: `sbx_${randomUUID()}`, reference: authorization.reference, status: 'declined', ...rules.declineFirstOrder });
        }
      }
      const sentCard = request.method === 'POST' && request.url === '/v1/authorizations' && rules.echoCard ? (JSON.parse(body.toString('utf8')) as { card: { number: string; cvv?: string } }).card : undefined;
      if (sentCard && rules.echoCard === 'refusal') return answer(400, { error: `card.number ${sentCard.number} (cvv ${sentCard.cvv}) failed issuer validation` });
      fetch(`${target}${request.url}`, { method: request.method, headers: { 'content-type': 'application/json' }, body: body.length > 0 ? body : undefined })
        .then(async (passed) => {
          const text = await passed.text();
          let echoed = sentCard ? JSON.stringify({ ...(JSON.parse(text) as object), card: { number: sentCard.number.replace(/(\d{4})(?=\d)/g, '$1 '), cvv: sentCard.cvv } }) : text;
          const answered = request.url === '/v1/authorizations' && rules.approvalFields ? (JSON.parse(echoed) as { status?: string }) : undefined;
          if (answered?.status === 'approved') echoed = JSON.stringify({ ...answered, ...rules.approvalFields });
          response.writeHead(passed.status, { 'content-type': 'application/json' }).end(echoed);
        })
        .catch(() => response.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    inquiries: () => inquiries,
    /** The references asked about so far, in order. */
    inquired: () => [...inquired],
    /**
     * Changes the rules from the next request on (`refusedInquiries` counts from the inquiries made so far, and
     * `declineFirstOrder` from the orders seen so far).
     */
    setRules: (next: FrontRules) => {
      rules = { ...next, ...(next.refusedInquiries !== undefined ? { refusedInquiries: inquiries + next.refusedInquiries } : {}) };
      // `declineFirstOrder` given anew declines the first order seen from now on.
      if (next.declineFirstOrder) declinedOrder = undefined;
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
