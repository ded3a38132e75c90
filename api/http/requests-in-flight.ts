import type { FastifyInstance, FastifyRequest } from 'fastify';

export interface RequestsInFlight {
  /** Requests whose work is not done yet. */
  readonly count: number;
  /** Resolves once no request is in flight, or when `signal` aborts (whatever is still running is then left). */
  settled(signal: AbortSignal): Promise<void>;
}

/**
 * Counts the requests whose work is still running. A client that hangs up does not stop its request's handler
 * (Fastify does not cancel it), and its closed connection no longer holds `app.close()`: the gateway's stop waits
 * for this count before it closes the pools and Temporal, so such a handler never meets a closed database.
 *
 * A request counts from `onRequest` until its answer is sent (`onSend`, which runs even when the client is gone;
 * errors and 404s are sent too). A request whose client hangs up before or while its body is read does no
 * more work (Fastify waits for a body that never comes and runs neither validation nor handler), so it stops
 * counting then. Not covered, since no route does either: `reply.hijack()`, and an async handler that returns
 * nothing after its client hung up; such a request would hold the stop until its deadline.
 * Callback hooks, not async ones: they run on every request, and a promise each is measurable there.
 */
export function trackRequestsInFlight(app: FastifyInstance): RequestsInFlight {
  /** Each request in flight, and whether it is waiting for its body. */
  const running = new WeakMap<FastifyRequest, { readingBody: boolean }>();
  let count = 0;
  let waiters: (() => void)[] = [];
  const done = (request: FastifyRequest) => {
    if (!running.delete(request)) return;
    count -= 1;
    if (count === 0) for (const wake of waiters.splice(0)) wake();
  };
  const clientGone = (request: FastifyRequest) => request.raw.destroyed || request.raw.socket?.destroyed === true;

  app.addHook('onRequest', (request, _reply, next) => {
    running.set(request, { readingBody: false });
    count += 1;
    next();
  });
  app.addHook('preParsing', (request, _reply, payload, next) => {
    const state = running.get(request);
    if (state && clientGone(request)) {
      done(request);
    } else if (state) {
      state.readingBody = true;
      // The request stream also closes once its body is read; only a hang-up while reading ends the request's work.
      request.raw.once('close', () => {
        if (state.readingBody && clientGone(request)) done(request);
      });
    }
    next(null, payload);
  });
  app.addHook('preValidation', (request, _reply, next) => {
    const state = running.get(request);
    if (state) state.readingBody = false;
    next();
  });
  app.addHook('onSend', (request, reply, payload, next) => {
    // Fastify logs no "request completed" for these: say how the request ended, for whoever follows its id.
    if (request.raw.socket?.destroyed === true) request.log.info({ statusCode: reply.statusCode }, 'answer not sent: the client hung up');
    done(request);
    next(null, payload);
  });

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
