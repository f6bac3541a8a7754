import { type Static, Type } from 'typebox';
import type { MessageRow, MessageViewRow } from '../db/messages.ts';
import type { MessagePricing } from '../domain/pricing.ts';
import { iso, isoOrNull, Timestamp } from './schemas.ts';

// A message as the API shows it: its schema, the view of a row, and that view written straight
// from the row as JSON (issue #11), byte for byte what the schema's serialiser would write.

export const MessageStatusView = Type.Union([
  Type.Literal('QUEUED'),
  Type.Literal('SENT'),
  Type.Literal('DELIVERED'),
  Type.Literal('READ'),
  Type.Literal('FAILED'),
  Type.Literal('CANCELED'),
]);

export const ProviderErrorView = Type.Object({
  code: Type.String(),
  title: Type.String(),
  message: Type.String(),
  fbtraceId: Type.Optional(Type.String({ description: 'Meta’s trace id of the failed call, for a support escalation.' })),
});

/** A rich template's header as the recipient sees it: media type and link, or the location. */
export const HeaderContent = Type.Union([
  Type.String({ description: 'A TEXT header, rendered.' }),
  Type.Object(
    {
      type: Type.Enum(['IMAGE', 'VIDEO', 'DOCUMENT']),
      link: Type.String(),
      filename: Type.Optional(Type.String()),
    },
    { description: 'A media header: its type and the link sent.' },
  ),
  Type.Object(
    {
      type: Type.Literal('LOCATION'),
      latitude: Type.Number(),
      longitude: Type.Number(),
      name: Type.Optional(Type.String()),
      address: Type.Optional(Type.String()),
    },
    { description: 'A LOCATION header: the place sent.' },
  ),
]);

/** A button as the recipient sees it, with its resolved URL or payload. */
export const ButtonContent = Type.Object({
  type: Type.String({ description: 'QUICK_REPLY, URL, PHONE_NUMBER or COPY_CODE.' }),
  text: Type.String({ description: 'The label.' }),
  url: Type.Optional(Type.String({ description: 'URL: the link opened, its {{1}} resolved.' })),
  payload: Type.Optional(Type.String({ description: 'QUICK_REPLY: the payload a tap returns.' })),
  phoneNumber: Type.Optional(Type.String({ description: 'PHONE_NUMBER: the number called.' })),
  couponCode: Type.Optional(Type.String({ description: 'COPY_CODE: the code copied.' })),
});

export const PricingView = Type.Object(
  {
    billable: Type.Boolean(),
    pricingModel: Type.String({ description: 'PMP: per-message pricing.', examples: ['PMP'] }),
    category: Type.String({
      description: 'The rate applied: marketing, marketing_lite, utility, authentication, authentication-international, service, referral_conversion.',
      examples: ['marketing'],
    }),
    type: Type.String({ description: 'regular (charged), free_customer_service or free_entry_point.', examples: ['regular'] }),
  },
  { description: 'What the provider says the message costs (WhatsApp: the `pricing` of its status webhooks); absent until it says.' },
);

export const CostView = Type.Object(
  {
    amount: Type.Number({ description: 'In the currency’s units (at most 6 decimal places).', examples: [0.0118] }),
    currency: Type.String({ description: 'ISO 4217: the WhatsApp Business Account’s currency.', examples: ['USD'] }),
  },
  { description: 'What the delivery cost by the operator’s rate card.' },
);

const NullableTimestamp = (description?: string) =>
  Type.Union([Timestamp, Type.Null()], description === undefined ? {} : { description });

