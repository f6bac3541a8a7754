// Template rules (CONTRACT §3). Pure: no I/O. Placeholders and text rules: templateText.ts.
//
// Components follow Meta's shape: HEADER, BODY and FOOTER carry `text` and may carry `example`
// values (templateExamples.ts); a HEADER may instead be media (IMAGE, VIDEO, DOCUMENT, with a
// sample) or a LOCATION; BUTTONS follow templateButtons.ts (CONTRACT §9). AUTHENTICATION
// templates follow Meta's authentication model instead (authenticationTemplates.ts).

import type {
  ButtonsComponent,
  MediaHeaderComponent,
  OtpButton,
  ParameterFormat,
  TemplateButton,
  TemplateComponent,
  TextComponent,
} from '../providers/provider.ts';
import {
  authenticationComponentErrors,
  authenticationComponents,
  missingAuthenticationParts,
} from './authenticationTemplates.ts';
import type { FieldError } from './fieldError.ts';
import type { ComponentDraft, TemplateDraft } from './templateDrafts.ts';
import { templateButtonsErrors } from './templateButtons.ts';
import { exampleErrors } from './templateExamples.ts';
import { checkText, quoted, type TextComponentType } from './templateText.ts';

export {
  findPlaceholders,
  MAX_TEXT_LENGTH,
  parsePlaceholders,
  placeholderCount,
  renderText,
} from './templateText.ts';

export type { FieldError, TemplateComponent, TextComponent };
export type { ComponentDraft, TemplateDraft } from './templateDrafts.ts';

export const TEMPLATE_CATEGORIES = ['UTILITY', 'MARKETING', 'AUTHENTICATION'] as const;
export const COMPONENT_TYPES = ['HEADER', 'BODY', 'FOOTER', 'BUTTONS'] as const;
type ComponentType = (typeof COMPONENT_TYPES)[number];

export const NAME_PATTERN = /^[a-z0-9_]{1,512}$/;
export const LANGUAGE_PATTERN = /^[a-z]{2,3}(_[A-Za-z]{2,4})?$/;
export const MAX_NAME_LENGTH = 512;
export const PARAMETER_FORMATS = ['POSITIONAL', 'NAMED'] as const;
export const HEADER_FORMATS = ['TEXT', 'IMAGE', 'VIDEO', 'DOCUMENT', 'LOCATION'] as const;
const MEDIA_FORMATS = ['IMAGE', 'VIDEO', 'DOCUMENT'] as const;

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

/** Fields that belong to other components or categories, refused where they do not apply. */
function notAllowed(component: ComponentDraft, at: string, fields: (keyof ComponentDraft)[], why: string): FieldError[] {
  return fields
    .filter((field) => component[field] !== undefined)
    .map((field) => ({ field: `${at}/${field}`, code: 'not_allowed', message: `"${field}" ${why}; remove it.` }));
}

/** A media (IMAGE, VIDEO, DOCUMENT) or LOCATION HEADER: no text; a media one needs its sample. */
function mediaHeaderErrors(format: string, component: ComponentDraft, at: string): FieldError[] {
  const errors = [
    ...notAllowed(component, at, ['text'], `does not apply to a ${format} HEADER`),
    ...notAllowed(component, at, ['add_security_recommendation', 'code_expiration_minutes'], 'applies only to an AUTHENTICATION template'),
    ...notAllowed(component, at, ['buttons'], 'belongs to a BUTTONS component'),
  ];
  const example = component.example;
  if (format === 'LOCATION') return [...errors, ...notAllowed(component, at, ['example'], 'does not apply to a LOCATION HEADER (it takes no sample)')];
  const forms = (['header_handle', 'header_url'] as const).filter((form) => example?.[form] !== undefined);
  const others = Object.keys(example ?? {}).filter((key) => key !== 'header_handle' && key !== 'header_url');
  for (const other of others) {
    errors.push({ field: `${at}/example/${other}`, code: 'not_allowed', message: `A ${format} HEADER's example is its sample (header_handle or header_url); remove "${other}".` });
  }
  if (forms.length !== 1) {
    errors.push({
      field: `${at}/example`,
      code: forms.length === 0 ? 'required' : 'not_allowed',
      message:
        `A ${format} HEADER needs one sample for review: example.header_handle ["<handle from the provider's upload>"] ` +
        'or example.header_url ["https://…"] (svc downloads and uploads it), not both.',
    });
    return errors;
  }
  const form = forms[0]!;
  const values = example![form]!;
  const value = values[0];
  if (values.length !== 1 || typeof value !== 'string' || value.trim() === '') {
    errors.push({ field: `${at}/example/${form}`, code: 'example_mismatch', message: `${at}/example/${form} holds exactly one non-empty value.` });
  } else if (form === 'header_url' && !/^https?:\/\/[^\s]+$/i.test(value)) {
    errors.push({ field: `${at}/example/header_url/0`, code: 'invalid_url', message: `${at}/example/header_url/0 must be an https URL svc can download.` });
  }
  return errors;
}

