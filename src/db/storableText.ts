// PostgreSQL's text cannot hold U+0000 (NUL): a string with one is refused ("invalid byte sequence
// for encoding UTF8: 0x00") and the statement fails. Customer input and Meta's webhooks may carry
// one, so every string the service gives either database has each NUL replaced with U+FFFD, the
// Unicode replacement character — the same on SQLite, so a value reads back the same whichever
// engine stores it. JSON documents stored as text are not affected: JSON.stringify writes NUL
// as the six characters `\u0000`, which both engines store and JSON.parse gives back. Lone
// surrogates need nothing here: the UTF-8 encoding of every driver already makes them U+FFFD.

const NUL = '\u0000';
const REPLACEMENT = '\uFFFD';

export function storableText(value: string): string {
  return value.includes(NUL) ? value.replaceAll(NUL, REPLACEMENT) : value;
}

function needsChange(value: unknown): boolean {
  if (typeof value === 'string') return value.includes(NUL);
  return Array.isArray(value) && value.some(needsChange);
}

/** A statement parameter as it is stored: strings (and the strings of arrays, for `unnest`) made storable. */
export function storableParameter(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value) && needsChange(value)) return value.map(storableParameter);
  return value;
}

/** Every parameter of a statement, storable; the same array when none needed a change. */
export function storableParameters<T extends readonly unknown[]>(parameters: T): T {
  return parameters.some(needsChange) ? (parameters.map(storableParameter) as unknown as T) : parameters;
}
