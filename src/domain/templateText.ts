// Component text rules and the placeholder grammar. Pure: no I/O.
//
// Placeholder grammar. A placeholder is exactly `{{n}}`: two braces, a number from 1 to 9999
// written without leading zeros or spaces, two braces. Numbering restarts in each component and
// must run 1..n without gaps; a number may be used more than once (every use gets the same value).
// Anything else built from double braces is malformed and rejected, so a typo never reaches a
// recipient as literal text: `{{0}}`, `{{01}}`, `{{ 1 }}`, `{{name}}`, `{{}}`, `{{1}`, `{1}}`,
// `{{{1}}}`, a lone `{{` or `}}`, and `{1}` (single braces around a number). Other single braces,
// as in `{note}`, are ordinary text.
//
// A template with `parameter_format: NAMED` names its placeholders instead (Meta's named
// parameters): `{{first_name}}`, lowercase letters, digits and underscores (not digits alone);
// each name is one value wherever it is used, and there is no numbering to keep.

import type { FieldError } from './fieldError.ts';

export type TextComponentType = 'HEADER' | 'BODY' | 'FOOTER';
export type PlaceholderFormat = 'POSITIONAL' | 'NAMED';

/** Text limits in characters (Unicode code points, as the provider counts them). */
export const MAX_TEXT_LENGTH: Readonly<Record<TextComponentType, number>> = { HEADER: 60, BODY: 1024, FOOTER: 60 };
export const MAX_HEADER_PLACEHOLDERS = 1;
const MAX_PLACEHOLDER_DIGITS = 4;

export interface PlaceholderMatch {
  /** 0 for a named placeholder. */
  number: number;
  /** The name of a named placeholder; its number as a string for a positional one. */
  key: string;
  /** Where `{{n}}` starts and ends (exclusive) in the text. */
  start: number;
  end: number;
}

type Token = PlaceholderMatch & { problem?: string; raw: string };

// A run of opening braces, text without braces, a run of closing braces; or a lone `{{` / `}}`.
const BRACES = /\{+[^{}]*\}+|\{\{+|\}\}+/g;
const PLACEHOLDER_NUMBER = new RegExp(`^[1-9][0-9]{0,${MAX_PLACEHOLDER_DIGITS - 1}}$`);
/** A named parameter: lowercase letters, digits and underscores, not digits alone. */
export const PARAMETER_NAME = /^(?![0-9]+$)[a-z0-9_]{1,100}$/;

export function excerpt(value: string, max = 40): string {
  const chars = [...value];
  return chars.length <= max ? value : chars.slice(0, max).join('') + '…';
}

/** Classifies one brace group; undefined when it is ordinary text such as `{note}`. */
function tokenOf(raw: string, start: number, format: PlaceholderFormat = 'POSITIONAL'): Token | undefined {
  const open = /^\{*/.exec(raw)![0].length;
  const close = /\}*$/.exec(raw)![0].length;
  const inner = raw.slice(open, raw.length - close);
  const end = start + raw.length;
  const shown = `"${excerpt(raw)}"`;
  const key = '';
  if (open === 1 && close === 1) {
    if (!/^\s*[0-9]+\s*$/.test(inner)) return undefined;
    return { number: 0, key, start, end, raw, problem: `${shown} has single braces; write {{${inner.trim()}}}.` };
  }
  if (open !== 2 || close !== 2) {
    const problem = `${shown} has unbalanced braces; a placeholder is two braces each side, like {{1}}.`;
    return { number: 0, key, start, end, raw, problem };
  }
  if (format === 'NAMED') return namedTokenOf(inner, shown, start, end, raw);
  if (PLACEHOLDER_NUMBER.test(inner)) return { number: Number(inner), key: inner, start, end, raw };
  let problem: string;
  if (inner.trim() === '') problem = `${shown} is empty; put a number inside, like {{1}}.`;
  else if (/^\s+[0-9]+\s*$|^\s*[0-9]+\s+$/.test(inner)) problem = `${shown} has spaces; write {{${inner.trim()}}}.`;
  else if (/^0[0-9]*$/.test(inner)) problem = `${shown} is not allowed; placeholders count from {{1}}, without leading zeros.`;
  else if (/^[0-9]+$/.test(inner)) problem = `${shown} is out of range; placeholders count from {{1}}, without gaps.`;
  else problem = `${shown} is not a placeholder; placeholders are numbered, like {{1}}, {{2}}.`;
  return { number: 0, key: '', start, end, raw, problem };
}

function namedTokenOf(inner: string, shown: string, start: number, end: number, raw: string): Token {
  if (PARAMETER_NAME.test(inner)) return { number: 0, key: inner, start, end, raw };
  let problem: string;
  if (inner.trim() === '') problem = `${shown} is empty; put a name inside, like {{first_name}}.`;
  else if (inner.trim() !== inner) problem = `${shown} has spaces; write {{${inner.trim()}}}.`;
  else if (/^[0-9]+$/.test(inner)) {
    problem = `${shown} is numbered, but this template's parameter_format is NAMED: name it, like {{first_name}}.`;
  } else problem = `${shown} is not a parameter name: use lowercase letters, digits and underscores, like {{first_name}}.`;
  return { number: 0, key: '', start, end, raw, problem };
}