/** A HEADER, BODY or FOOTER of a UTILITY or MARKETING template. */
function textComponentErrors(type: TextComponentType, component: ComponentDraft, at: string, format: ParameterFormat): FieldError[] {
  const errors: FieldError[] = [];
  if (type === 'HEADER') {
    // A HEADER without format is a text header; it is stored and echoed as submitted, without a
    // format added.
    if (component.format !== undefined && component.format !== 'TEXT') {
      if ((HEADER_FORMATS as readonly string[]).includes(component.format)) return mediaHeaderErrors(component.format, component, at);
      const upper = component.format.toUpperCase();
      const hint = (HEADER_FORMATS as readonly string[]).includes(upper) ? ` Formats are uppercase: "${upper}".` : '';
      errors.push({
        field: `${at}/format`,
        code: 'invalid_value',
        message: `HEADER format ${quoted(component.format)} is not one of TEXT, IMAGE, VIDEO, DOCUMENT, LOCATION.${hint}`,
      });
      // What else it needs depends on the format meant: the format is the fix.
      if (component.text === undefined) return errors;
    }
  } else if (component.format !== undefined) {
    errors.push({ field: `${at}/format`, code: 'not_allowed', message: `"format" applies only to a HEADER; remove it from this ${type}.` });
  }
  errors.push(
    ...notAllowed(component, at, ['add_security_recommendation', 'code_expiration_minutes'], 'applies only to an AUTHENTICATION template'),
    ...notAllowed(component, at, ['buttons'], 'belongs to a BUTTONS component'),
  );
  if (component.text === undefined) {
    errors.push({ field: `${at}/text`, code: 'required', message: `The ${type} needs a "text".` });
    return errors;
  }
  const textErrors = checkText(type, component.text, `${at}/text`, format);
  errors.push(...textErrors);
  if (textErrors.length === 0) errors.push(...exampleErrors(type, component.text, component.example, `${at}/example`, format));
  return errors;
}

/** The BUTTONS of a UTILITY or MARKETING template. */
function buttonsComponentErrors(component: ComponentDraft, at: string): FieldError[] {
  return [
    ...notAllowed(component, at, ['format', 'text', 'example', 'add_security_recommendation', 'code_expiration_minutes'], 'does not apply to a BUTTONS component'),
    ...templateButtonsErrors(component.buttons, at),
  ];
}

/** POSITIONAL (the default) or NAMED; undefined when the draft names neither. */
export function parameterFormatOf(draft: { parameter_format?: string }): ParameterFormat | undefined {
  const format = draft.parameter_format ?? 'POSITIONAL';
  return (PARAMETER_FORMATS as readonly string[]).includes(format) ? (format as ParameterFormat) : undefined;
}

function checkParameterFormat(draft: TemplateDraft): FieldError[] {
  const format = parameterFormatOf(draft);
  const field = '/parameter_format';
  if (format === undefined) {
    return [{ field, code: 'invalid_value', message: `parameter_format ${quoted(draft.parameter_format!)} is not "POSITIONAL" or "NAMED".` }];
  }
  if (format === 'NAMED' && draft.category === 'AUTHENTICATION') {
    return [{ field, code: 'not_allowed', message: 'An AUTHENTICATION template’s code is positional ({{1}}); leave parameter_format out.' }];
  }
  return [];
}

