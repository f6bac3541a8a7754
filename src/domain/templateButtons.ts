// The BUTTONS of UTILITY and MARKETING templates, with Meta's rules (CONTRACT §9): QUICK_REPLY,
// URL (which may end in one `{{1}}`, with an example), PHONE_NUMBER and COPY_CODE; at most 10
// buttons, 2 URL, 1 PHONE_NUMBER and 1 COPY_CODE, the quick replies side by side. AUTHENTICATION
// templates have their OTP button instead (authenticationTemplates.ts). Pure: no I/O.

import { isPossiblePhoneNumber } from 'libphonenumber-js';
import type { FieldError } from './fieldError.ts';
import { quoted } from './templateText.ts';

export const BUTTON_TYPES = ['QUICK_REPLY', 'URL', 'PHONE_NUMBER', 'COPY_CODE'] as const;
export type ButtonType = (typeof BUTTON_TYPES)[number];

export const MAX_BUTTONS = 10;
const MAX_OF_TYPE: Partial<Record<ButtonType, number>> = { URL: 2, PHONE_NUMBER: 1, COPY_CODE: 1 };
export const MAX_BUTTON_TEXT = 25;
const MAX_URL_LENGTH = 2000;
const MAX_PHONE_LENGTH = 20;
export const MAX_COUPON_CODE = 15;
/** A URL button's one dynamic part: `{{1}}`, at the very end. */
export const URL_SUFFIX = '{{1}}';
const PHONE = /^\+?[1-9][0-9]{7,14}$/;

/** A button as submitted, before it is known to follow the rules (OTP fields aside). */
export interface TemplateButtonDraft {
  type: string;
  text?: string;
  url?: string;
  phone_number?: string;
  example?: string | readonly string[];
  otp_type?: string;
  autofill_text?: string;
  supported_apps?: unknown;
}

type Field = keyof TemplateButtonDraft;
const FIELDS_OF: Record<ButtonType, Field[]> = {
  QUICK_REPLY: ['type', 'text'],
  URL: ['type', 'text', 'url', 'example'],
  PHONE_NUMBER: ['type', 'text', 'phone_number'],
  COPY_CODE: ['type', 'example'],
};

/** Whether a URL button's url takes a value at each send. */
export function hasUrlSuffix(url: string): boolean {
  return url.endsWith(URL_SUFFIX);
}

function textErrors(text: string | undefined, at: string, type: ButtonType): FieldError[] {
  if (text === undefined) return [{ field: `${at}/text`, code: 'required', message: `A ${type} button needs a "text" (its label, 1 to ${MAX_BUTTON_TEXT} characters).` }];
  const length = [...text].length;
  if (text.trim() === '') return [{ field: `${at}/text`, code: 'too_short', message: `${at}/text is empty; write 1 to ${MAX_BUTTON_TEXT} characters.` }];
  if (length > MAX_BUTTON_TEXT) return [{ field: `${at}/text`, code: 'too_long', message: `${at}/text is ${length} characters long; a button label allows at most ${MAX_BUTTON_TEXT}.` }];
  if (/[{}]{2}/.test(text)) return [{ field: `${at}/text`, code: 'placeholder_not_allowed', message: `A button label cannot contain placeholders.` }];
  return [];
}

function urlErrors(button: TemplateButtonDraft, at: string): FieldError[] {
  const { url, example } = button;
  if (url === undefined) return [{ field: `${at}/url`, code: 'required', message: 'A URL button needs a "url", e.g. "https://example.com/orders/{{1}}".' }];
  const braces = url.match(/\{\{|\}\}/g)?.length ?? 0;
  const dynamic = hasUrlSuffix(url);
  if (braces > (dynamic ? 2 : 0)) {
    return [{ field: `${at}/url`, code: 'malformed_placeholder', message: 'A URL button may have one placeholder, {{1}}, and only at the very end of its url.' }];
  }
  const base = dynamic ? url.slice(0, -URL_SUFFIX.length) + 'x' : url;
  let parsed: URL | undefined;
  try {
    parsed = new URL(base);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || url.length > MAX_URL_LENGTH) {
    return [{ field: `${at}/url`, code: 'invalid_url', message: `${at}/url must be an http(s) URL of at most ${MAX_URL_LENGTH} characters.` }];
  }
  if (!dynamic) {
    return example === undefined ? [] : [{ field: `${at}/example`, code: 'not_allowed', message: 'The url has no {{1}}, so the button takes no example; remove it.' }];
  }
  if (!Array.isArray(example) || example.length !== 1 || typeof example[0] !== 'string' || example[0].trim() === '') {
    return [{
      field: `${at}/example`,
      code: example === undefined ? 'required' : 'example_mismatch',
      message: 'The url ends in {{1}}: give "example" with one sample value, e.g. ["1001"] (Meta requires it for review).',
    }];
  }
  if (example[0].length > MAX_URL_LENGTH) return [{ field: `${at}/example/0`, code: 'too_long', message: `${at}/example/0 is longer than ${MAX_URL_LENGTH} characters.` }];
  return [];
}

