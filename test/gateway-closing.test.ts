import net from 'node:net';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.ts';

/**
 * A request that reaches the gateway after its stop began (pipelined behind, or on the keep-alive connection of, a
 * request still running) is told to send it again, in the shape its own API answers with, never Fastify's generic
 * body: a Payments API client reads `error.type`, a GraphQL client `errors[0].extensions.code`, and each retries on
 * `Retry-After`.
 */
let app: TestApp;
let closed: Promise<void> | undefined;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await closed;
  await app?.close();
});

const GRAPHQL_BODY = JSON.stringify({ query: '{ __typename }' });

/** A connection whose first request (a GraphQL query) has sent its headers and half its body. */
async function connectionMidRequest(): Promise<{ finish: (nextRequest: string) => Promise<string> }> {
  const { port } = new URL(app.baseUrl);
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let received = '';
  socket.on('data', (chunk) => (received += chunk));
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const half = GRAPHQL_BODY.length >> 1;
  socket.write(
    `POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${GRAPHQL_BODY.length}\r\n\r\n${GRAPHQL_BODY.slice(0, half)}`,
  );
  return {
    async finish(nextRequest) {
      // The rest of the first body and, pipelined behind it, the request that arrives while the gateway closes.
      socket.write(GRAPHQL_BODY.slice(half) + nextRequest);
      await ended;
      return received;
    },
  };
}

/** The second answer on a connection: status, headers and parsed body. */
function secondAnswer(raw: string): { status: number; headers: Record<string, string>; body: unknown } {
  const answers = raw.split(/(?=HTTP\/1\.1 \d{3} )/);
  expect(answers).toHaveLength(2);
  const [head, body] = answers[1]!.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head!.split('\r\n');
  const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(body!) };
}

it('answers a request arriving while it closes 503 with Retry-After, in the shape of the API it was sent to', async () => {
  const [rest, paymentsApi, graphql] = await Promise.all([connectionMidRequest(), connectionMidRequest(), connectionMidRequest()]);
  // Each first request is under way (its body half read) when the stop begins, so the stop waits for it.
  await vi.waitFor(() => expect(app.gateway.requestsInFlight.count).toBe(3), { timeout: 10_000 });
  closed = app.gateway.close();
  // The server stops listening once the stop's first steps (its routes closed, `preClose`) have run.
  await vi.waitFor(() => expect(app.gateway.server.listening).toBe(false), { timeout: 10_000 });

  const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`;
  const graphqlPost = `POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${GRAPHQL_BODY.length}\r\n\r\n${GRAPHQL_BODY}`;
  const answers = await Promise.all([rest.finish(get('/api/admin/statuses')), paymentsApi.finish(get('/payments')), graphql.finish(graphqlPost)]);

  // The first request of each connection, begun before the stop, is answered as usual.
  for (const raw of answers) expect(raw).toMatch(/^HTTP\/1\.1 200 /);
  const [restAnswer, paymentsApiAnswer, graphqlAnswer] = answers.map(secondAnswer);
  for (const answer of [restAnswer, paymentsApiAnswer, graphqlAnswer]) {
    expect(answer).toMatchObject({ status: 503, headers: { 'retry-after': '1', connection: 'close' } });
  }
  expect(restAnswer!.body).toEqual({ success: false, message: expect.stringMatching(/shutting down.*send it again/) });
  expect(paymentsApiAnswer!.body).toMatchObject({ error: { type: 'api_error', code: 'service_unavailable', message: expect.stringMatching(/shutting down/) } });
  expect(graphqlAnswer!.body).toEqual({ errors: [{ message: expect.stringMatching(/shutting down/), extensions: { code: 'SERVICE_UNAVAILABLE' } }] });
  await closed;
});
