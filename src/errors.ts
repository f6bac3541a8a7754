import type { FieldError } from './domain/fieldError.ts';

// Every error a use case (or the HTTP edge) can end in, declared once: its status, its title and
// its message template. `{name}` in a template is filled from the error's parameters; a site with
// a sentence of its own (a validation message, a provider's reason) passes that sentence instead.
// Use cases throw these; the HTTP layer renders them as problem+json (src/http/errorHandler.ts).
export const ERROR_CODES = {
  invalid_json: { status: 400, title: 'Bad Request', template: 'The body is not valid JSON.' },
  validation_failed: { status: 400, title: 'Bad Request', template: '{detail}' },
  bad_request: { status: 400, title: 'Bad Request', template: 'The request is malformed.' },
  unauthorized: { status: 401, title: 'Unauthorized', template: 'Send a valid API key as "Authorization: Bearer svc_live_…".' },
  forbidden: { status: 403, title: 'Forbidden', template: '{detail}' },
  not_found: { status: 404, title: 'Not Found', template: 'No {resource} of this project has that id.' },
  method_not_allowed: { status: 405, title: 'Method Not Allowed', template: '{detail}' },
  request_timeout: { status: 408, title: 'Request Timeout', template: 'The request was not received in time; send it again, whole.' },
  template_exists: { status: 409, title: 'Conflict', template: '{detail}' },
  template_not_pending: { status: 409, title: 'Conflict', template: '{detail}' },
  last_active_key: { status: 409, title: 'Conflict', template: 'This is the project’s only active key; create another first.' },
  api_key_limit_reached: {
    status: 409,
    title: 'Conflict',
    template: 'The project already has {max} active API keys, the most it may hold; revoke one first.',
  },
  idempotency_request_in_progress: { status: 409, title: 'Conflict', template: 'Retry this request shortly.' },
  webhook_endpoint_limit_reached: {
    status: 409,
    title: 'Conflict',
    template: 'The project already has {max} webhook endpoints, the most it may hold; delete one first.',
  },
  webhook_endpoint_disabled: { status: 409, title: 'Conflict', template: 'The webhook endpoint is disabled; enable it to send it a test event.' },
  invalid_status_transition: { status: 409, title: 'Conflict', template: '{detail}' },
  message_not_cancelable: { status: 409, title: 'Conflict', template: 'The message is {status}: it was submitted already and cannot be canceled.' },
  payload_too_large: { status: 413, title: 'Content Too Large', template: 'The request body is too large.' },
  uri_too_long: { status: 414, title: 'URI Too Long', template: 'A path segment of the URL is longer than this API accepts.' },
  unsupported_media_type: { status: 415, title: 'Unsupported Media Type', template: 'Send the body as application/json.' },
  expectation_failed: { status: 417, title: 'Expectation Failed', template: 'Only "Expect: 100-continue" is supported.' },
  template_not_found: { status: 422, title: 'Unprocessable Content', template: "No template named '{name}' exists in this project." },
  template_not_approved: { status: 422, title: 'Unprocessable Content', template: '{detail}' },
  template_language_mismatch: { status: 422, title: 'Unprocessable Content', template: '{detail}' },
  template_variables_mismatch: { status: 422, title: 'Unprocessable Content', template: '{detail}' },
  provider_not_configured: {
    status: 422,
    title: 'Unprocessable Content',
    template: 'Save the provider credentials first: PUT /v1/projects/me/provider-credentials.',
  },
  provider_credentials_rejected: { status: 422, title: 'Unprocessable Content', template: '{detail}' },
  provider_setup_incomplete: { status: 422, title: 'Unprocessable Content', template: 'Templates cannot reach the provider yet: {problem}' },
  idempotency_key_reused: { status: 422, title: 'Unprocessable Content', template: '{detail}' },
  webhook_event_unknown: { status: 422, title: 'Unprocessable Content', template: '{detail}' },
  invalid_time_range: { status: 422, title: 'Unprocessable Content', template: '{detail}' },
  recipient_suppressed: {
    status: 422,
    title: 'Unprocessable Content',
    template: '{to} is on this project’s suppression list (opted out); remove it with DELETE /v1/suppressions/{phoneNumber} to send to it.',
  },
  send_at_out_of_range: { status: 422, title: 'Unprocessable Content', template: '{detail}' },
  rate_limited: { status: 429, title: 'Too Many Requests', template: 'Too many requests with this API key; retry in {seconds} s.' },
  request_header_fields_too_large: {
    status: 431,
    title: 'Request Header Fields Too Large',
    template: 'The request line and headers are larger than this server accepts.',
  },
  internal_error: { status: 500, title: 'Internal Server Error', template: 'Something went wrong on our side; quote the requestId.' },
  unavailable: { status: 503, title: 'Service Unavailable', template: 'The database is not reachable right now; retry shortly.' },
} as const satisfies Record<string, { status: number; title: string; template: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * The other sentences a code is answered with, each named once here: a site names its sentence
 * and gives the parameters (errorOf), rather than writing a sentence of its own.
 */
export const ERROR_SENTENCES = {
  route_not_found: { code: 'not_found', template: 'No route {method} {path}.' },
  operator_route_not_found: { code: 'not_found', template: 'No route {method} {path} on the operator port.' },
  console_file_not_found: { code: 'not_found', template: 'No console file {path}.' },
  number_not_suppressed: { code: 'not_found', template: 'This number is not on the project’s suppression list.' },
  message_held_by_provider: {
    code: 'message_not_cancelable',
    template: 'The provider holds the message for quality assessment and may still send it: it cannot be canceled.',
  },
  message_being_submitted: {
    code: 'message_not_cancelable',
    template: 'The message is being submitted to the provider right now and cannot be canceled.',
  },
  api_key_revoked: { code: 'unauthorized', template: 'The API key was revoked.' },
} as const satisfies Record<string, { code: ErrorCode; template: string }>;

export type ErrorSentence = keyof typeof ERROR_SENTENCES;

export type { FieldError };

/** The values a message template is filled with. */
export type TemplateParams = Readonly<Record<string, string | number>>;

function fill(template: string, params: TemplateParams): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (Object.hasOwn(params, name) ? String(params[name]) : whole));
}

