import type { Template } from '#sdk';
import type { BubbleButton, BubbleContent, BubbleHeader } from './bubble.ts';
import { fillNamed, type ParameterFormat, placeholdersOf } from './templateText.ts';

// A registered template read for the console: its parts (header, body, footer, buttons) and what
// the recipient would see with given values (or with the template's own examples).

type Component = Template['components'][number];
export type TemplateButton = NonNullable<Component['buttons']>[number];

export interface SendValues {
  header?: Record<string, string>;
  body?: Record<string, string>;
  media?: { link?: string; filename?: string };
  location?: { latitude?: string; longitude?: string; name?: string; address?: string };
  /** By the button's index in the template. */
  buttons?: Record<string, { text?: string; payload?: string; couponCode?: string }>;
}

export const TRAILING_PLACEHOLDER = /\{\{1\}\}$/;

export function partsOf(template: Template) {
  const find = (type: string) => template.components.find((component) => component.type === type);
  const header = find('HEADER');
  return {
    format: ((template as { parameterFormat?: string }).parameterFormat ?? 'POSITIONAL') as ParameterFormat,
    header,
    headerFormat: header ? (header.format ?? 'TEXT') : undefined,
    body: find('BODY'),
    footer: find('FOOTER'),
    buttons: find('BUTTONS')?.buttons ?? [],
  };
}

/** The examples the template was registered with, as send values. */
export function exampleValues(template: Template): SendValues {
  const parts = partsOf(template);
  const keyed = (text: string | undefined, positional: string[] | undefined, named: { param_name: string; example: string }[] | undefined) => {
    const keys = placeholdersOf(text ?? '', parts.format);
    if (named) return Object.fromEntries(named.map((item) => [item.param_name, item.example]));
    return Object.fromEntries(keys.map((key, index) => [key, positional?.[index] ?? '']));
  };
  const example = (component: Component | undefined) => (component?.example ?? {}) as Record<string, unknown>;
  const headerExample = example(parts.header);
  const bodyExample = example(parts.body);
  const sampleLink = (headerExample.header_url as string[] | undefined)?.[0];
  return {
    header: keyed(parts.header?.text, headerExample.header_text as string[] | undefined, headerExample.header_text_named_params as never),
    body: keyed(parts.body?.text, (bodyExample.body_text as string[][] | undefined)?.[0], bodyExample.body_text_named_params as never),
    ...(sampleLink && { media: { link: sampleLink } }),
    buttons: Object.fromEntries(
      parts.buttons.map((button, index) => {
        const value = Array.isArray(button.example) ? button.example[0] : button.example;
        return [String(index), button.type === 'COPY_CODE' ? { couponCode: value } : { text: value }];
      }),
    ),
  };
}

function buttonSeen(button: TemplateButton, value: SendValues['buttons'] extends Record<string, infer V> | undefined ? V | undefined : never): BubbleButton {
  switch (button.type) {
    case 'URL':
      return { type: 'URL', text: button.text, url: (button.url ?? '').replace(TRAILING_PLACEHOLDER, value?.text || '{{1}}') };
    case 'PHONE_NUMBER':
      return { type: 'PHONE_NUMBER', text: button.text, phoneNumber: button.phone_number };
    case 'COPY_CODE':
      return { type: 'COPY_CODE', couponCode: value?.couponCode || 'the code given at the send' };
    case 'QUICK_REPLY':
      return { type: 'QUICK_REPLY', text: button.text, payload: value?.payload || button.text };
    default:
      return { type: button.type, text: button.text ?? 'Copy code' };
  }
}

/** What the recipient sees with these values. */
export function templateBubble(template: Template, values: SendValues): BubbleContent {
  const parts = partsOf(template);
  let header: BubbleHeader | null = null;
  if (parts.headerFormat === 'TEXT' && parts.header?.text) header = fillNamed(parts.header.text, values.header ?? {});
  else if (parts.headerFormat === 'LOCATION') header = { type: 'LOCATION', ...values.location };
  else if (parts.headerFormat) header = { type: parts.headerFormat as 'IMAGE', ...values.media };
  return {
    header,
    body: fillNamed(parts.body?.text ?? '', values.body ?? {}),
    footer: parts.footer?.text ?? null,
    buttons: parts.buttons.map((button, index) => buttonSeen(button, values.buttons?.[String(index)])),
  };
}
