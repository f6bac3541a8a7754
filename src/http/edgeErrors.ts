import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem } from './errorHandler.ts';
import { ApiError, problemOf } from './errors.ts';

// Answers the HTTP layer gives before a route runs — a request the parser refuses, a URL the
// router cannot read, a server shutting down — in the same problem+json shape, with the same
// X-Request-Id, as every other answer (CONTRACT §2).

export function newRequestId(): string {
  return 'req_' + randomBytes(12).toString('base64url');
}

function parserErrorOf(error: NodeJS.ErrnoException): ApiError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('request_timeout');
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(
        'request_header_fields_too_large',
        'The request line and headers are larger than this server accepts.',
      );
    default:
      return new ApiError('bad_request', 'The request is not valid HTTP.');
  }
}

function writeProblem(socket: Socket, apiError: ApiError): void {
  if (socket.writable) {
    const requestId = newRequestId();
    const body = JSON.stringify(problemOf(apiError, requestId));
    socket.write(
      `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status]}\r\n` +
        `Content-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
}

/**
 * For Node's `clientError`: the parser refused the request (malformed, headers too large, too
 * slow). There is no request object yet, so the answer is written to the socket directly. When
 * the connection is still answering an earlier request it received whole (pipelining), the
 * refusal follows that answer, so neither is cut; when the broken request is the one being
 * answered (its body), the refusal replaces that answer, unless it has begun.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const answering = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  const answer = () => {
    writeProblem(socket, parserErrorOf(error));
    socket.destroy(error);
  };
  if (answering && !answering.writableFinished && !answering.destroyed) {
    if (answering.req.complete) {
      answering.once('finish', answer);
      answering.once('close', () => socket.destroy(error));
      return;
    }
    if (answering.headersSent) {
      socket.destroy(error);
      return;
    }
  }
  answer();
}

/**
 * For Node's `checkExpectation`: an `Expect` other than `100-continue`, which Node alone answers
 * with a bare 417.
 */
export function expectationFailedHandler(request: IncomingMessage, response: ServerResponse): void {
  const requestId = newRequestId();
  const apiError = new ApiError('expectation_failed');
  const body = JSON.stringify(problemOf(apiError, requestId));
  response.writeHead(apiError.status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
    connection: 'close',
  });
  response.end(body);
  request.resume();
}

/** For Node's `connect`: CONNECT (a proxy's method), which Node alone answers by closing. */
export function connectHandler(_request: IncomingMessage, socket: Socket): void {
  socket.on('error', () => {});
  writeProblem(
    socket,
    new ApiError('method_not_allowed', 'CONNECT is not allowed: this server is not a proxy.'),
  );
  socket.destroySoon();
}

/** For Fastify's router errors: a URL that cannot be decoded, a path segment that is too long. */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  const apiError =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ApiError('uri_too_long')
      : new ApiError('bad_request', 'The URL is not valid: check its percent-encoding.');
  void sendProblem(reply, apiError);
}
