import http from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { trackRequestsInFlight, type RequestsInFlight } from '../api/http/requests-in-flight.ts';

/**
 * What the gateway's stop waits for (api/main.ts): requests whose work still runs, including those whose client
 * hung up, and never a request that will do no more work.
 */
let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** A server whose routes each wait until the test lets them go; `entered` says which step a request reached. */
async function serve(): Promise<{ inFlight: RequestsInFlight; url: string; entered: string[]; release: () => void }> {
  const entered: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  app = Fastify();
  const inFlight = trackRequestsInFlight(app);
  // A slow handler (a submit waiting for its answer).
  app.post('/slow-handler', async () => {
    entered.push('handler');
    await gate;
    return { ok: true };
  });
  // A slow check before the body is read (a key admission in an onRequest hook).
  app.post('/slow-check', {
    onRequest: async () => {
      entered.push('check');
      await gate;
    },
    handler: async () => {
      entered.push('handler after check');
      return { ok: true };
    },
  });
  app.get('/quick', async () => ({ ok: true }));
  app.get('/failing', async () => {
    throw new Error('broken');
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { inFlight, url, entered, release };
}

/** Sends a request and hangs up once `until` holds, without reading an answer. */
async function hangUpAfter(url: string, until: () => boolean): Promise<void> {
  const request = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json' } });
  request.on('error', () => {});
  request.end('{"a":1}');
  await vi.waitFor(() => expect(until()).toBe(true));
  request.destroy();
  // Time for the server to see the hang-up.
  await new Promise((resolve) => setTimeout(resolve, 100));
}

describe('requests in flight', () => {
  it('is zero once requests are answered, failures and unknown routes included', async () => {
    const server = await serve();
    const answers = await Promise.all(['/quick', '/failing', '/missing', '/quick'].map((path) => fetch(`${server.url}${path}`)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 500, 404, 200]);
    expect(server.inFlight.count).toBe(0);
    await server.inFlight.settled(new AbortController().signal);
  });

  it('keeps counting a handler whose client hung up, until the handler is done', async () => {
    const server = await serve();
    await hangUpAfter(`${server.url}/slow-handler`, () => server.entered.includes('handler'));
    expect(server.inFlight.count).toBe(1);

    let settled = false;
    const waiting = server.inFlight.settled(new AbortController().signal).then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(settled).toBe(false);

    server.release();
    await waiting;
    expect(server.inFlight.count).toBe(0);
  });

  it('stops counting a request whose client hung up before its body was read: it does no more work', async () => {
    const server = await serve();
    await hangUpAfter(`${server.url}/slow-check`, () => server.entered.includes('check'));
    server.release();
    await vi.waitFor(() => expect(server.inFlight.count).toBe(0));
    expect(server.entered).toEqual(['check']);
  });

  it('stops waiting when the deadline passes', async () => {
    const server = await serve();
    await hangUpAfter(`${server.url}/slow-handler`, () => server.entered.includes('handler'));
    const deadline = new AbortController();
    const waiting = server.inFlight.settled(deadline.signal);
    deadline.abort();
    await waiting;
    expect(server.inFlight.count).toBe(1);
    server.release();
  });
});
