// What a send gives a rich template (CONTRACT §9), checked against the template, and what the
// message then is: its content (what the recipient sees) and the parameters the provider needs.
// A template registered the spec's way (text header, positional body, footer) takes nothing
// beyond its variables and is rendered exactly as before. Pure: no I/O.

import type {
  MediaHeaderComponent,
  ParameterFormat,
  RichButtonParameter,
  RichSendParameters,
  TemplateButton,
  TemplateComponent,
  TextComponent,
} from '../providers/provider.ts';
import { hasUrlSuffix, URL_SUFFIX } from './templateButtons.ts';
import { bodyOf, footerOf, headerOf, mediaHeaderOf, templateButtonsOf } from './templates.ts';
import { placeholderKeys, renderText } from './templateText.ts';

/** A template's components as a send uses them, parsed once. */
export interface TemplateShape {
  format: ParameterFormat;
  header: TextComponent | undefined;
  /** A media (IMAGE, VIDEO, DOCUMENT) or LOCATION header. */
  mediaHeader: MediaHeaderComponent | undefined;
  body: TextComponent;
  footer: TextComponent | undefined;
  /** QUICK_REPLY, URL, PHONE_NUMBER and COPY_CODE buttons (not an AUTHENTICATION template's OTP one). */
  buttons: TemplateButton[];
  headerKeys: string[];
  bodyKeys: string[];
  /** Anything beyond the spec's template: named parameters, a media or location header, buttons. */
  rich: boolean;
}

export function templateShape(components: readonly TemplateComponent[], format: ParameterFormat = 'POSITIONAL'): TemplateShape {
  const header = headerOf(components);
  const mediaHeader = mediaHeaderOf(components);
  const body = bodyOf(components)!;
  const buttons = templateButtonsOf(components);
  return {
    format,
    header,
    mediaHeader,
    body,
    footer: footerOf(components),
    buttons,
    headerKeys: header ? placeholderKeys(header.text, format) : [],
    bodyKeys: placeholderKeys(body.text, format),
    rich: format === 'NAMED' || mediaHeader !== undefined || buttons.length > 0,
  };
}

export interface HeaderMedia {
  link: string;
  filename?: string;
}

export interface HeaderLocation {
  latitude: number;
  longitude: number;
  name?: string;
  address?: string;
}

export interface ButtonValue {
  text?: string;
  payload?: string;
  couponCode?: string;
}

/** What one recipient of a send gives the template. */
export interface MessageFields {
  variables?: Record<string, string>;
  headerVariables?: Record<string, string>;
  headerMedia?: HeaderMedia;
  headerLocation?: HeaderLocation;
  buttons?: Record<string, ButtonValue>;
}

const quote = (keys: readonly string[]) => keys.map((key) => `"${key}"`).join(', ');

function keyProblems(what: string, expected: readonly string[], given: Record<string, string> | undefined): string[] {
  const keys = Object.keys(given ?? {});
  const missing = expected.filter((key) => !keys.includes(key));
  const extra = keys.filter((key) => !expected.includes(key));
  return [
    ...(missing.length > 0 ? [`${what} is missing ${quote(missing)}`] : []),
    ...(extra.length > 0 ? [`${what} has ${quote(extra)}, which the template does not use`] : []),
  ];
}

/** The value a button takes at each send, by its type; undefined when it takes none. */
function buttonField(button: TemplateButton): { field: keyof ButtonValue; required: boolean } | undefined {
  switch (button.type) {
    case 'URL':
      return hasUrlSuffix(button.url) ? { field: 'text', required: true } : undefined;
    case 'QUICK_REPLY':
      return { field: 'payload', required: false };
    case 'COPY_CODE':
      return { field: 'couponCode', required: true };
    default:
      return undefined;
  }
}

function buttonProblems(buttons: readonly TemplateButton[], given: Record<string, ButtonValue> | undefined): string[] {
  const problems: string[] = [];
  buttons.forEach((button, index) => {
    const wanted = buttonField(button);
    const value = given?.[String(index)];
    if (wanted?.required && value?.[wanted.field] === undefined) {
      problems.push(`buttons is missing "${index}": { "${wanted.field}" } for the ${button.type} button`);
    }
  });
  for (const [key, value] of Object.entries(given ?? {})) {
    const button = /^(0|[1-9][0-9]?)$/.test(key) ? buttons[Number(key)] : undefined;
    const wanted = button ? buttonField(button) : undefined;
    if (!button || !wanted) {
      problems.push(`buttons has "${key}", ${button ? `a ${button.type} button, which takes no value` : 'which names no button of the template'}`);
      continue;
    }
    const extra = Object.keys(value).filter((field) => field !== wanted.field);
    if (extra.length > 0) problems.push(`buttons."${key}" (${button.type}) takes "${wanted.field}", not ${quote(extra)}`);
  }
  return problems;
}

