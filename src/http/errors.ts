import { DomainError, ERROR_CODES, type ErrorCode, type FieldError } from '../errors.ts';

// The HTTP face of src/errors.ts: a DomainError rendered as RFC 9457 problem details.

export { ERROR_CODES, type ErrorCode, errorOf, type FieldError, validationError } from '../errors.ts';

/** The HTTP layer's name for a DomainError (kept so its throwers read as before). */
export { DomainError as ApiError };

export interface Problem {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail: string;
  requestId: string;
  errors?: FieldError[];
}

export function problemOf(error: DomainError, requestId: string): Problem {
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
