// Template rules (CONTRACT §3) and placeholder handling. Pure: no I/O.
//
// Placeholder grammar. A placeholder is exactly `{{n}}`: two braces, a number from 1 to 9999
// written without leading zeros or spaces, two braces. Numbering restarts in each component and
// must run 1..n without gaps; a number may be used more than once (every use gets the same value).
// Anything else built from double braces is malformed and rejected, so a typo never reaches a
// recipient as literal text: `{{0}}`, `{{01}}`, `{{ 1 }}`, `{{name}}`, `{{}}`, `{{1}`, `{1}}`,
// `{{{1}}}`, a lone `{{` or `}}`, and `{1}` (single braces around a number). Other single braces,
// as in `{note}`, are ordinary text.

import type { TemplateComponent } from '../providers/provider.ts';
import type { FieldError } from './fieldError.ts';

export type { FieldError, TemplateComponent };

export const TEMPLATE_CATEGORIES = ['UTILITY', 'MARKETING', 'AUTHENTICATION'] as const;
export type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number];
export const COMPONENT_TYPES = ['HEADER', 'BODY', 'FOOTER'] as const;
type ComponentType = (typeof COMPONENT_TYPES)[number];

export const NAME_PATTERN = /^[a-z0-9_]{1,512}$/;
export const LANGUAGE_PATTERN = /^[a-z]{2,3}(_[A-Za-z]{2,4})?$/;
export const MAX_NAME_LENGTH = 512;
/** Text limits in characters (Unicode code points, as the provider counts them). */
export const MAX_TEXT_LENGTH: Readonly<Record<ComponentType, number>> = { HEADER: 60, BODY: 1024, FOOTER: 60 };
export const MAX_HEADER_PLACEHOLDERS = 1;
const MAX_PLACEHOLDER_DIGITS = 4;

/** A template as submitted, before it is known to follow the rules. */
export interface TemplateDraft {
  name: string;
  language: string;
  category: string;
  components: ReadonlyArray<{ type: string; format?: string; text: string }>;
}

export interface PlaceholderMatch {
  number: number;
  /** Where `{{n}}` starts and ends (exclusive) in the text. */
  start: number;
  end: number;
}

type Token = PlaceholderMatch & { problem?: string; raw: string };

// A run of opening braces, text without braces, a run of closing braces; or a lone `{{` / `}}`.
const BRACES = /\{+[^{}]*\}+|\{\{+|\}\}+/g;
const PLACEHOLDER_NUMBER = new RegExp(`^[1-9][0-9]{0,${MAX_PLACEHOLDER_DIGITS - 1}}$`);

function excerpt(value: string, max = 40): string {
  const chars = [...value];
  return chars.length <= max ? value : chars.slice(0, max).join('') + '…';
}

/** Classifies one brace group; undefined when it is ordinary text such as `{note}`. */
function tokenOf(raw: string, start: number): Token | undefined {
  const open = /^\{*/.exec(raw)![0].length;
  const close = /\}*$/.exec(raw)![0].length;
  const inner = raw.slice(open, raw.length - close);
  const end = start + raw.length;
  const shown = `"${excerpt(raw)}"`;
  if (open === 1 && close === 1) {
    if (!/^\s*[0-9]+\s*$/.test(inner)) return undefined;
    return { number: 0, start, end, raw, problem: `${shown} has single braces; write {{${inner.trim()}}}.` };
  }
  if (open !== 2 || close !== 2) {
    const problem = `${shown} has unbalanced braces; a placeholder is two braces each side, like {{1}}.`;
    return { number: 0, start, end, raw, problem };
  }
  if (PLACEHOLDER_NUMBER.test(inner)) return { number: Number(inner), start, end, raw };
  let problem: string;
  if (inner.trim() === '') problem = `${shown} is empty; put a number inside, like {{1}}.`;
  else if (/^\s+[0-9]+\s*$|^\s*[0-9]+\s+$/.test(inner)) problem = `${shown} has spaces; write {{${inner.trim()}}}.`;
  else if (/^0[0-9]*$/.test(inner)) problem = `${shown} is not allowed; placeholders count from {{1}}, without leading zeros.`;
  else if (/^[0-9]+$/.test(inner)) problem = `${shown} is out of range; placeholders count from {{1}}, without gaps.`;
  else problem = `${shown} is not a placeholder; placeholders are numbered, like {{1}}, {{2}}.`;
  return { number: 0, start, end, raw, problem };
}

function tokensOf(text: string): Token[] {
  const tokens: Token[] = [];
  for (const match of text.matchAll(BRACES)) {
    const token = tokenOf(match[0], match.index);
    if (token) tokens.push(token);
  }
  return tokens;
}

