import type { FieldError } from '../domain/fieldError.ts';

// Every error code the API can answer with, declared once: its status and its title.
export const ERROR_CODES = {
  invalid_json: { status: 400, title: 'Bad Request' },
  validation_failed: { status: 400, title: 'Bad Request' },
  bad_request: { status: 400, title: 'Bad Request' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not Found' },
  method_not_allowed: { status: 405, title: 'Method Not Allowed' },
  request_timeout: { status: 408, title: 'Request Timeout' },
  template_exists: { status: 409, title: 'Conflict' },
  template_not_pending: { status: 409, title: 'Conflict' },
  last_active_key: { status: 409, title: 'Conflict' },
  api_key_limit_reached: { status: 409, title: 'Conflict' },
  idempotency_request_in_progress: { status: 409, title: 'Conflict' },
  webhook_endpoint_limit_reached: { status: 409, title: 'Conflict' },
  webhook_endpoint_disabled: { status: 409, title: 'Conflict' },
  invalid_status_transition: { status: 409, title: 'Conflict' },
  message_not_cancelable: { status: 409, title: 'Conflict' },
  payload_too_large: { status: 413, title: 'Content Too Large' },
  uri_too_long: { status: 414, title: 'URI Too Long' },
  unsupported_media_type: { status: 415, title: 'Unsupported Media Type' },
  expectation_failed: { status: 417, title: 'Expectation Failed' },
  template_not_found: { status: 422, title: 'Unprocessable Content' },
  template_not_approved: { status: 422, title: 'Unprocessable Content' },
  template_language_mismatch: { status: 422, title: 'Unprocessable Content' },
  template_variables_mismatch: { status: 422, title: 'Unprocessable Content' },
  provider_not_configured: { status: 422, title: 'Unprocessable Content' },
  provider_credentials_rejected: { status: 422, title: 'Unprocessable Content' },
  provider_setup_incomplete: { status: 422, title: 'Unprocessable Content' },
  idempotency_key_reused: { status: 422, title: 'Unprocessable Content' },
  webhook_event_unknown: { status: 422, title: 'Unprocessable Content' },
  invalid_time_range: { status: 422, title: 'Unprocessable Content' },
  recipient_suppressed: { status: 422, title: 'Unprocessable Content' },
  send_at_out_of_range: { status: 422, title: 'Unprocessable Content' },
  rate_limited: { status: 429, title: 'Too Many Requests' },
  request_header_fields_too_large: { status: 431, title: 'Request Header Fields Too Large' },
  internal_error: { status: 500, title: 'Internal Server Error' },
  unavailable: { status: 503, title: 'Service Unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export type { FieldError };

/** An error the API answers with as RFC 9457 problem details. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    detail: string,
    options: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.errors = options.errors;
    this.headers = options.headers;
  }
}

export function validationError(errors: FieldError[]): ApiError {
  const detail = errors.length === 1 ? errors[0]!.message : `${errors.length} fields are invalid.`;
  return new ApiError('validation_failed', detail, { errors });
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail: string;
  requestId: string;
  errors?: FieldError[];
}

export function problemOf(error: ApiError, requestId: string): Problem {
  const problem: Problem = {
    type: 'about:blank',
    title: ERROR_CODES[error.code].title,
    status: error.status,
    code: error.code,
    detail: error.message,
    requestId,
  };
  if (error.errors) problem.errors = error.errors;
  return problem;
}
