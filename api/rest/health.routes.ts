import { Type } from '@sinclair/typebox';
import { defineRoute } from '../http/route.ts';

const Check = Type.Union([Type.Literal('ok'), Type.String()]);
const Readiness = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not_ready')]),
  checks: Type.Object({ postgres: Check, temporal: Check, worker: Check }),
});

/** Readiness probes: each answers 'ok' or a short reason. */
export interface ReadinessProbes {
  postgres(): Promise<void>;
  temporal(): Promise<void>;
  workerPolling(): Promise<void>;
}

async function probe(check: () => Promise<void>): Promise<string> {
  try {
    await check();
    return 'ok';
  } catch (error) {
    return (error as Error).message.slice(0, 200);
  }
}

export function healthRoutes(probes: ReadinessProbes) {
  return [
    defineRoute({
      method: 'GET',
      url: '/healthz',
      operationId: 'health',
      summary: 'Liveness: the gateway process is up',
      tags: ['operations'],
      auth: 'none',
      schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
      handler: async () => ({ status: 'ok' }),
    }),
    defineRoute({
      method: 'GET',
      url: '/readyz',
      operationId: 'readiness',
      summary: 'Readiness: PostgreSQL and Temporal reachable, a worker polling the task queue',
      tags: ['operations'],
      auth: 'none',
      schema: { response: { 200: Readiness, 503: Readiness } },
      async handler(_request, reply) {
        const [postgres, temporal, worker] = await Promise.all([probe(probes.postgres), probe(probes.temporal), probe(probes.workerPolling)]);
        const ready = postgres === 'ok' && temporal === 'ok' && worker === 'ok';
        reply.status(ready ? 200 : 503);
        return { status: ready ? 'ready' : 'not_ready', checks: { postgres, temporal, worker } };
      },
    }),
  ];
}