/** Every well-formed placeholder, in order of appearance (repeats included). */
export function findPlaceholders(text: string): PlaceholderMatch[] {
  return tokensOf(text)
    .filter((token) => token.problem === undefined)
    .map(({ number, start, end }) => ({ number, start, end }));
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
export function renderText(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(BRACES, (raw, start: number) => {
    const token = tokenOf(raw, start);
    if (token === undefined || token.problem !== undefined) return raw;
    const key = String(token.number);
    return Object.hasOwn(values, key) ? values[key]! : raw;
  });
}

function quoted(value: string): string {
  return JSON.stringify(excerpt(value));
}

function slugSuggestion(name: string): string | undefined {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  // Only short suggestions: an error message never echoes a long input back.
  return slug !== '' && slug.length <= 64 && NAME_PATTERN.test(slug) ? slug : undefined;
}

function checkName(name: string): FieldError[] {
  if (NAME_PATTERN.test(name)) return [];
  const field = '/name';
  if (name === '') return [{ field, code: 'too_short', message: 'name is empty; give a slug such as "order_update".' }];
  const length = [...name].length;
  if (length > MAX_NAME_LENGTH) {
    return [{ field, code: 'too_long', message: `name is ${length} characters long; the limit is ${MAX_NAME_LENGTH}.` }];
  }
  const suggestion = slugSuggestion(name);
  return [
    {
      field,
      code: 'invalid_format',
      message:
        `name ${quoted(name)} may contain only lowercase letters a-z, digits and underscores` +
        (suggestion ? `; try "${suggestion}".` : ', e.g. "order_update".'),
    },
  ];
}

function checkLanguage(language: string): FieldError[] {
  if (LANGUAGE_PATTERN.test(language)) return [];
  const dashed = /^([A-Za-z]{2,3})-([A-Za-z]{2,4})$/.exec(language);
  const hint = dashed ? ` Use an underscore: "${dashed[1]!.toLowerCase()}_${dashed[2]}".` : '';
  return [
    {
      field: '/language',
      code: 'invalid_format',
      message:
        `language ${quoted(language)} is not a language code: use 2–3 lowercase letters, optionally ` +
        `followed by "_" and a 2–4 letter region, e.g. "en", "en_US", "pt_BR".${hint}`,
    },
  ];
}

function checkCategory(category: string): FieldError[] {
  if ((TEMPLATE_CATEGORIES as readonly string[]).includes(category)) return [];
  const upper = category.toUpperCase();
  const hint = (TEMPLATE_CATEGORIES as readonly string[]).includes(upper) ? ` Categories are uppercase: "${upper}".` : '';
  return [
    {
      field: '/category',
      code: 'invalid_value',
      message: `category ${quoted(category)} is not one of UTILITY, MARKETING, AUTHENTICATION.${hint}`,
    },
  ];
}

// Control characters other than tab, line feed and carriage return: never meant, and U+0000
// cannot even be stored by PostgreSQL.
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

function list(numbers: number[]): string {
  const shown = numbers.slice(0, 5).map((n) => `{{${n}}}`);
  return shown.join(', ') + (numbers.length > 5 ? ', …' : '');
}

function checkText(type: ComponentType, text: string, field: string): FieldError[] {
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

  const tokens = tokensOf(text);
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
      message: `A FOOTER cannot contain placeholders; remove ${list(tokens.map((token) => token.number))}.`,
    });
    return errors;
  }
  if (type === 'HEADER' && tokens.length > MAX_HEADER_PLACEHOLDERS) {
    errors.push({
      field,
      code: 'too_many_placeholders',
      message: `A HEADER can have at most one placeholder, {{1}}; this one has ${tokens.length}.`,
    });
    return errors;
  }
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

function checkComponents(components: TemplateDraft['components']): FieldError[] {
  const errors: FieldError[] = [];
  const firstOfType = new Map<ComponentType, number>();
  components.forEach((component, index) => {
    const at = `/components/${index}`;
    const type = component.type as ComponentType;
    if (!COMPONENT_TYPES.includes(type)) {
      errors.push({
        field: `${at}/type`,
        code: 'unknown_component_type',
        message: `Component type ${quoted(component.type)} is not supported; use HEADER, BODY or FOOTER.`,
      });
      return;
    }
    const first = firstOfType.get(type);
    if (first !== undefined) {
      errors.push({
        field: `${at}/type`,
        code: 'duplicate_component',
        message: `Only one ${type} component is allowed; /components/${first} is already a ${type}.`,
      });
      return;
    }
    firstOfType.set(type, index);
    if (type === 'HEADER') {
      // A HEADER without format is a text header (the only kind supported); it is stored and
      // echoed as submitted, without a format added.
      if (component.format !== undefined && component.format !== 'TEXT') {
        errors.push({
          field: `${at}/format`,
          code: 'invalid_value',
          message: `HEADER format ${quoted(component.format)} is not supported; use "TEXT".`,
        });
      }
    } else if (component.format !== undefined) {
      errors.push({ field: `${at}/format`, code: 'not_allowed', message: `"format" applies only to a HEADER; remove it from this ${type}.` });
    }
    errors.push(...checkText(type, component.text, `${at}/text`));
  });
  if (!firstOfType.has('BODY')) {
    errors.push({
      field: '/components',
      code: 'missing_body',
      message: 'Add exactly one BODY component, e.g. {"type": "BODY", "text": "Your order {{1}} has shipped."}.',
    });
  }
  return errors;
}

/** Every rule of CONTRACT §3 a draft breaks; empty when it may be registered. */
export function validateTemplate(draft: TemplateDraft): FieldError[] {
  return [
    ...checkName(draft.name),
    ...checkLanguage(draft.language),
    ...checkCategory(draft.category),
    ...checkComponents(draft.components),
  ];
}

/** The BODY component of a valid template. */
export function bodyOf(components: readonly TemplateComponent[]): TemplateComponent | undefined {
  return components.find((component) => component.type === 'BODY');
}

/** The HEADER component of a valid template, if it has one. */
export function headerOf(components: readonly TemplateComponent[]): TemplateComponent | undefined {
  return components.find((component) => component.type === 'HEADER');
}
