// Example values for a template's placeholders, in Meta's shape: `example.header_text` (one value
// for the HEADER's placeholder) and `example.body_text` (one list with a value per BODY
// placeholder). Meta requires them for review; when the customer gives none, svc derives
// language-neutral ones (numbers), never words of one language. Pure: no I/O.

//
// NAMED templates give theirs as Meta's `header_text_named_params` / `body_text_named_params`:
// one { param_name, example } per name.

import type { ComponentExample, NamedParameterExample } from '../providers/provider.ts';
import type { FieldError } from './fieldError.ts';
import { MAX_TEXT_LENGTH, type PlaceholderFormat, placeholderCount, placeholderKeys, type TextComponentType } from './templateText.ts';

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

/** A draft's example: any of Meta's forms, checked against the component it sits in. */
export interface ExampleDraft {
  header_text?: readonly string[];
  body_text?: ReadonlyArray<readonly string[]>;
  header_text_named_params?: ReadonlyArray<{ param_name: string; example: string }>;
  body_text_named_params?: ReadonlyArray<{ param_name: string; example: string }>;
  header_handle?: readonly string[];
  header_url?: readonly string[];
}

/** Example forms that never belong in a text component's example. */
const MEDIA_FORMS = ['header_handle', 'header_url'] as const;

function namedExampleErrors(type: 'HEADER' | 'BODY', text: string, example: ExampleDraft, at: string): FieldError[] {
  const own = type === 'HEADER' ? 'header_text_named_params' : 'body_text_named_params';
  const errors: FieldError[] = [];
  for (const other of ['header_text', 'body_text', type === 'HEADER' ? 'body_text_named_params' : 'header_text_named_params'] as const) {
    if (example[other] !== undefined) {
      errors.push({ field: `${at}/${other}`, code: 'not_allowed', message: `A ${type} of a NAMED template takes "${own}"; remove "${other}".` });
    }
  }
  const params = example[own];
  if (params === undefined) return [...errors, { field: `${at}/${own}`, code: 'required', message: `${at}/${own} is required.` }];
  const names = placeholderKeys(text, 'NAMED');
  const given = params.map((param) => param.param_name);
  const missing = names.filter((name) => !given.includes(name));
  const extra = given.filter((name, index) => !names.includes(name) || given.indexOf(name) !== index);
  if (missing.length > 0 || extra.length > 0) {
    const parts = [
      ...(missing.length > 0 ? [`missing ${missing.map((name) => `"${name}"`).join(', ')}`] : []),
      ...(extra.length > 0 ? [`unknown or repeated ${extra.map((name) => `"${name}"`).join(', ')}`] : []),
    ];
    errors.push({
      field: `${at}/${own}`,
      code: 'example_mismatch',
      message: `${at}/${own} needs one { param_name, example } per parameter of the ${type} (${names.join(', ')}): ${parts.join('; ')}.`,
    });
    return errors;
  }
  params.forEach((param, index) => errors.push(...valueErrors(param.example, MAX_TEXT_LENGTH[type], `${at}/${own}/${index}/example`)));
  return errors;
}

/** What is wrong with a component's `example`, given its (valid) text. */
export function exampleErrors(
  type: TextComponentType,
  text: string,
  example: ExampleDraft | undefined,
  at: string,
  format: PlaceholderFormat = 'POSITIONAL',
): FieldError[] {
  if (example === undefined) return [];
  const media = MEDIA_FORMS.filter((form) => example[form] !== undefined).map((form) => ({
    field: `${at}/${form}`,
    code: 'not_allowed',
    message: `"${form}" is the sample of an IMAGE, VIDEO or DOCUMENT HEADER; remove it from this ${type}.`,
  }));
  if (media.length > 0) return media;
  const count = placeholderKeys(text, format).length;
  if (type === 'FOOTER' || count === 0) {
    return [{ field: at, code: 'not_allowed', message: `The ${type} has no placeholders, so it takes no example; remove it.` }];
  }
  if (format === 'NAMED') return namedExampleErrors(type, text, example, at);
  const errors: FieldError[] = [];
  for (const named of ['header_text_named_params', 'body_text_named_params'] as const) {
    if (example[named] !== undefined) {
      errors.push({ field: `${at}/${named}`, code: 'not_allowed', message: `"${named}" is for NAMED templates (parameter_format); remove it.` });
    }
  }
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

function neutralNamed(names: string[], given: NamedParameterExample[] | undefined): NamedParameterExample[] {
  if (given !== undefined) return given;
  const values = neutralValues(names.length);
  return names.map((name, index) => ({ param_name: name, example: values[index]! }));
}

/** The component's own example, or one derived for its placeholders; undefined when it has none. */
export function exampleFor(
  component: { type: TextComponentType; text: string; example?: ComponentExample },
  format: PlaceholderFormat = 'POSITIONAL',
): ComponentExample | undefined {
  if (format === 'NAMED') {
    const names = placeholderKeys(component.text, 'NAMED');
    if (component.type === 'FOOTER' || names.length === 0) return undefined;
    if (component.type === 'HEADER') return { header_text_named_params: neutralNamed(names, component.example?.header_text_named_params) };
    return { body_text_named_params: neutralNamed(names, component.example?.body_text_named_params) };
  }
  const count = placeholderCount(component.text);
  if (component.type === 'FOOTER' || count === 0) return undefined;
  if (component.type === 'HEADER') return { header_text: component.example?.header_text ?? neutralValues(count) };
  return { body_text: component.example?.body_text ?? [neutralValues(count)] };
}