export const MessageView = Type.Object({
  id: Type.String({ examples: ['msg_01jd2k3m4n5p6q7r8s9t0v1w2x'] }),
  status: MessageStatusView,
  to: Type.String(),
  template: Type.String(),
  language: Type.String(),
  queuedAt: Timestamp,
  updatedAt: Timestamp,
  sentAt: NullableTimestamp(),
  deliveredAt: NullableTimestamp(),
  readAt: NullableTimestamp(),
  failedAt: NullableTimestamp(),
  scheduledFor: NullableTimestamp('The sendAt it was sent with: not submitted before then. Null: sent at once.'),
  canceledAt: NullableTimestamp('When it was canceled (status CANCELED).'),
  batchId: Type.Union([Type.String(), Type.Null()], { description: 'The batch it was sent in (POST /v1/messages/batch).' }),
  providerMessageId: Type.Union([Type.String(), Type.Null()]),
  error: Type.Optional(ProviderErrorView),
  variables: Type.Record(Type.String(), Type.String()),
  headerVariables: Type.Optional(Type.Record(Type.String(), Type.String())),
  content: Type.Object(
    {
      header: Type.Optional(HeaderContent),
      body: Type.String(),
      footer: Type.Optional(Type.String()),
      buttons: Type.Optional(Type.Array(ButtonContent, { description: 'A rich template’s buttons, in its order.' })),
    },
    {
      description:
        'What the recipient sees: the template rendered with the variables; for a rich template, the header’s media ' +
        'type and link (or location) and the buttons with their resolved URL and payload.',
    },
  ),
  pricing: Type.Optional(PricingView),
  cost: Type.Optional(
    Type.Union([CostView, Type.Null()], {
      description:
        'Present with `pricing`: what the message cost by the operator’s rate card (README, "Cost"), priced when it ' +
        'is delivered (Meta charges delivered messages). Null while undelivered, when Meta does not charge it ' +
        '(`pricing.billable` false) or when the rate card has no rate for its market and category.',
    }),
  ),
  held: Type.Optional(
    Type.Boolean({
      description:
        'Present once the provider held the message for quality assessment (WhatsApp portfolio pacing): true while ' +
        'it is held (status QUEUED), false once released (SENT as usual) or dropped (FAILED, error 132015).',
    }),
  ),
  heldAt: Type.Optional(Timestamp),
  route: Type.Optional(
    Type.Union([Type.Literal('cloud_api'), Type.Literal('marketing_messages')], {
      description:
        'The provider API that took the message (WhatsApp): `cloud_api` (`/messages`) or `marketing_messages` (the ' +
        'Marketing Messages API, per the project’s setting). With the fallback policy, `pricing.category` ' +
        '`marketing_lite` says the Marketing Messages API delivered it, `marketing` that Meta fell back to Cloud API. ' +
        'Absent until the provider took it.',
    }),
  ),
  recipientUserId: Type.Optional(
    Type.String({
      description:
        'The recipient’s business-scoped user id (BSUID) as the provider named it in a status, when it is not `to` ' +
        '(`to` a phone number; or a parent BSUID and this the portfolio’s own).',
    }),
  ),
  recipientPhoneNumber: Type.Optional(
    Type.String({ description: 'The recipient’s phone number (E.164), when `to` is a BSUID and the provider named it.' }),
  ),
});

/**
 * The fields of MessageView each column of the view's row is shown as: a viewed column
 * (db/messages.ts) missing here, or a field of MessageView that no column shows, is a type error.
 * messageJson and acceptedMessageJson are held byte-equal to messageView by test/http/messageJson.test.ts.
 */
type ViewFields = {
  id: readonly ['id'];
  status: readonly ['status'];
  recipient: readonly ['to'];
  template_name: readonly ['template'];
  language: readonly ['language'];
  variables: readonly ['variables'];
  header_variables: readonly ['headerVariables'];
  rendered: readonly ['content'];
  provider_message_id: readonly ['providerMessageId'];
  error: readonly ['error'];
  queued_at: readonly ['queuedAt'];
  sent_at: readonly ['sentAt'];
  delivered_at: readonly ['deliveredAt'];
  read_at: readonly ['readAt'];
  failed_at: readonly ['failedAt'];
  updated_at: readonly ['updatedAt'];
  scheduled_for: readonly ['scheduledFor'];
  canceled_at: readonly ['canceledAt'];
  batch_id: readonly ['batchId'];
  pricing: readonly ['pricing'];
  held_at: readonly ['held', 'heldAt'];
  send_route: readonly ['route'];
  recipient_user_id: readonly ['recipientUserId'];
  recipient_phone: readonly ['recipientPhoneNumber'];
  cost: readonly ['cost'];
};
type Field = keyof Static<typeof MessageView>;
type Holds<Check extends true> = Check;
type _EveryColumnShown = Holds<ViewFields extends { readonly [Column in keyof MessageViewRow]-?: readonly Field[] } ? true : false>;
type _OnlyViewedColumns = Holds<[Exclude<keyof ViewFields, keyof MessageViewRow>] extends [never] ? true : false>;
type _EveryFieldShown = Holds<[Exclude<Field, ViewFields[keyof ViewFields][number]>] extends [never] ? true : false>;

