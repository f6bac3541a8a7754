import type { Problem } from './types.ts';

/** An error answer of the API (RFC 9457 problem details), thrown by unwrap() and paginate(). */
export class SvcError extends Error {
  readonly status: number;
  /** The stable machine-readable code, e.g. `template_not_approved`; `unknown` if the body had none. */
  readonly code: string;
  readonly problem: Problem | undefined;
  readonly response: Response;

  constructor(response: Response, problem: unknown) {
    const known = isProblem(problem) ? problem : undefined;
    super(known ? `${known.status} ${known.code}: ${known.detail}` : `HTTP ${response.status}`);
    this.name = 'SvcError';
    this.status = response.status;
    this.code = known?.code ?? 'unknown';
    this.problem = known;
    this.response = response;
  }

  /** The request id the server gave this answer (quote it to support). */
  get requestId(): string | undefined {
    return this.problem?.requestId ?? this.response.headers.get('x-request-id') ?? undefined;
  }
}

function isProblem(value: unknown): value is Problem {
  return typeof value === 'object' && value !== null && typeof (value as Problem).code === 'string';
}

/** The result of a client call, as openapi-fetch gives it. */
export type CallResult<T = unknown> =
  | { data: T; error?: never; response: Response }
  | { data?: never; error: unknown; response: Response };

/** The data of a call's successful variant. */
type SuccessData<R> = R extends { data: infer D } ? D : never;

/**
 * The data of a successful call, or an SvcError thrown for an error answer:
 * `const message = await unwrap(svc.GET('/v1/messages/{id}', …))`.
 */
export async function unwrap<R extends CallResult>(call: Promise<R> | R): Promise<SuccessData<R>> {
  const result = await call;
  if (result.error !== undefined || !result.response.ok) throw new SvcError(result.response, result.error);
  return result.data as SuccessData<R>;
}
