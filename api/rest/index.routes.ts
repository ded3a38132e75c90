import { Type } from '@sinclair/typebox';
import { PUBLIC } from '../http/security.ts';
import type { TypedApp } from '../http/typed-app.ts';

const link = (description: string) => Type.String({ description });

const GatewayIndex = Type.Object(
  {
    name: Type.String(),
    links: Type.Object({
      apiReference: link('The REST API reference (Swagger UI)'),
      openapi: link('The OpenAPI 3.1 document of the REST API'),
      graphql: link('The GraphQL endpoint (admin API); POST JSON, or GET with `apollo-require-preflight: true`'),
      temporalUi: Type.Optional(link('The Temporal web UI, where every payment workflow can be found (only when TEMPORAL_UI_URL is set)')),
      health: link('Liveness probe'),
      readiness: link('Readiness probe'),
    }),
  },
  {
    description: 'Where to go next',
    examples: [
      {
        name: 'Payments gateway',
        links: { apiReference: '/docs', openapi: '/openapi.json', graphql: '/graphql', temporalUi: 'http://127.0.0.1:8233', health: '/healthz', readiness: '/readyz' },
      },
    ],
  },
);

/** `GET /`: a JSON index of what the gateway serves, so a browser or `curl` landing here finds the rest. */
export function indexRoutes(app: TypedApp, options: { temporalUiUrl?: string }): void {
  const index = {
    name: 'Payments gateway',
    links: {
      apiReference: '/docs',
      openapi: '/openapi.json',
      graphql: '/graphql',
      ...(options.temporalUiUrl ? { temporalUi: options.temporalUiUrl } : {}),
      health: '/healthz',
      readiness: '/readyz',
    },
  };
  app.get('/', {
    schema: { operationId: 'index', summary: 'Links to the API reference, OpenAPI document, GraphQL and probes', tags: ['documentation'], security: PUBLIC, response: { 200: GatewayIndex } },
    handler: async () => index,
  });
}