export function messageView(row: MessageViewRow) {
  return {
    id: row.id,
    status: row.status,
    to: row.recipient,
    template: row.template_name,
    language: row.language,
    queuedAt: iso(row.queued_at),
    updatedAt: iso(row.updated_at),
    sentAt: isoOrNull(row.sent_at),
    deliveredAt: isoOrNull(row.delivered_at),
    readAt: isoOrNull(row.read_at),
    failedAt: isoOrNull(row.failed_at),
    scheduledFor: isoOrNull(row.scheduled_for),
    canceledAt: isoOrNull(row.canceled_at),
    batchId: row.batch_id,
    providerMessageId: row.provider_message_id,
    ...(row.status === 'FAILED' && row.error !== null && { error: JSON.parse(row.error) }),
    variables: JSON.parse(row.variables) as Record<string, string>,
    ...(row.header_variables !== null && { headerVariables: JSON.parse(row.header_variables) }),
    content: JSON.parse(row.rendered) as Static<typeof MessageView>['content'],
    ...(typeof row.pricing === 'string' && {
      pricing: JSON.parse(row.pricing) as MessagePricing,
      cost: typeof row.cost === 'string' ? (JSON.parse(row.cost) as Static<typeof CostView>) : null,
    }),
    ...(typeof row.held_at === 'number' && { held: row.status === 'QUEUED', heldAt: iso(row.held_at) }),
    ...(typeof row.send_route === 'string' && { route: row.send_route as 'cloud_api' | 'marketing_messages' }),
    ...(typeof row.recipient_user_id === 'string' && { recipientUserId: row.recipient_user_id }),
    ...(typeof row.recipient_phone === 'string' && { recipientPhoneNumber: row.recipient_phone }),
  };
}

// Strings svc made or validated (ids, names, languages, E.164 numbers) need no escaping; anything
// else goes through JSON.stringify.
const PLAIN = /^[\w+.:-]*$/;
const json = (value: string) => (PLAIN.test(value) ? `"${value}"` : JSON.stringify(value));
const isoJson = (ms: number | null) => (ms === null ? 'null' : `"${iso(ms)}"`);
const stringOrNull = (value: string | null) => (value === null ? 'null' : json(value));

// The schema's serialiser (fast-json-stringify, as Fastify compiles it) writes an object's
// required properties first, then its optional ones, each group in the schema's order.
function serialisedOrder(schema: { properties: object; required?: string[] }): string[] {
  const required = schema.required ?? [];
  return [...required, ...Object.keys(schema.properties).filter((name) => !required.includes(name))];
}
const ERROR_FIELDS = serialisedOrder(ProviderErrorView);

/** A stored provider error as the schema serialises it. */
function providerErrorJson(stored: string): string {
  const error = JSON.parse(stored) as Record<string, unknown>;
  const fields = ERROR_FIELDS.filter((field) => error[field] !== undefined && error[field] !== null);
  return `{${fields.map((field) => `${json(field)}:${json(String(error[field]))}`).join(',')}}`;
}

/** The rendered content as the schema serialises it: body first; the stored JSON has the header first. */
function contentJson(rendered: string): string {
  if (!rendered.startsWith('{"header":')) return rendered;
  const { header, body, footer, buttons } = JSON.parse(rendered) as { header: unknown; body: string; footer?: string; buttons?: unknown };
  // A rich template's header (media or location) and buttons were stored in the schema's key order.
  const headerJson = typeof header === 'string' ? json(header) : JSON.stringify(header);
  return (
    `{"body":${json(body)},"header":${headerJson}${footer === undefined ? '' : `,"footer":${json(footer)}`}` +
    `${buttons === undefined ? '' : `,"buttons":${JSON.stringify(buttons)}`}}`
  );
}