function headerProblems(shape: TemplateShape, fields: MessageFields): string[] {
  const format = shape.mediaHeader?.format;
  const problems: string[] = [];
  const media = format === 'IMAGE' || format === 'VIDEO' || format === 'DOCUMENT';
  if (media && fields.headerMedia === undefined) problems.push(`headerMedia is missing: the template has a ${format} header`);
  if (!media && fields.headerMedia !== undefined) problems.push('headerMedia is given, but the template has no IMAGE, VIDEO or DOCUMENT header');
  if (media && format !== 'DOCUMENT' && fields.headerMedia?.filename !== undefined) {
    problems.push(`headerMedia.filename is for a DOCUMENT header; the template's is ${format}`);
  }
  if (format === 'LOCATION' && fields.headerLocation === undefined) problems.push('headerLocation is missing: the template has a LOCATION header');
  if (format !== 'LOCATION' && fields.headerLocation !== undefined) problems.push('headerLocation is given, but the template has no LOCATION header');
  return problems;
}

/**
 * What a send gives that the template does not take, or lacks that it needs (each named); empty
 * when they match. Variables are checked by key: "1", "2"… or the names of a NAMED template.
 */
export function messageFieldProblems(shape: TemplateShape, fields: MessageFields): string[] {
  return [
    ...keyProblems('variables', shape.bodyKeys, fields.variables),
    ...keyProblems('headerVariables', shape.headerKeys, fields.headerVariables),
    ...headerProblems(shape, fields),
    ...buttonProblems(shape.buttons, fields.buttons),
  ];
}

/** A URL button's link as the recipient opens it: its `{{1}}` replaced by the value sent. */
function resolvedUrl(url: string, value: string | undefined): string {
  return hasUrlSuffix(url) && value !== undefined ? url.slice(0, -URL_SUFFIX.length) + value : url;
}

/** What the recipient sees of each button, in the template's order. */
function buttonContents(buttons: readonly TemplateButton[], given: Record<string, ButtonValue> | undefined) {
  return buttons.map((button, index) => {
    const value = given?.[String(index)];
    switch (button.type) {
      case 'QUICK_REPLY':
        return { type: button.type, text: button.text, payload: value?.payload ?? button.text };
      case 'URL':
        return { type: button.type, text: button.text, url: resolvedUrl(button.url, value?.text) };
      case 'PHONE_NUMBER':
        return { type: button.type, text: button.text, phoneNumber: button.phone_number };
      case 'COPY_CODE':
        return { type: button.type, text: 'Copy offer code', couponCode: value?.couponCode ?? button.example };
    }
  });
}

function headerContent(shape: TemplateShape, fields: MessageFields) {
  const format = shape.mediaHeader?.format;
  if (format === 'LOCATION' && fields.headerLocation) {
    const { latitude, longitude, name, address } = fields.headerLocation;
    return { type: format, latitude, longitude, ...(name !== undefined && { name }), ...(address !== undefined && { address }) };
  }
  if (format !== undefined && format !== 'LOCATION' && fields.headerMedia) {
    const { link, filename } = fields.headerMedia;
    return { type: format, link, ...(filename !== undefined && { filename }) };
  }
  return undefined;
}

/**
 * What the recipient sees: the header (text, media type and link, or location), body and footer
 * rendered with the values, and the buttons with their resolved text, URL and payload. Key order
 * is the message schema's (the stored JSON is served as it is).
 */
export function renderMessage(shape: TemplateShape, fields: MessageFields) {
  const { format } = shape;
  const header = shape.header ? renderText(shape.header.text, fields.headerVariables ?? {}, format) : headerContent(shape, fields);
  return {
    ...(header !== undefined && { header }),
    body: renderText(shape.body.text, fields.variables ?? {}, format),
    ...(shape.footer && { footer: shape.footer.text }),
    ...(shape.buttons.length > 0 && { buttons: buttonContents(shape.buttons, fields.buttons) }),
  };
}

/** What the provider needs beyond the variables to send a rich template's message; undefined for the spec's templates. */
export function richParameters(shape: TemplateShape, fields: MessageFields): RichSendParameters | undefined {
  if (!shape.rich) return undefined;
  const header = headerContent(shape, fields);
  const buttons: RichButtonParameter[] = [];
  shape.buttons.forEach((button, index) => {
    const value = fields.buttons?.[String(index)];
    const at = String(index);
    if (button.type === 'URL' && hasUrlSuffix(button.url) && value?.text !== undefined) buttons.push({ subType: 'url', index: at, text: value.text });
    if (button.type === 'QUICK_REPLY') buttons.push({ subType: 'quick_reply', index: at, payload: value?.payload ?? button.text });
    if (button.type === 'COPY_CODE' && value?.couponCode !== undefined) buttons.push({ subType: 'copy_code', index: at, couponCode: value.couponCode });
  });
  let providerHeader: RichSendParameters['header'];
  if (header?.type === 'LOCATION') {
    const { type: _type, ...location } = header;
    providerHeader = { type: 'location', ...location };
  } else if (header !== undefined) {
    const { type, ...media } = header;
    providerHeader = { type: type.toLowerCase() as 'image' | 'video' | 'document', ...media };
  }
  return {
    ...(shape.format === 'NAMED' && { named: true }),
    ...(providerHeader && { header: providerHeader }),
    ...(buttons.length > 0 && { buttons }),
  };
}