function phoneErrors(phone: string | undefined, at: string): FieldError[] {
  if (phone === undefined) return [{ field: `${at}/phone_number`, code: 'required', message: 'A PHONE_NUMBER button needs a "phone_number" in E.164, e.g. "+15550051310".' }];
  const e164 = phone.startsWith('+') ? phone : `+${phone}`;
  if (phone.length > MAX_PHONE_LENGTH || !PHONE.test(phone) || !isPossiblePhoneNumber(e164)) {
    return [{ field: `${at}/phone_number`, code: 'invalid_phone', message: `${at}/phone_number must be a possible phone number in E.164 (a + then 8 to 15 digits), e.g. "+15550051310".` }];
  }
  return [];
}

function couponErrors(example: TemplateButtonDraft['example'], at: string): FieldError[] {
  if (typeof example !== 'string') {
    return [{
      field: `${at}/example`,
      code: example === undefined ? 'required' : 'invalid_type',
      message: `A COPY_CODE button needs "example": a sample code of 1 to ${MAX_COUPON_CODE} characters, e.g. "SAVE20".`,
    }];
  }
  if (example.trim() === '' || example.length > MAX_COUPON_CODE) {
    return [{ field: `${at}/example`, code: example.trim() === '' ? 'too_short' : 'too_long', message: `${at}/example is a code of 1 to ${MAX_COUPON_CODE} characters.` }];
  }
  return [];
}

function buttonErrors(button: TemplateButtonDraft, at: string): FieldError[] {
  const type = button.type as ButtonType;
  if (!BUTTON_TYPES.includes(type)) {
    const otp = button.type.toUpperCase() === 'OTP';
    return [{
      field: `${at}/type`,
      code: otp ? 'not_allowed' : 'invalid_value',
      message: otp
        ? 'An OTP button belongs to an AUTHENTICATION template.'
        : `Button type ${quoted(button.type)} is not one of QUICK_REPLY, URL, PHONE_NUMBER, COPY_CODE.`,
    }];
  }
  const errors: FieldError[] = (Object.keys(button) as Field[])
    .filter((field) => button[field] !== undefined && !FIELDS_OF[type].includes(field))
    .map((field) => ({ field: `${at}/${field}`, code: 'not_allowed', message: `"${field}" does not apply to a ${type} button; remove it.` }));
  if (type !== 'COPY_CODE') errors.push(...textErrors(button.text, at, type));
  if (type === 'URL') errors.push(...urlErrors(button, at));
  if (type === 'PHONE_NUMBER') errors.push(...phoneErrors(button.phone_number, at));
  if (type === 'COPY_CODE') errors.push(...couponErrors(button.example, at));
  return errors;
}

/** What is wrong with the buttons of a UTILITY or MARKETING template's BUTTONS component at `at`. */
export function templateButtonsErrors(buttons: readonly TemplateButtonDraft[] | undefined, at: string): FieldError[] {
  if (buttons === undefined || buttons.length === 0 || buttons.length > MAX_BUTTONS) {
    return [{
      field: `${at}/buttons`,
      code: buttons === undefined ? 'required' : 'invalid_count',
      message: `A BUTTONS component has 1 to ${MAX_BUTTONS} buttons${buttons === undefined ? '' : `; this one has ${buttons.length}`}.`,
    }];
  }
  const errors = buttons.flatMap((button, index) => buttonErrors(button, `${at}/buttons/${index}`));
  const seen = new Map<string, number>();
  buttons.forEach((button, index) => {
    const count = (seen.get(button.type) ?? 0) + 1;
    seen.set(button.type, count);
    const max = MAX_OF_TYPE[button.type as ButtonType];
    if (max !== undefined && count > max) {
      errors.push({
        field: `${at}/buttons/${index}`,
        code: 'too_many_buttons',
        message: `A template has at most ${max} ${button.type} button${max === 1 ? '' : 's'}; ${at}/buttons/${index} is one too many.`,
      });
    }
  });
  // Quick replies side by side (Meta's grouping): none after a quick reply that follows another kind.
  const quick = buttons.map((button) => button.type === 'QUICK_REPLY');
  const first = quick.indexOf(true);
  const last = quick.lastIndexOf(true);
  const apart = quick.findIndex((isQuick, index) => index > first && index < last && !isQuick);
  if (first !== -1 && apart !== -1) {
    errors.push({
      field: `${at}/buttons/${apart}`,
      code: 'buttons_not_grouped',
      message: `Quick replies must be grouped together: ${at}/buttons/${apart} (${quoted(buttons[apart]!.type)}) sits between quick replies; put the quick replies before or after the other buttons.`,
    });
  }
  return errors;
}