function tokensOf(text: string, format: PlaceholderFormat = 'POSITIONAL'): Token[] {
  const tokens: Token[] = [];
  for (const match of text.matchAll(BRACES)) {
    const token = tokenOf(match[0], match.index, format);
    if (token) tokens.push(token);
  }
  return tokens;
}

/** Every well-formed placeholder, in order of appearance (repeats included). */
export function findPlaceholders(text: string, format: PlaceholderFormat = 'POSITIONAL'): PlaceholderMatch[] {
  return tokensOf(text, format)
    .filter((token) => token.problem === undefined)
    .map(({ number, key, start, end }) => ({ number, key, start, end }));
}

/**
 * The keys a text's placeholders take their values from: "1", "2"… ascending (POSITIONAL), or
 * the names in order of first use (NAMED).
 */
export function placeholderKeys(text: string, format: PlaceholderFormat = 'POSITIONAL'): string[] {
  if (format === 'POSITIONAL') return parsePlaceholders(text).map(String);
  return [...new Set(findPlaceholders(text, format).map((match) => match.key))];
}

/** The distinct placeholder numbers a text uses, ascending: `"{{2}} {{1}} {{2}}"` → `[1, 2]`. */
export function parsePlaceholders(text: string): number[] {
  return [...new Set(findPlaceholders(text).map((match) => match.number))].sort((a, b) => a - b);
}

/** How many values the text needs: the number of distinct placeholders. */
export function placeholderCount(text: string): number {
  return parsePlaceholders(text).length;
}

/**
 * Replaces each `{{n}}` with `values[String(n)]`, in one pass (a value that itself looks like a
 * placeholder is not expanded). A placeholder without a value is left as written.
 */
export function renderText(text: string, values: Readonly<Record<string, string>>, format: PlaceholderFormat = 'POSITIONAL'): string {
  return text.replace(BRACES, (raw, start: number) => {
    const token = tokenOf(raw, start, format);
    if (token === undefined || token.problem !== undefined) return raw;
    const key = token.key;
    return Object.hasOwn(values, key) ? values[key]! : raw;
  });
}

export function quoted(value: string): string {
  return JSON.stringify(excerpt(value));
}

// Control characters other than tab, line feed and carriage return: never meant, and U+0000
// cannot even be stored by PostgreSQL.
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

function list(keys: (number | string)[]): string {
  const shown = keys.slice(0, 5).map((n) => `{{${n}}}`);
  return shown.join(', ') + (keys.length > 5 ? ', …' : '');
}

/** The rules every component text follows: valid Unicode, no control characters, its length, placeholders. */
export function checkText(type: TextComponentType, text: string, field: string, format: PlaceholderFormat = 'POSITIONAL'): FieldError[] {
  if (!text.isWellFormed()) {
    return [{ field, code: 'invalid_unicode', message: `The ${type} text has a broken character (an unpaired surrogate); send valid Unicode.` }];
  }
  const control = CONTROL.exec(text);
  if (control) {
    const codePoint = 'U+' + control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    return [{ field, code: 'invalid_character', message: `The ${type} text contains the control character ${codePoint}; remove it.` }];
  }
  const errors: FieldError[] = [];
  const max = MAX_TEXT_LENGTH[type];
  const length = [...text].length;
  if (text.trim() === '') {
    errors.push({ field, code: 'too_short', message: `The ${type} text is empty; write 1 to ${max} characters.` });
  } else if (length > max) {
    errors.push({ field, code: 'too_long', message: `The ${type} text is ${length} characters long; a ${type} allows at most ${max}.` });
  }

  const tokens = tokensOf(text, format);
  const malformed = tokens.filter((token) => token.problem !== undefined);
  if (malformed.length > 0) {
    const more = malformed.length > 1 ? ` (and ${malformed.length - 1} more)` : '';
    errors.push({ field, code: 'malformed_placeholder', message: `${malformed[0]!.problem!}${more}` });
    return errors;
  }
  if (type === 'FOOTER' && tokens.length > 0) {
    errors.push({
      field,
      code: 'placeholder_not_allowed',
      message: `A FOOTER cannot contain placeholders; remove ${list(tokens.map((token) => token.key))}.`,
    });
    return errors;
  }
  if (type === 'HEADER' && tokens.length > MAX_HEADER_PLACEHOLDERS) {
    errors.push({
      field,
      code: 'too_many_placeholders',
      message: `A HEADER can have at most one placeholder${format === 'NAMED' ? '' : ', {{1}}'}; this one has ${tokens.length}.`,
    });
    return errors;
  }
  if (format === 'NAMED') return errors;
  const used = new Set(tokens.map((token) => token.number));
  const missing: number[] = [];
  for (let n = 1; n <= Math.max(0, ...used); n++) if (!used.has(n)) missing.push(n);
  if (missing.length > 0) {
    errors.push({
      field,
      code: 'placeholder_gap',
      message: `Placeholders must be numbered from {{1}} without gaps; ${list(missing)} ${missing.length === 1 ? 'is' : 'are'} missing.`,
    });
  }
  return errors;
}

