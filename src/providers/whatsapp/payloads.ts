import { otpTypeOf } from '../../domain/authenticationTemplates.ts';
import { exampleFor } from '../../domain/templateExamples.ts';
import { bodyOf, footerOf, headerOf, mediaHeaderOf, otpButtonsOf, templateButtonsOf } from '../../domain/templates.ts';
import type {
  MessageSubmission,
  ParameterFormat,
  RichButtonParameter,
  RichSendParameters,
  TemplateButton,
  TemplateCheck,
  TemplateComponent,
  TemplateSubmission,
} from '../provider.ts';

// The JSON svc sends to and reads from the Graph API (WhatsApp Cloud API reference: messages,
// message templates, authentication templates).

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
  components?: { type?: string; text?: string }[];
}

export const TEMPLATE_FIELDS = 'id,name,language,status,category,rejected_reason,components';

/**
 * A template message: the language code, the HEADER and BODY parameters in order and, for an
 * AUTHENTICATION template, its OTP button's parameter (Meta requires the code twice: in the body
 * and in the button).
 */
export function sendMessagePayload(message: MessageSubmission, codeButton: boolean) {
  const text = (value: string) => ({ type: 'text', text: value });
  const code = message.bodyParameters[0];
  const components = message.rich
    ? richComponents(message, message.rich)
    : [
        ...(message.headerParameters.length > 0 ? [{ type: 'header', parameters: message.headerParameters.map(text) }] : []),
        ...(message.bodyParameters.length > 0 ? [{ type: 'body', parameters: message.bodyParameters.map(text) }] : []),
        ...(codeButton && code !== undefined ? [{ type: 'button', sub_type: 'url', index: '0', parameters: [text(code)] }] : []),
      ];
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    // Full E.164, with its '+': without it Meta prepends the business number's country code.
    to: message.to,
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

/** Values in Meta's shape: `parameter_name` beside each value of a NAMED template. */
function textParameters(values: string[], names: string[] | undefined) {
  return values.map((value, index) => (names ? { type: 'text', parameter_name: names[index], text: value } : { type: 'text', text: value }));
}

function buttonParameter(button: RichButtonParameter) {
  switch (button.subType) {
    case 'url':
      return { type: 'text', text: button.text };
    case 'quick_reply':
      return { type: 'payload', payload: button.payload };
    case 'copy_code':
      return { type: 'coupon_code', coupon_code: button.couponCode };
  }
}

/** A rich template message's components (Meta's send reference): header, body, then each button's. */
function richComponents(message: MessageSubmission, rich: RichSendParameters) {
  const header = rich.header;
  let headerParameters: object[] = textParameters(message.headerParameters, rich.named ? message.headerParameterNames : undefined);
  if (header?.type === 'location') {
    const { latitude, longitude, name, address } = header;
    headerParameters = [{ type: 'location', location: { latitude, longitude, ...(name !== undefined && { name }), ...(address !== undefined && { address }) } }];
  } else if (header) {
    const media = { link: header.link, ...(header.type === 'document' && header.filename !== undefined && { filename: header.filename }) };
    headerParameters = [{ type: header.type, [header.type]: media }];
  }
  return [
    ...(headerParameters.length > 0 ? [{ type: 'header', parameters: headerParameters }] : []),
    ...(message.bodyParameters.length > 0
      ? [{ type: 'body', parameters: textParameters(message.bodyParameters, rich.named ? message.bodyParameterNames : undefined) }]
      : []),
    ...(rich.buttons ?? []).map((button) => ({ type: 'button', sub_type: button.subType, index: button.index, parameters: [buttonParameter(button)] })),
  ];
}

/** An AUTHENTICATION template, in Meta's authentication model: no texts, Meta writes them. */
function authenticationPayload(components: readonly TemplateComponent[]) {
  const body = bodyOf(components);
  const footer = footerOf(components);
  const button = otpButtonsOf(components)[0];
  return [
    {
      type: 'BODY',
      ...(body?.add_security_recommendation !== undefined && { add_security_recommendation: body.add_security_recommendation }),
    },
    ...(footer ? [{ type: 'FOOTER', code_expiration_minutes: footer.code_expiration_minutes }] : []),
    ...(button
      ? [
          {
            type: 'BUTTONS',
            buttons: [
              {
                type: 'OTP',
                otp_type: otpTypeOf(button),
                ...(button.text !== undefined && { text: button.text }),
                ...(button.autofill_text !== undefined && { autofill_text: button.autofill_text }),
                ...(button.supported_apps !== undefined && { supported_apps: button.supported_apps }),
              },
            ],
          },
        ]
      : []),
  ];
}

/** A button as Meta takes it at creation. */
function buttonPayload(button: TemplateButton) {
  switch (button.type) {
    case 'QUICK_REPLY':
      return { type: 'QUICK_REPLY', text: button.text };
    case 'URL':
      return { type: 'URL', text: button.text, url: button.url, ...(button.example !== undefined && { example: button.example }) };
    case 'PHONE_NUMBER':
      return { type: 'PHONE_NUMBER', text: button.text, phone_number: button.phone_number };
    case 'COPY_CODE':
      return { type: 'COPY_CODE', example: button.example };
  }
}

/**
 * HEADER (text, media with its sample's handle, or location), BODY and FOOTER with their texts
 * and example values (the customer's, or derived), and BUTTONS.
 */
function standardPayload(components: readonly TemplateComponent[], format: ParameterFormat, sampleHandle: string | undefined) {
  const header = headerOf(components);
  const media = mediaHeaderOf(components);
  const body = bodyOf(components)!;
  const footer = footerOf(components);
  const buttons = templateButtonsOf(components);
  const withExample = (component: NonNullable<typeof header>) => {
    const example = exampleFor(component, format);
    return example ? { example } : {};
  };
  const handle = sampleHandle ?? media?.example?.header_handle?.[0];
  return [
    ...(header ? [{ type: 'HEADER', format: 'TEXT', text: header.text, ...withExample(header) }] : []),
    ...(media ? [{ type: 'HEADER', format: media.format, ...(handle !== undefined && { example: { header_handle: [handle] } }) }] : []),
    { type: 'BODY', text: body.text, ...withExample(body) },
    ...(footer ? [{ type: 'FOOTER', text: footer.text }] : []),
    ...(buttons.length > 0 ? [{ type: 'BUTTONS', buttons: buttons.map(buttonPayload) }] : []),
  ];
}

/** The template as Meta's POST /{waba-id}/message_templates takes it; `sampleHandle`: a media sample uploaded by svc. */
export function createTemplatePayload(template: TemplateSubmission, sampleHandle?: string) {
  const authentication = template.category === 'AUTHENTICATION';
  const format = template.parameterFormat ?? 'POSITIONAL';
  return {
    name: template.name,
    language: template.language,
    category: template.category,
    // Only for NAMED: the spec's templates are sent exactly as before.
    ...(format === 'NAMED' && { parameter_format: 'NAMED' }),
    components: authentication ? authenticationPayload(template.components) : standardPayload(template.components, format, sampleHandle),
  };
}

/**
 * Whether a template Meta already has under this name and language is the one registered: the
 * same texts (an AUTHENTICATION template's texts are Meta's own, so its category decides).
 * Anything else is an older template the customer deleted in svc, not one to adopt.
 */
export function sameTemplate(found: GraphTemplate, template: TemplateSubmission): boolean {
  if (template.category === 'AUTHENTICATION') return found.category === 'AUTHENTICATION';
  const theirs = (type: string) => found.components?.find((component) => component.type?.toUpperCase() === type)?.text;
  const ours = (type: 'HEADER' | 'BODY' | 'FOOTER') =>
    (type === 'HEADER' ? headerOf : type === 'BODY' ? bodyOf : footerOf)(template.components)?.text;
  const hasButtons = found.components?.some((component) => component.type?.toUpperCase() === 'BUTTONS') ?? false;
  const oursHasButtons = templateButtonsOf(template.components).length > 0;
  return hasButtons === oursHasButtons && (['HEADER', 'BODY', 'FOOTER'] as const).every((type) => theirs(type) === ours(type));
}

/** A rejection reason a person can act on, from Meta's reason code (NONE when it gives none). */
export function rejectionReason(reason: string | undefined, status = 'REJECTED', details: string[] = []): string {
  const code = reason && reason !== 'NONE' ? `: ${reason}` : '';
  const more = details.filter((detail) => detail.trim() !== '').map((detail) => ` ${detail.trim()}`).join('');
  if (status === 'REJECTED') return `Rejected by WhatsApp${code}.${more}`;
  return `The template is ${status} at WhatsApp${code}.${more}`;
}

/** Meta's template statuses in which an approved template stays approved (it may still be unable to send: PAUSED). */
const STILL_APPROVED = new Set(['APPROVED', 'PAUSED', 'FLAGGED', 'LOCKED']);
/** Meta's template statuses that end a review as REJECTED: it can never send as registered. */
const ENDED = new Set(['REJECTED', 'DISABLED', 'DELETED', 'PENDING_DELETION', 'ARCHIVED', 'LIMIT_EXCEEDED']);

/** Meta's template status → svc's review outcome, with Meta's own status alongside. */
export function templateCheckOf(template: GraphTemplate, recheckAfterMs: number): TemplateCheck {
  const status = template.status ?? 'PENDING';
  if (STILL_APPROVED.has(status)) return { status: 'APPROVED', providerStatus: status };
  if (ENDED.has(status)) {
    return { status: 'REJECTED', reason: rejectionReason(template.rejected_reason, status), providerStatus: status };
  }
  return { status: 'PENDING', checkAgainAfterMs: recheckAfterMs };
}
