// Example values for a template's placeholders, in Meta's shape: `example.header_text` (one value
// for the HEADER's placeholder) and `example.body_text` (one list with a value per BODY
// placeholder). Meta requires them for review; when the customer gives none, svc derives
// language-neutral ones (numbers), never words of one language. Pure: no I/O.

import type { ComponentExample } from '../providers/provider.ts';
import type { FieldError } from './fieldError.ts';
import { MAX_TEXT_LENGTH, placeholderCount, type TextComponentType } from './templateText.ts';

// Meta refuses example (and parameter) values with new lines, tabs or more than four spaces in a row.
const NEWLINE_OR_TAB = /[\n\r\t]/;
const FIVE_SPACES = / {5}/;
const BRACES = /\{\{|\}\}/;

function valueErrors(value: string, max: number, field: string): FieldError[] {
  if (value.trim() === '') return [{ field, code: 'too_short', message: `${field} is empty; give a realistic value.` }];
  if ([...value].length > max) return [{ field, code: 'too_long', message: `${field} is longer than ${max} characters.` }];
  if (NEWLINE_OR_TAB.test(value) || FIVE_SPACES.test(value)) {
    return [{ field, code: 'provider_rule', message: `${field} must not contain new lines, tabs or more than four spaces in a row.` }];
  }
  if (BRACES.test(value)) return [{ field, code: 'provider_rule', message: `${field} must be a value, not a placeholder.` }];
  return [];
}

function countError(field: string, expected: number, given: number, what: string): FieldError {
  return {
    field,
    code: 'example_mismatch',
    message: `${field} needs one value per placeholder of the ${what} (${expected}); it has ${given}.`,
  };
}

/** What is wrong with a component's `example`, given its (valid) text. */
export function exampleErrors(
  type: TextComponentType,
  text: string,
  example: { header_text?: readonly string[]; body_text?: ReadonlyArray<readonly string[]> } | undefined,
  at: string,
): FieldError[] {
  if (example === undefined) return [];
  const count = placeholderCount(text);
  if (type === 'FOOTER' || count === 0) {
    return [{ field: at, code: 'not_allowed', message: `The ${type} has no placeholders, so it takes no example; remove it.` }];
  }
  const errors: FieldError[] = [];
  const own = type === 'HEADER' ? 'header_text' : 'body_text';
  const other = type === 'HEADER' ? 'body_text' : 'header_text';
  if (example[other] !== undefined) {
    errors.push({ field: `${at}/${other}`, code: 'not_allowed', message: `A ${type} example is "${own}"; remove "${other}".` });
  }
  const max = MAX_TEXT_LENGTH[type];
  if (type === 'HEADER') {
    const values = example.header_text;
    if (values === undefined) return [...errors, { field: `${at}/header_text`, code: 'required', message: `${at}/header_text is required.` }];
    if (values.length !== count) return [...errors, countError(`${at}/header_text`, count, values.length, 'HEADER')];
    values.forEach((value, index) => errors.push(...valueErrors(value, max, `${at}/header_text/${index}`)));
    return errors;
  }
  const lists = example.body_text;
  if (lists === undefined) return [...errors, { field: `${at}/body_text`, code: 'required', message: `${at}/body_text is required.` }];
  if (lists.length !== 1) {
    return [...errors, { field: `${at}/body_text`, code: 'example_mismatch', message: `${at}/body_text holds exactly one list of values, e.g. [["Ana", "#1001"]].` }];
  }
  const values = lists[0]!;
  if (values.length !== count) return [...errors, countError(`${at}/body_text/0`, count, values.length, 'BODY')];
  values.forEach((value, index) => errors.push(...valueErrors(value, max, `${at}/body_text/0/${index}`)));
  return errors;
}

/** Language-neutral example values: 1111, 2222, … (a number reads the same in every language). */
function neutralValues(count: number): string[] {
  return Array.from({ length: count }, (_, index) => String(index + 1).repeat(4).slice(0, 8));
}

/** The component's own example, or one derived for its placeholders; undefined when it has none. */
export function exampleFor(component: { type: TextComponentType; text: string; example?: ComponentExample }): ComponentExample | undefined {
  const count = placeholderCount(component.text);
  if (component.type === 'FOOTER' || count === 0) return undefined;
  if (component.type === 'HEADER') return { header_text: component.example?.header_text ?? neutralValues(count) };
  return { body_text: component.example?.body_text ?? [neutralValues(count)] };
}
