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

const DAY_MS = 86_400_000;
const LAST_4_DIGIT_YEAR_MS = 253_402_300_800_000; // 10000-01-01T00:00:00.000Z
let cachedDay = Number.NaN;
let cachedDayPrefix = '';

const pad2 = (n: number) => (n < 10 ? '0' : '') + n;
const pad3 = (n: number) => (n < 10 ? '00' : n < 100 ? '0' : '') + n;

/**
 * Epoch milliseconds as ISO 8601 UTC with milliseconds: exactly Date#toISOString, with the date
 * part made once per day (a page of messages formats hundreds of times).
 */
export function iso(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms >= LAST_4_DIGIT_YEAR_MS) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  if (day !== cachedDay) {
    cachedDayPrefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
    cachedDay = day;
  }
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${cachedDayPrefix}${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${pad3(rest - seconds * 1000)}Z`;
}

export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : iso(ms);
}