function checkComponents(components: TemplateDraft['components'], category: string, format: ParameterFormat): FieldError[] {
  const authentication = category === 'AUTHENTICATION';
  const errors: FieldError[] = [];
  const firstOfType = new Map<ComponentType, number>();
  components.forEach((component, index) => {
    const at = `/components/${index}`;
    const type = component.type as ComponentType;
    if (!COMPONENT_TYPES.includes(type)) {
      errors.push({
        field: `${at}/type`,
        code: 'unknown_component_type',
        message: `Component type ${quoted(component.type)} is not supported; use HEADER, BODY, FOOTER or BUTTONS.`,
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
    if (authentication) errors.push(...authenticationComponentErrors(component, at));
    else if (type === 'BUTTONS') errors.push(...buttonsComponentErrors(component, at));
    else errors.push(...textComponentErrors(type, component, at, format));
  });
  if (!firstOfType.has('BODY')) {
    errors.push({
      field: '/components',
      code: 'missing_body',
      message: authentication
        ? 'Add exactly one BODY component, e.g. {"type": "BODY", "add_security_recommendation": true}.'
        : 'Add exactly one BODY component, e.g. {"type": "BODY", "text": "Your order {{1}} has shipped."}.',
    });
  }
  if (authentication) errors.push(...missingAuthenticationParts(firstOfType.has('BUTTONS')));
  return errors;
}

/** Every rule of CONTRACT §3 a draft breaks; empty when it may be registered. */
export function validateTemplate(draft: TemplateDraft): FieldError[] {
  return [
    ...checkName(draft.name),
    ...checkLanguage(draft.language),
    ...checkCategory(draft.category),
    ...checkParameterFormat(draft),
    ...checkComponents(draft.components, draft.category, parameterFormatOf(draft) ?? 'POSITIONAL'),
  ];
}

/**
 * The components of a valid draft as svc stores and returns them: as submitted, except that an
 * AUTHENTICATION template's preset texts are filled in where they were left out.
 */
export function registeredComponents(draft: TemplateDraft): TemplateComponent[] {
  return draft.category === 'AUTHENTICATION'
    ? authenticationComponents(draft.components)
    : (draft.components as TemplateComponent[]);
}

function isText(component: TemplateComponent): component is TextComponent {
  return component.type !== 'BUTTONS' && (component.format === undefined || component.format === 'TEXT');
}

/** The BODY component of a valid template. */
export function bodyOf(components: readonly TemplateComponent[]): TextComponent | undefined {
  return components.filter(isText).find((component) => component.type === 'BODY');
}

/** The HEADER of a valid template when it is media (IMAGE, VIDEO, DOCUMENT) or LOCATION. */
export function mediaHeaderOf(components: readonly TemplateComponent[]): MediaHeaderComponent | undefined {
  return components.find(
    (component): component is MediaHeaderComponent =>
      component.type === 'HEADER' && component.format !== undefined && component.format !== 'TEXT',
  );
}

/** Whether a HEADER format is media with a sample (not LOCATION). */
export function isMediaFormat(format: string): format is (typeof MEDIA_FORMATS)[number] {
  return (MEDIA_FORMATS as readonly string[]).includes(format);
}

/** The buttons of a UTILITY or MARKETING template (none for others, and for templates without BUTTONS). */
export function templateButtonsOf(components: readonly TemplateComponent[]): TemplateButton[] {
  const buttons = components.find((component): component is ButtonsComponent => component.type === 'BUTTONS')?.buttons ?? [];
  return buttons.filter((button): button is TemplateButton => button.type !== 'OTP');
}

/** The TEXT HEADER component of a valid template, if it has one. */
export function headerOf(components: readonly TemplateComponent[]): TextComponent | undefined {
  return components.filter(isText).find((component) => component.type === 'HEADER');
}

/** The FOOTER component of a valid template, if it has one. */
export function footerOf(components: readonly TemplateComponent[]): TextComponent | undefined {
  return components.filter(isText).find((component) => component.type === 'FOOTER');
}

/** The OTP buttons of an AUTHENTICATION template (none for other templates). */
export function otpButtonsOf(components: readonly TemplateComponent[]): OtpButton[] {
  const buttons = components.find((component): component is ButtonsComponent => component.type === 'BUTTONS')?.buttons ?? [];
  return buttons.filter((button): button is OtpButton => button.type === 'OTP');
}

/**
 * Provider statuses in which an APPROVED template sends: Meta still sends flagged (at risk) and
 * locked (not editable) templates, never paused, disabled, deleted or re-reviewed ones.
 */
const SENDABLE_PROVIDER_STATUSES: ReadonlySet<string> = new Set(['APPROVED', 'FLAGGED', 'LOCKED']);

/** Why a template cannot send now, or undefined when it can. */
export function sendProblem(template: {
  name: string;
  language: string;
  status: string;
  providerStatus: string | null;
  providerStatusReason: string | null;
}): string | undefined {
  const { name, language, status, providerStatus, providerStatusReason } = template;
  if (status !== 'APPROVED') return `Template '${name}' (${language}) is ${status}; only APPROVED templates can send.`;
  if (providerStatus === null || SENDABLE_PROVIDER_STATUSES.has(providerStatus)) return undefined;
  const why = providerStatusReason ? ` (${providerStatusReason})` : '';
  return `Template '${name}' (${language}) is ${providerStatus} at the provider${why}; it cannot send until the provider makes it active again.`;
}
