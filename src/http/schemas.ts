import { Type } from 'typebox';
import { ERROR_CODES, type ErrorCode } from './errors.ts';

export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-22T10:00:00.000Z'] });

export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String({ description: 'Stable, machine-readable error code.' }),
    detail: Type.String(),
    requestId: Type.String(),
    errors: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), code: Type.String(), message: Type.String() })),
    ),
  },
  { description: 'RFC 9457 problem details.' },
);

/** OpenAPI responses for the error codes a route can answer with, grouped by status. */
export function errorResponses(...codes: ErrorCode[]): Record<number, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of ['unauthorized', 'internal_error', ...codes] as ErrorCode[]) {
    const status = ERROR_CODES[code].status;
    const list = byStatus.get(status) ?? [];
    if (!list.includes(code)) list.push(code);
    byStatus.set(status, list);
  }
  const responses: Record<number, unknown> = {};
  for (const [status, list] of byStatus) {
    responses[status] = {
      description: list.join(', '),
      content: { 'application/problem+json': { schema: Problem } },
    };
  }
  return responses;
}

export const BEARER = [{ bearer: [] }];

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : iso(ms);
}
