import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { ApiError, type FieldError, problemOf, validationError } from './errors.ts';
import { drainTooLargeBody } from './tooLargeBody.ts';

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

function fieldErrorOf(error: AjvError, location: string): FieldError {
  const prefix = location === 'body' ? '' : `${location}:`;
  if (error.keyword === 'required') {
    const field = `${error.instancePath}/${String(error.params.missingProperty)}`;
    return { field: prefix + field, code: 'required', message: `${field} is required.` };
  }
  if (error.keyword === 'additionalProperties') {
    const field = `${error.instancePath}/${String(error.params.additionalProperty)}`;
    return { field: prefix + field, code: 'unknown_field', message: `${field} is not a known field.` };
  }
  const field = error.instancePath === '' ? '/' : error.instancePath;
  return {
    field: prefix + field,
    code: error.keyword,
    message: `${field} ${error.message ?? 'is invalid'}.`,
  };
}

/** Turns anything thrown while handling a request into the error the API promises. */
export function toApiError(error: FastifyError): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error.validation) {
    const location =
      error.validationContext === 'querystring' ? 'query' : (error.validationContext ?? 'body');
    const seen = new Set<string>();
    const errors = (error.validation as AjvError[])
      .map((item) => fieldErrorOf(item, location))
      .filter((item) => !seen.has(item.field + item.code) && seen.add(item.field + item.code));
    return validationError(errors);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type', 'Send the request body as application/json.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', 'The request body is larger than this endpoint accepts.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_json', 'The body is empty; send a JSON document.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('invalid_json');
  }
  if (error instanceof SyntaxError || error.statusCode === 400) {
    return new ApiError(
      error instanceof SyntaxError ? 'invalid_json' : 'bad_request',
      'The request is malformed.',
    );
  }
  if (error.statusCode === 413) return new ApiError('payload_too_large');
  if (error.statusCode === 415)
    return new ApiError('unsupported_media_type');
  return undefined;
}

export function sendProblem(reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  if (error.status === 401) reply.header('www-authenticate', 'Bearer');
  // Sent as bytes: for a string Fastify would append "; charset=utf-8", which RFC 9457 does not use.
  return reply
    .code(error.status)
    .header('content-type', 'application/problem+json')
    .send(Buffer.from(JSON.stringify(problemOf(error, String(reply.request.id)))));
}

export function errorHandler(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const apiError = toApiError(error);
  if (apiError?.code === 'payload_too_large') drainTooLargeBody(request, reply);
  if (apiError) return sendProblem(reply, apiError);
  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: error }, 'database unavailable');
    return sendProblem(
      reply,
      new ApiError('unavailable', {}, {
        headers: { 'retry-after': '1' },
      }),
    );
  }
  request.log.error({ err: error }, 'unexpected error');
  return sendProblem(
    reply,
    new ApiError('internal_error'),
  );
}
