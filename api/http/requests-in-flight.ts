import type { FastifyInstance, FastifyRequest } from 'fastify';

export interface RequestsInFlight {
  /** Requests whose answer is not decided yet. */
  readonly count: number;
  /** Resolves once no request is in flight, or when `signal` aborts (whatever is still running is then left). */
  settled(signal: AbortSignal): Promise<void>;
}

/**
 * Counts the requests whose work is still running. A client that hangs up does not stop its request's handler
 * (Fastify does not cancel it), and its closed connection no longer holds `app.close()`: the gateway's stop waits
 * for this count before it closes the pools and Temporal, so such a handler never meets a closed database.
 * A request counts from `onRequest` until its answer is sent (`onSend`, which runs even when the client is gone)
 * or, failing that, until its response ends.
 */
export function trackRequestsInFlight(app: FastifyInstance): RequestsInFlight {
  const running = new WeakSet<FastifyRequest>();
  let count = 0;
  let waiters: (() => void)[] = [];
  const done = (request: FastifyRequest) => {
    if (!running.delete(request)) return;
    count -= 1;
    if (count === 0) for (const wake of waiters.splice(0)) wake();
  };
  app.addHook('onRequest', async (request) => {
    running.add(request);
    count += 1;
  });
  app.addHook('onSend', async (request, reply, payload) => {
    // Fastify logs no "request completed" for these: say how the request ended, for whoever follows its id.
    if (request.raw.socket?.destroyed === true) request.log.info({ statusCode: reply.statusCode }, 'answer not sent: the client hung up');
    done(request);
    return payload;
  });
  app.addHook('onResponse', async (request) => done(request));

  return {
    get count() {
      return count;
    },
    settled(signal) {
      if (count === 0 || signal.aborted) return Promise.resolve();
      return new Promise((resolve) => {
        const wake = () => {
          signal.removeEventListener('abort', wake);
          waiters = waiters.filter((waiter) => waiter !== wake);
          resolve();
        };
        waiters.push(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    },
  };
}
