// AUTHENTICATION templates, as Meta models them: a preset BODY ("<code> is your verification
// code.") with one placeholder, the code, and an optional security recommendation; an optional
// FOOTER stating the code's expiry; and one OTP button, copy code or one-tap autofill. The
// wording is Meta's, sent in the template's language: a customer cannot write it. svc stores the
// English preset (or the customer's own rendering, with exactly the placeholder {{1}}) as the text
// a message shows in its `content`. Pure: no I/O.

import type { ButtonsComponent, TemplateComponent, TextComponent } from '../providers/provider.ts';
import type { FieldError } from './fieldError.ts';
import type { ButtonDraft, ComponentDraft } from './templateDrafts.ts';
import { checkText, parsePlaceholders, quoted } from './templateText.ts';

export const CODE_EXPIRATION_MINUTES = { min: 1, max: 90 } as const;
const MAX_BUTTON_TEXT = 25;
const MAX_SUPPORTED_APPS = 5;
const OTP_TYPES = ['COPY_CODE', 'ONE_TAP'] as const;
// Android package names: two or more segments, each starting with a letter.
const PACKAGE_NAME = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/;
const MAX_PACKAGE_NAME = 224;
const SIGNATURE_HASH = /^[A-Za-z0-9+/=]{11}$/;

const PRESET_BODY = '*{{1}}* is your verification code.';
const SECURITY_RECOMMENDATION = ' For your security, do not share this code.';

export function presetBody(addSecurityRecommendation: boolean): string {
  return PRESET_BODY + (addSecurityRecommendation ? SECURITY_RECOMMENDATION : '');
}

