// Reading Meta's webhook JSON without trusting its shape: each helper answers what it found, or
// nothing, never throws. Shared by the statuses/templates parser (webhook.ts) and the inbound
// messages parser (inboundMessages.ts).

export type Json = Record<string, unknown>;

/** The objects of an array (anything else in it, and anything not an array, is left out). */
export function objects(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter((item): item is Json => item !== null && typeof item === 'object' && !Array.isArray(item)) : [];
}

export function object(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

/** A non-empty string, or a safe integer as its text (Meta sends some ids as numbers). */
export function text(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return undefined;
}
