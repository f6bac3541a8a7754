import type { Reply } from './inboundMessages.ts';

// A tap on a template's quick-reply button, as the recipient's reply carries it (the sandbox's
// reply helper): the button's text, and the payload the message was sent with for it, else the
// text (CONTRACT §9: a QUICK_REPLY's payload defaults to its text). Pure: the stored JSON in, the
// reply out.

type Json = Record<string, unknown>;

function object(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

function parsed(json: string | null | undefined): unknown {
  if (typeof json !== 'string') return undefined;
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}

/** The template's buttons, in order, as stored (its BUTTONS component's `buttons`). */
function buttonsOf(components: string): Json[] {
  const list = parsed(components);
  const buttons = (Array.isArray(list) ? list : []).map(object).find((component) => component?.type === 'BUTTONS')?.buttons;
  return Array.isArray(buttons) ? buttons.map((button) => object(button) ?? {}) : [];
}

/**
 * The payload a message was sent with for the quick reply at `index`: the sending half keeps a
 * rich template's button values in `messages.rich_parameters` (`{ buttons: [{ subType:
 * "quick_reply", index: "0", payload }] }`).
 */
function sentPayload(richParameters: string | null | undefined, index: number): string | undefined {
  const buttons = object(parsed(richParameters))?.buttons;
  if (!Array.isArray(buttons)) return undefined;
  const button = buttons.map(object).find((item) => item?.subType === 'quick_reply' && String(item.index) === String(index));
  return typeof button?.payload === 'string' && button.payload !== '' ? button.payload : undefined;
}

/** The reply a tap on button `index` makes; undefined when that button is not a QUICK_REPLY. */
export function quickReplyTap(components: string, richParameters: string | null | undefined, index: number): Reply | undefined {
  const button = buttonsOf(components)[index];
  if (button?.type !== 'QUICK_REPLY' || typeof button.text !== 'string' || button.text === '') return undefined;
  return { type: 'button', text: button.text, payload: sentPayload(richParameters, index) ?? button.text };
}
