import { STATUS_CODES } from 'node:http';
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
      return new ApiError('request_timeout', 'The request was not received in time; send it again, whole.');
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(
        'request_header_fields_too_large',
        'The request line and headers are larger than this server accepts.',
      );
    default:
      return new ApiError('bad_request', 'The request is not valid HTTP.');
  }
}

/**
 * For Node's `clientError`: the parser refused the request (malformed, headers too large, too
 * slow). There is no request object yet, so the answer is written to the socket directly.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const requestId = newRequestId();
    const apiError = parserErrorOf(error);
    const body = JSON.stringify(problemOf(apiError, requestId));
    socket.write(
      `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status]}\r\n` +
        `Content-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/** For Fastify's router errors: a URL that cannot be decoded, a path segment that is too long. */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  const apiError =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ApiError('uri_too_long', 'A path segment of the URL is longer than this API accepts.')
      : new ApiError('bad_request', 'The URL is not valid: check its percent-encoding.');
  void sendProblem(reply, apiError);
}