/**
 * messageView(row) as the route's response schema serialises it, written straight from the row:
 * its JSON columns (written by svc from validated input) go in as they are instead of being
 * parsed back and serialised again. A test holds it byte-equal to the schema's serialiser.
 */
export function messageJson(row: MessageViewRow): string {
  return (
    `{"id":${json(row.id)},"status":"${row.status}","to":${json(row.recipient)},` +
    `"template":${json(row.template_name)},"language":${json(row.language)},` +
    `"queuedAt":${isoJson(row.queued_at)},"updatedAt":${isoJson(row.updated_at)},"sentAt":${isoJson(row.sent_at)},` +
    `"deliveredAt":${isoJson(row.delivered_at)},"readAt":${isoJson(row.read_at)},"failedAt":${isoJson(row.failed_at)},` +
    `"scheduledFor":${isoJson(row.scheduled_for)},"canceledAt":${isoJson(row.canceled_at)},"batchId":${stringOrNull(row.batch_id)},` +
    `"providerMessageId":${stringOrNull(row.provider_message_id)},` +
    `"variables":${row.variables},"content":${contentJson(row.rendered)}` +
    (row.status === 'FAILED' && row.error !== null ? `,"error":${providerErrorJson(row.error)}` : '') +
    (row.header_variables !== null ? `,"headerVariables":${row.header_variables}` : '') +
    (typeof row.pricing === 'string' ? `,"pricing":${pricingJson(row.pricing)},"cost":${costJson(row.cost)}` : '') +
    (typeof row.held_at === 'number' ? `,"held":${row.status === 'QUEUED'},"heldAt":${isoJson(row.held_at)}` : '') +
    (typeof row.send_route === 'string' ? `,"route":${json(row.send_route)}` : '') +
    (typeof row.recipient_user_id === 'string' ? `,"recipientUserId":${json(row.recipient_user_id)}` : '') +
    (typeof row.recipient_phone === 'string' ? `,"recipientPhoneNumber":${json(row.recipient_phone)}` : '') +
    '}'
  );
}

/** Stored pricing as the schema serialises it (its values are Meta's, checked as plain words by pricingOf). */
function pricingJson(stored: string): string {
  const pricing = JSON.parse(stored) as MessagePricing;
  return (
    `{"billable":${pricing.billable === true},"pricingModel":${JSON.stringify(String(pricing.pricingModel))},` +
    `"category":${JSON.stringify(String(pricing.category))},"type":${JSON.stringify(String(pricing.type))}}`
  );
}

/** A stored cost as the schema serialises it (svc wrote it, from the rate card). */
function costJson(stored: string | null | undefined): string {
  if (typeof stored !== 'string') return 'null';
  const cost = JSON.parse(stored) as Static<typeof CostView>;
  return `{"amount":${Number(cost.amount)},"currency":${JSON.stringify(String(cost.currency))}}`;
}

/**
 * The 202 body: JSON.stringify(messageView(row)) of a message just queued (the bytes the 202 has
 * always had, also stored for idempotent replays), written from the row's JSON columns.
 */
export function acceptedMessageJson(row: MessageRow): string {
  return (
    `{"id":${json(row.id)},"status":"QUEUED","to":${json(row.recipient)},` +
    `"template":${json(row.template_name)},"language":${json(row.language)},` +
    `"queuedAt":${isoJson(row.queued_at)},"updatedAt":${isoJson(row.updated_at)},"sentAt":null,"deliveredAt":null,` +
    `"readAt":null,"failedAt":null,"scheduledFor":${isoJson(row.scheduled_for)},"canceledAt":null,` +
    `"batchId":${stringOrNull(row.batch_id)},"providerMessageId":null,"variables":${row.variables},` +
    (row.header_variables !== null ? `"headerVariables":${row.header_variables},` : '') +
    `"content":${row.rendered}}`
  );
}