export function presetFooter(minutes: number): string {
  return `This code expires in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
}

/** COPY_CODE or ONE_TAP, whatever the case it was written in (Meta's documents use both). */
export function otpTypeOf(button: { otp_type?: string }): (typeof OTP_TYPES)[number] | undefined {
  const upper = button.otp_type?.toUpperCase();
  return OTP_TYPES.find((type) => type === upper);
}

function refuse(component: ComponentDraft, at: string, fields: (keyof ComponentDraft)[], why: string): FieldError[] {
  return fields
    .filter((field) => component[field] !== undefined)
    .map((field) => ({ field: `${at}/${field}`, code: 'not_allowed', message: `"${field}" ${why}; remove it.` }));
}

function bodyErrors(component: ComponentDraft, at: string): FieldError[] {
  const errors = refuse(component, at, ['format', 'example', 'code_expiration_minutes', 'buttons'], 'does not apply to an AUTHENTICATION BODY');
  if (component.text === undefined) return errors;
  const textErrors = checkText('BODY', component.text, `${at}/text`);
  if (textErrors.length > 0) return [...errors, ...textErrors];
  const numbers = parsePlaceholders(component.text);
  if (numbers.length !== 1 || numbers[0] !== 1) {
    errors.push({
      field: `${at}/text`,
      code: 'authentication_body',
      message:
        'An AUTHENTICATION BODY is Meta’s preset wording with one placeholder, {{1}}, the code; leave "text" out ' +
        `to use the preset (${JSON.stringify(PRESET_BODY)}), or write it with {{1}} only.`,
    });
  }
  return errors;
}

function footerErrors(component: ComponentDraft, at: string): FieldError[] {
  const errors = refuse(component, at, ['format', 'example', 'add_security_recommendation', 'buttons'], 'does not apply to an AUTHENTICATION FOOTER');
  const minutes = component.code_expiration_minutes;
  const { min, max } = CODE_EXPIRATION_MINUTES;
  if (minutes === undefined) {
    errors.push({
      field: `${at}/code_expiration_minutes`,
      code: 'required',
      message: `An AUTHENTICATION FOOTER states when the code expires: give code_expiration_minutes (${min}–${max}).`,
    });
  } else if (!Number.isInteger(minutes) || minutes < min || minutes > max) {
    errors.push({
      field: `${at}/code_expiration_minutes`,
      code: 'out_of_range',
      message: `code_expiration_minutes must be a whole number of minutes from ${min} to ${max}.`,
    });
  }
  if (component.text !== undefined) errors.push(...checkText('FOOTER', component.text, `${at}/text`));
  return errors;
}

function labelErrors(value: string | undefined, field: string): FieldError[] {
  if (value === undefined) return [];
  const length = [...value].length;
  if (value.trim() === '' || length > MAX_BUTTON_TEXT) {
    return [{ field, code: length > MAX_BUTTON_TEXT ? 'too_long' : 'too_short', message: `${field} is 1 to ${MAX_BUTTON_TEXT} characters.` }];
  }
  return [];
}

function appErrors(apps: ButtonDraft['supported_apps'], at: string): FieldError[] {
  if (apps === undefined || apps.length === 0 || apps.length > MAX_SUPPORTED_APPS) {
    return [{
      field: `${at}/supported_apps`,
      code: apps === undefined ? 'required' : 'invalid_count',
      message: `A ONE_TAP button names the Android apps that receive the code: 1 to ${MAX_SUPPORTED_APPS} {package_name, signature_hash}.`,
    }];
  }
  const errors: FieldError[] = [];
  apps.forEach((app, index) => {
    const field = `${at}/supported_apps/${index}`;
    if (!PACKAGE_NAME.test(app.package_name) || app.package_name.length > MAX_PACKAGE_NAME) {
      errors.push({
        field: `${field}/package_name`,
        code: 'invalid_format',
        message: 'package_name is an Android package name: two or more dot-separated segments of letters, digits and _, each starting with a letter.',
      });
    }
    if (!SIGNATURE_HASH.test(app.signature_hash)) {
      errors.push({
        field: `${field}/signature_hash`,
        code: 'invalid_format',
        message: 'signature_hash is your app signing key hash: exactly 11 characters of A-Z, a-z, 0-9, +, / and =.',
      });
    }
  });
  return errors;
}

function buttonErrors(button: ButtonDraft, at: string): FieldError[] {
  if (button.type.toUpperCase() !== 'OTP') {
    return [{ field: `${at}/type`, code: 'invalid_value', message: `Button type ${quoted(button.type)} is not supported; an AUTHENTICATION template has one "OTP" button.` }];
  }
  if (button.otp_type === undefined) {
    return [{ field: `${at}/otp_type`, code: 'required', message: 'Give otp_type: "COPY_CODE" or "ONE_TAP".' }];
  }
  const otpType = otpTypeOf(button);
  if (otpType === undefined) {
    const zeroTap = button.otp_type.toUpperCase() === 'ZERO_TAP';
    return [{
      field: `${at}/otp_type`,
      code: zeroTap ? 'not_supported' : 'invalid_value',
      message: zeroTap ? 'Zero-tap buttons are not supported; use "COPY_CODE" or "ONE_TAP".' : `otp_type ${quoted(button.otp_type)} is not "COPY_CODE" or "ONE_TAP".`,
    }];
  }
  const errors = labelErrors(button.text, `${at}/text`);
  if (otpType === 'ONE_TAP') {
    errors.push(...labelErrors(button.autofill_text, `${at}/autofill_text`), ...appErrors(button.supported_apps, at));
  } else {
    for (const field of ['autofill_text', 'supported_apps'] as const) {
      if (button[field] !== undefined) {
        errors.push({ field: `${at}/${field}`, code: 'not_allowed', message: `"${field}" applies to a ONE_TAP button only; remove it.` });
      }
    }
  }
  return errors;
}

function buttonsErrors(component: ComponentDraft, at: string): FieldError[] {
  const errors = refuse(
    component,
    at,
    ['format', 'text', 'example', 'add_security_recommendation', 'code_expiration_minutes'],
    'does not apply to a BUTTONS component',
  );
  const buttons = component.buttons;
  if (buttons === undefined || buttons.length !== 1) {
    return [...errors, {
      field: `${at}/buttons`,
      code: buttons === undefined ? 'required' : 'invalid_count',
      message: 'An AUTHENTICATION template has exactly one button: {"type": "OTP", "otp_type": "COPY_CODE"} (or "ONE_TAP").',
    }];
  }
  return [...errors, ...buttonErrors(buttons[0]!, `${at}/buttons/0`)];
}

/** What is wrong with one component of an AUTHENTICATION template (its type is known and not a duplicate). */
export function authenticationComponentErrors(component: ComponentDraft, at: string): FieldError[] {
  switch (component.type) {
    case 'HEADER':
      return [{
        field: `${at}/type`,
        code: 'not_allowed',
        message: 'An AUTHENTICATION template has no HEADER: it is Meta’s preset BODY, an optional expiry FOOTER and a code button.',
      }];
    case 'BODY':
      return bodyErrors(component, at);
    case 'FOOTER':
      return footerErrors(component, at);
    default:
      return buttonsErrors(component, at);
  }
}

/** The parts an AUTHENTICATION template cannot do without, beyond its BODY. */
export function missingAuthenticationParts(hasButtons: boolean): FieldError[] {
  if (hasButtons) return [];
  return [{
    field: '/components',
    code: 'missing_buttons',
    message: 'An AUTHENTICATION template needs its code button: add {"type": "BUTTONS", "buttons": [{"type": "OTP", "otp_type": "COPY_CODE"}]}.',
  }];
}

/** A valid AUTHENTICATION template's components, with the preset texts filled in where left out. */
export function authenticationComponents(components: readonly ComponentDraft[]): TemplateComponent[] {
  return components.map((component): TemplateComponent => {
    if (component.type === 'BUTTONS') return component as ButtonsComponent;
    const text =
      component.text ??
      (component.type === 'FOOTER'
        ? presetFooter(component.code_expiration_minutes!)
        : presetBody(component.add_security_recommendation === true));
    return { ...component, text } as TextComponent;
  });
}
