import type { TSchema } from '@sinclair/typebox';
import type { RouteDefinition } from './route.ts';

/** Builds the OpenAPI 3.1 document from the same route schemas that validate requests. */
export function buildOpenApiDocument(routes: readonly RouteDefinition[], info: { title: string; version: string; serverUrl: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.url.replace(/:(\w+)/g, '{$1}');
    const parameters = [
      ...objectParameters(route.schema.params, 'path'),
      ...objectParameters(route.schema.querystring, 'query'),
      ...objectParameters(route.schema.headers, 'header'),
    ];
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: route.tags,
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.schema.body ? { requestBody: { required: true, content: { 'application/json': { schema: plain(route.schema.body) } } } } : {}),
      responses: Object.fromEntries(
        Object.entries(route.schema.response).map(([status, schema]) => [
          status,
          { description: schema.description ?? describeStatus(Number(status)), content: { 'application/json': { schema: plain(schema) } } },
        ]),
      ),
      ...(route.auth === 'admin' ? { security: [{ apiKey: [] }] } : {}),
    };
    paths[path] = { ...(paths[path] ?? {}), [route.method.toLowerCase()]: operation };
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version },
    servers: [{ url: info.serverUrl }],
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'API key, raw or `Bearer <key>`' } },
    },
  };
}

function objectParameters(schema: TSchema | undefined, location: 'path' | 'query' | 'header') {
  if (!schema || !schema.properties) return [];
  const required = new Set<string>(schema.required ?? []);
  return Object.entries(schema.properties as Record<string, TSchema>).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || required.has(name),
    description: property.description,
    schema: plain(property),
  }));
}

/** TypeBox adds symbol keys and `$id`s; OpenAPI wants plain JSON Schema inline. */
function plain(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema, (key, value) => (key === '$id' ? undefined : value)));
}

function describeStatus(status: number): string {
  const descriptions: Record<number, string> = {
    200: 'OK',
    201: 'Created',
    400: 'Invalid request (the message names the field)',
    401: 'Missing or unknown API key',
    403: 'ClientId is not the tenant of the key',
    404: 'Not found',
    409: 'Conflict',
    413: 'Body too large',
    429: 'Rate limit exceeded; see Retry-After',
    500: 'Unexpected error',
    503: 'Not ready',
  };
  return descriptions[status] ?? 'Response';
}
