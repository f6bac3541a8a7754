import { createHash } from 'node:crypto';
import { isPossiblePhoneNumber } from 'libphonenumber-js';
import type { FieldError } from './fieldError.ts';

// Rules for a send request that a schema cannot say: E.164 numbers that can exist, parameter
// values (the provider's own rule comes from the provider), and the Idempotency-Key header.

const E164 = /^\+[1-9]\d{7,14}$/;
/**
 * A WhatsApp business-scoped user id (BSUID), as Meta documents it for users who hide their
 * number behind a username: the user's ISO 3166 alpha-2 country code, a period, then up to 128
 * letters and digits (`US.13491208655302741918`); a parent BSUID, shared by linked business
 * portfolios, has `ENT.` after the country (`US.ENT.11815799212886844830`).
 */
const BSUID = /^[A-Z]{2}\.(?:ENT\.)?[A-Za-z0-9]{1,128}$/;

/** The longest recipient: a parent BSUID. */
export const RECIPIENT_MAX_LENGTH = 2 + 5 + 128;

export function isBusinessScopedUserId(to: string): boolean {
  return BSUID.test(to);
}

/**
 * What svc adds to Meta's 131062: the failure names the way out, not only the rule (Meta's text
 * says what is refused, and sometimes nothing more than its title).
 */
export const BSUID_AUTHENTICATION_HINT =
  'Authentication templates (one-tap, zero-tap, copy code) go to phone numbers only: send this one to the ' +
  "user's phone number (a BSUID's phone shows as recipientPhoneNumber once WhatsApp has named it).";

/** Why `to` cannot be a recipient, or undefined if it can: an E.164 number that can exist, or a BSUID. */
export function recipientProblem(to: string): string | undefined {
  if (BSUID.test(to)) return undefined;
  if (!E164.test(to)) {
    return (
      'must be E.164: a + then the country code and number, 8 to 15 digits (e.g. +5511987654321), or a WhatsApp ' +
      'business-scoped user id (e.g. US.13491208655302741918)'
    );
  }
  if (!isPossiblePhoneNumber(to)) return 'is not a possible phone number for its country code';
  return undefined;
}

/** Why the provider refuses a parameter value, or undefined when it takes it (each provider's own rule). */
export type ParameterRule = (value: string) => string | undefined;

/** Field errors for one variables object (`/variables` or `/headerVariables`): blank values, and what the provider refuses. */
export function parameterProblems(field: string, values: Record<string, string> | undefined, providerRule: ParameterRule): FieldError[] {
  const problems: FieldError[] = [];
  for (const [key, value] of Object.entries(values ?? {})) {
    const pointer = `${field}/${key}`;
    if (value.trim() === '') {
      problems.push({ field: pointer, code: 'empty', message: `${pointer} must not be empty or blank.` });
      continue;
    }
    const refused = providerRule(value);
    if (refused !== undefined) problems.push({ field: pointer, code: 'provider_rule', message: `${pointer} ${refused}.` });
  }
  return problems;
}

/** Keys "1".."n" as the template needs them, compared with the keys given. */
export function variablesMatch(expected: number, given: Record<string, string> | undefined): boolean {
  const keys = Object.keys(given ?? {});
  if (keys.length !== expected) return false;
  for (let n = 1; n <= expected; n++) if (!keys.includes(String(n))) return false;
  return true;
}

/** Values in placeholder order {{1}}, {{2}}, … */
export function orderedValues(values: Record<string, string> | undefined): string[] {
  return Object.keys(values ?? {})
    .sort((a, b) => Number(a) - Number(b))
    .map((key) => values![key]!);
}

const PRINTABLE_ASCII = /^[\x20-\x7e]{1,255}$/;
const QUOTED = /^"((?:[\x20-\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;

/**
 * The Idempotency-Key header's key: 1–255 printable ASCII characters; the IETF draft's
 * structured-field string form ("abc") means the same key as abc. Undefined when absent;
 * throws a message when malformed.
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (Array.isArray(header)) throw new Error('send one Idempotency-Key header');
  const quoted = QUOTED.exec(header);
  const key = quoted ? quoted[1]!.replace(/\\(["\\])/g, '$1') : header;
  if (!PRINTABLE_ASCII.test(key)) throw new Error('Idempotency-Key must be 1 to 255 printable ASCII characters');
  return key;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value as object)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/** A fingerprint of the request body that ignores key order, to tell a replay from a reuse. */
export function requestFingerprint(body: unknown): string {
  return createHash('sha256').update(JSON.stringify(canonical(body))).digest('hex');
}
