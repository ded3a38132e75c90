import { Type } from '@sinclair/typebox';
import type { TypedApp } from '../http/typed-app.ts';
import { stringEnum } from '../http/schemas.ts';
import { PUBLIC } from '../http/security.ts';

const Check = Type.String({ description: '`ok`, or a short reason the dependency is not usable', examples: ['ok'] });
const readiness = (description: string) =>
  Type.Object(
    {
      status: stringEnum(['ready', 'not_ready']),
      checks: Type.Object({ postgres: Check, temporal: Check, worker: Check }),
    },
    { description },
  );

/** Readiness probes: each answers 'ok' or a short reason. */
export interface ReadinessProbes {
  postgres(): Promise<void>;
  temporal(): Promise<void>;
  workerPolling(): Promise<void>;
}

/**
 * How long a probe may take: a dependency that does not answer (a frozen database, a Temporal server that accepts
 * connections and says nothing) is not ready, and a load balancer's health check must hear so, not hang with it.
 */
export const PROBE_TIMEOUT_MS = 3_000;

async function probe(check: () => Promise<void>, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const silence = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs / 1000} s`), timeoutMs);
  });
  const answer = check().then(
    () => 'ok',
    (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 200),
  );
  try {
    return await Promise.race([answer, silence]);
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoutes(app: TypedApp, probes: ReadinessProbes, options: { probeTimeoutMs?: number } = {}): void {
  const timeoutMs = options.probeTimeoutMs ?? PROBE_TIMEOUT_MS;
  app.get('/healthz', {
    schema: {
      operationId: 'health',
      summary: 'Liveness: the gateway process is up',
      tags: ['operations'],
      security: PUBLIC,
      response: { 200: Type.Object({ status: Type.Literal('ok') }, { description: 'The process is up' }) },
    },
    handler: async () => ({ status: 'ok' as const }),
  });

  app.get('/readyz', {
    schema: {
      operationId: 'readiness',
      summary: 'Readiness: PostgreSQL and Temporal reachable, a worker polling the task queue',
      tags: ['operations'],
      security: PUBLIC,
      response: {
        200: readiness('Ready to take payments'),
        503: readiness('Not ready: `checks` says which dependency is not usable'),
      },
    },
    async handler(_request, reply) {
      const [postgres, temporal, worker] = await Promise.all([probe(probes.postgres, timeoutMs), probe(probes.temporal, timeoutMs), probe(probes.workerPolling, timeoutMs)]);
      const ready = postgres === 'ok' && temporal === 'ok' && worker === 'ok';
      return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks: { postgres, temporal, worker } });
    },
  });
}
