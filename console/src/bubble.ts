import { h } from './dom.ts';

// What a recipient sees, drawn as a chat bubble on a phone-like card: the header (text, a media
// placeholder naming the type and link, or a place), the body, the footer and the buttons under
// it. Media is never loaded (the console fetches nothing from other hosts): it is named.

export type MediaType = 'IMAGE' | 'VIDEO' | 'DOCUMENT';

export type BubbleHeader =
  | string
  | { type: MediaType; link?: string; filename?: string }
  | { type: 'LOCATION'; latitude?: number | string; longitude?: number | string; name?: string; address?: string };

export interface BubbleButton {
  type: string;
  text?: string;
  url?: string;
  payload?: string;
  phoneNumber?: string;
  couponCode?: string;
}

export interface BubbleContent {
  header?: BubbleHeader | null;
  body: string | Node;
  footer?: string | null;
  buttons?: BubbleButton[];
}

// Characters every system font has (no emoji font needed).
const MEDIA_ICON: Record<string, string> = { IMAGE: '▣', VIDEO: '▶', DOCUMENT: '▤', LOCATION: '⌖' };
const BUTTON_ICON: Record<string, string> = { URL: '↗', PHONE_NUMBER: '☎', COPY_CODE: '❐', QUICK_REPLY: '↩', OTP: '❐' };

function headerPart(header: BubbleHeader): HTMLElement {
  if (typeof header === 'string') return h('p', { class: 'bubble-header' }, header);
  if (header.type === 'LOCATION') {
    const place = header.name || (header.latitude !== undefined && header.longitude !== undefined && `${header.latitude}, ${header.longitude}`) || 'A location';
    return h(
      'div',
      { class: 'bubble-media bubble-location', 'data-format': 'LOCATION' },
      h('span', { class: 'media-icon', 'aria-hidden': 'true' }, MEDIA_ICON.LOCATION),
      h('span', null, h('strong', null, place), header.address ? h('span', { class: 'media-link' }, header.address) : null),
    );
  }
  return h(
    'div',
    { class: 'bubble-media', 'data-format': header.type },
    h('span', { class: 'media-icon', 'aria-hidden': 'true' }, MEDIA_ICON[header.type]),
    h(
      'span',
      null,
      h('strong', null, header.type === 'DOCUMENT' ? (header.filename || 'Document') : header.type === 'IMAGE' ? 'Image' : 'Video'),
      h('span', { class: 'media-link' }, header.link || 'the link is given at each send'),
    ),
  );
}

function buttonLabel(button: BubbleButton): string {
  if (button.text) return button.text;
  if (button.type === 'COPY_CODE') return 'Copy offer code';
  return button.type;
}

function buttonPart(button: BubbleButton): HTMLElement {
  const detail = button.url ?? button.phoneNumber ?? button.couponCode ?? (button.payload && button.payload !== button.text ? `payload: ${button.payload}` : undefined);
  return h(
    'li',
    { 'data-button': button.type, title: detail ?? null },
    h('span', { class: 'button-icon', 'aria-hidden': 'true' }, BUTTON_ICON[button.type] ?? '•'),
    ' ',
    h('span', { class: 'button-text' }, buttonLabel(button)),
    detail ? h('small', { class: 'button-detail' }, detail) : null,
  );
}

/** The bubble alone (for pages that lay it out themselves). */
export function bubble(content: BubbleContent): HTMLElement {
  return h(
    'div',
    { class: 'bubble' },
    content.header ? headerPart(content.header) : null,
    h('p', { class: 'bubble-body' }, content.body),
    content.footer ? h('p', { class: 'bubble-footer' }, content.footer) : null,
    content.buttons && content.buttons.length > 0 ? h('ul', { class: 'bubble-buttons', 'aria-label': 'Buttons' }, content.buttons.map(buttonPart)) : null,
  );
}

/** Fills `where` with a phone-like frame holding the bubble. */
export function drawPhone(where: HTMLElement, content: BubbleContent): void {
  where.classList.add('phone');
  where.replaceChildren(bubble(content));
}
