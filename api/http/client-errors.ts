import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

/** What Node's HTTP parser refuses, by its error code; anything else it refuses is malformed HTTP (400). */
const REFUSALS: Record<string, { status: number; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'The request did not arrive in time' },
  HPE_HEADER_OVERFLOW: { status: 431, message: 'The request line and headers are too large (a URL or header of many kilobytes)' },
};
const MALFORMED = { status: 400, message: 'The request is not valid HTTP (a control character in a header, conflicting lengths, a bad chunk)' };

/**
 * Fastify's `clientErrorHandler`: a request Node's HTTP parser refuses never reaches a route or hook, and Fastify's
 * own answer is a body of no shape of this API (`{error, message, statusCode}`). It gets the REST error shape
 * (`{success: false, message}`; its path cannot be trusted, so no API's own shape), then the connection closes, as
 * Node does after a parse error. A reset connection is left alone.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, message } = (error.code && REFUSALS[error.code]) || MALFORMED;
  const body = JSON.stringify({ success: false, message });
  // A response already under way on this connection (keep-alive) is not written over, as Node's own handler does.
  const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (socket.writable && !answering) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(error);
}