/** A code's message template filled with its parameters; a `{name}` without a value stays as it is. */
export function messageOf(code: ErrorCode, params: TemplateParams = {}): string {
  return fill(ERROR_CODES[code].template, params);
}

export interface DomainErrorOptions {
  errors?: FieldError[];
  /** Hints for the transport, such as Retry-After; the HTTP layer sends them as headers. */
  headers?: Record<string, string>;
}

/**
 * An expected failure of a use case: a registry code and its message, the template filled with
 * `params`, or a sentence of the site's own. Transport-neutral: HTTP renders it as problem+json.
 */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, detail: string | TemplateParams = {}, options: DomainErrorOptions = {}) {
    super(typeof detail === 'string' ? detail : messageOf(code, detail));
    this.name = 'DomainError';
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.errors = options.errors;
    this.headers = options.headers;
  }
}

/** The error of a named sentence (ERROR_SENTENCES), filled with its parameters. */
export function errorOf(sentence: ErrorSentence, params: TemplateParams = {}, options: DomainErrorOptions = {}): DomainError {
  const { code, template } = ERROR_SENTENCES[sentence];
  return new DomainError(code, fill(template, params), options);
}

/** The things a project owns that a request names by id. */
export type OwnedResource = 'message' | 'template' | 'batch' | 'webhook endpoint' | 'webhook delivery' | 'active API key';

/** 404: the project has no such thing (or it is another project's, which must look the same). */
export function notFound(resource: OwnedResource): DomainError {
  return new DomainError('not_found', { resource });
}

export function validationError(errors: FieldError[]): DomainError {
  const detail = errors.length === 1 ? errors[0]!.message : `${errors.length} fields are invalid.`;
  return new DomainError('validation_failed', detail, { errors });
}
