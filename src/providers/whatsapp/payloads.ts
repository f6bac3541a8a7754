import type { MessageSubmission, TemplateCheck, TemplateComponent, TemplateSubmission } from '../provider.ts';

// The JSON svc sends to and reads from the Graph API (WhatsApp Cloud API reference: messages,
// message templates, debug_token).

export interface SendMessageResponse {
  messaging_product?: string;
  contacts?: { input?: string; wa_id?: string }[];
  messages?: { id?: string; message_status?: string }[];
}

export interface GraphTemplate {
  id?: string;
  name?: string;
  language?: string;
  status?: string;
  category?: string;
  rejected_reason?: string;
}

export interface DebugTokenResponse {
  data?: { granular_scopes?: { scope?: string; target_ids?: string[] }[] };
}

export interface PhoneNumbersResponse {
  data?: { id?: string }[];
}

/** A template message: the language code, then the HEADER and BODY parameters in order. */
export function sendMessagePayload(message: MessageSubmission) {
  const text = (value: string) => ({ type: 'text', text: value });
  const components = [
    ...(message.headerParameters.length > 0 ? [{ type: 'header', parameters: message.headerParameters.map(text) }] : []),
    ...(message.bodyParameters.length > 0 ? [{ type: 'body', parameters: message.bodyParameters.map(text) }] : []),
  ];
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    // Meta takes the number with or without '+'; its wa_id form has none.
    to: message.to.replace(/^\+/, ''),
    type: 'template',
    template: {
      name: message.templateName,
      language: { code: message.language },
      ...(components.length > 0 && { components }),
    },
    // Echoed back in every status webhook of this message: svc finds it by its own id.
    biz_opaque_callback_data: message.messageId,
  };
}

function placeholderCount(text: string): number {
  let highest = 0;
  for (const match of text.matchAll(/\{\{(\d+)\}\}/g)) highest = Math.max(highest, Number(match[1]));
  return highest;
}

function samples(count: number): string[] {
  return Array.from({ length: count }, (_, index) => `sample ${index + 1}`);
}

/** Meta requires an example value for every placeholder; svc's API has none, so it sends neutral ones. */
function componentPayload(component: TemplateComponent) {
  const count = placeholderCount(component.text);
  switch (component.type) {
    case 'HEADER':
      return { type: 'HEADER', format: 'TEXT', text: component.text, ...(count > 0 && { example: { header_text: samples(count) } }) };
    case 'BODY':
      return { type: 'BODY', text: component.text, ...(count > 0 && { example: { body_text: [samples(count)] } }) };
    case 'FOOTER':
      return { type: 'FOOTER', text: component.text };
  }
}

export function createTemplatePayload(template: TemplateSubmission) {
  return {
    name: template.name,
    language: template.language,
    category: template.category,
    components: template.components.map(componentPayload),
  };
}

export const TEMPLATE_FIELDS = 'id,name,language,status,category,rejected_reason';

/** A rejection reason a person can act on, from Meta's reason code (NONE when it gives none). */
export function rejectionReason(reason: string | undefined, status = 'REJECTED'): string {
  const detail = reason && reason !== 'NONE' ? `: ${reason}` : '';
  if (status === 'REJECTED') return `Rejected by WhatsApp${detail}.`;
  return `The template is ${status} at WhatsApp${detail}.`;
}

/**
 * Meta's template status → svc's review outcome. PAUSED templates were approved (sending them
 * fails with 132015 until they are resumed); DISABLED and DELETED ones can never send.
 */
export function templateCheckOf(template: GraphTemplate, recheckAfterMs: number): TemplateCheck {
  switch (template.status) {
    case 'APPROVED':
    case 'PAUSED':
      return { status: 'APPROVED' };
    case 'REJECTED':
    case 'DISABLED':
    case 'DELETED':
    case 'PENDING_DELETION':
      return { status: 'REJECTED', reason: rejectionReason(template.rejected_reason, template.status) };
    default:
      return { status: 'PENDING', checkAgainAfterMs: recheckAfterMs };
  }
}
