import { Type } from 'typebox';
import { CODE_EXPIRATION_MINUTES } from '../../domain/authenticationTemplates.ts';
import { MAX_BUTTON_TEXT, MAX_BUTTONS, MAX_COUPON_CODE } from '../../domain/templateButtons.ts';
import { COMPONENT_TYPES, HEADER_FORMATS, MAX_TEXT_LENGTH, PARAMETER_FORMATS, TEMPLATE_CATEGORIES } from '../../domain/templates.ts';
import type { TemplateRow } from '../../db/templates.ts';
import { categoryHistoryOf, componentsOf } from '../../templates/templateCatalog.ts';
import { iso, Timestamp } from '../schemas.ts';

// The template schemas: what a registration may carry (shape only: the rules, with messages that
// say how to fix the template, are in domain/), and how a template is shown.

const NamedExample = Type.Object(
  {
    param_name: Type.String({ maxLength: 100, description: 'The parameter’s name, as in {{first_name}}.' }),
    example: Type.String({ maxLength: 1024, description: 'A sample value.' }),
  },
  { additionalProperties: false },
);

const Example = Type.Object(
  {
    header_text: Type.Optional(Type.Array(Type.String(), { maxItems: 1, description: 'TEXT HEADER: the value of its placeholder.' })),
    body_text: Type.Optional(
      Type.Array(Type.Array(Type.String(), { maxItems: 100 }), {
        maxItems: 1,
        description: 'BODY: one list with a value per placeholder, in order, e.g. [["Ana", "#1001"]].',
      }),
    ),
    header_text_named_params: Type.Optional(
      Type.Array(NamedExample, { maxItems: 1, description: 'TEXT HEADER of a NAMED template: [{ "param_name", "example" }].' }),
    ),
    body_text_named_params: Type.Optional(
      Type.Array(NamedExample, {
        maxItems: 100,
        description: 'BODY of a NAMED template: one { "param_name", "example" } per parameter, e.g. [{"param_name": "first_name", "example": "Ana"}].',
      }),
    ),
    header_handle: Type.Optional(
      Type.Array(Type.String({ maxLength: 4096 }), {
        maxItems: 5,
        description: 'IMAGE, VIDEO or DOCUMENT HEADER: the sample’s handle from the provider’s upload (Meta’s Resumable Upload API), one value.',
      }),
    ),
    header_url: Type.Optional(
      Type.Array(Type.String({ maxLength: 2048 }), {
        maxItems: 5,
        description:
          'IMAGE, VIDEO or DOCUMENT HEADER: an https URL of the sample, one value. svc downloads it (image jpeg/png ≤ 5 MB, ' +
          'video mp4 ≤ 16 MB, document pdf ≤ 100 MB; public addresses only) and uploads it to the provider itself.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Example values for the placeholders, as Meta requires for review (Meta’s shape), or a media HEADER’s sample. ' +
      'Without placeholder examples svc sends language-neutral numbers (1111, 2222, …); realistic examples in the ' +
      'template’s language review better.',
  },
);

const SupportedApp = Type.Object(
  {
    package_name: Type.String({ maxLength: 224, description: 'Android package name, e.g. com.example.app.' }),
    signature_hash: Type.String({ maxLength: 11, description: 'The app signing key hash: 11 characters.' }),
  },
  { additionalProperties: false },
);

const Button = Type.Object(
  {
    type: Type.String({
      maxLength: 20,
      description:
        '`QUICK_REPLY`, `URL`, `PHONE_NUMBER` or `COPY_CODE` (UTILITY and MARKETING), or `OTP` (AUTHENTICATION). At most ' +
        `${MAX_BUTTONS} buttons, 2 URL, 1 PHONE_NUMBER and 1 COPY_CODE; quick replies grouped together.`,
    }),
    text: Type.Optional(
      Type.String({
        maxLength: 100,
        description: `The label, 1–${MAX_BUTTON_TEXT} characters (QUICK_REPLY, URL, PHONE_NUMBER; an OTP copy-code button’s own label, else Meta localises a default).`,
      }),
    ),
    url: Type.Optional(
      Type.String({ maxLength: 2100, description: 'URL: the link; it may end in one `{{1}}`, filled at each send (`buttons` of the send).' }),
    ),
    phone_number: Type.Optional(Type.String({ maxLength: 32, description: 'PHONE_NUMBER: the number to call, E.164 (e.g. +15550051310).' })),
    example: Type.Optional(
      Type.Union([Type.String({ maxLength: 2100 }), Type.Array(Type.String({ maxLength: 2100 }), { maxItems: 5 })], {
        description: `URL with \`{{1}}\`: one sample value, e.g. ["1001"]. COPY_CODE: a sample code, 1–${MAX_COUPON_CODE} characters, e.g. "SAVE20".`,
      }),
    ),
    otp_type: Type.Optional(Type.String({ maxLength: 20, description: 'OTP: `COPY_CODE` or `ONE_TAP`.' })),
    autofill_text: Type.Optional(Type.String({ maxLength: 100, description: 'ONE_TAP: autofill button label, 1–25 characters.' })),
    supported_apps: Type.Optional(Type.Array(SupportedApp, { maxItems: 10, description: 'ONE_TAP: the Android apps that receive the code.' })),
  },
  { additionalProperties: false },
);

const ComponentInput = Type.Object(
  {
    type: Type.String({
      description: '`HEADER`, `BODY`, `FOOTER` or `BUTTONS`; exactly one BODY, at most one of the others.',
    }),
    format: Type.Optional(
      Type.String({
        description:
          'HEADER only: `TEXT` (a HEADER without it is TEXT), `IMAGE`, `VIDEO` or `DOCUMENT` (with a sample in ' +
          '`example.header_handle` or `example.header_url`; the media is given at each send) or `LOCATION` (given at each send).',
      }),
    ),
    text: Type.Optional(
      Type.String({
        description:
          `BODY 1–${MAX_TEXT_LENGTH.BODY} characters, TEXT HEADER and FOOTER 1–${MAX_TEXT_LENGTH.HEADER}. ` +
          'Placeholders `{{1}}`, `{{2}}`, … numbered without gaps in each component (or named, `{{first_name}}`, with ' +
          '`parameter_format: NAMED`); at most one in a HEADER, none in a FOOTER. ' +
          'Required except in an AUTHENTICATION template, whose texts are Meta’s preset (svc fills them in), and in a media or LOCATION HEADER.',
      }),
    ),
    example: Type.Optional(Example),
    add_security_recommendation: Type.Optional(
      Type.Boolean({ description: 'AUTHENTICATION BODY: add "For your security, do not share this code."' }),
    ),
    code_expiration_minutes: Type.Optional(
      Type.Integer({
        description: `AUTHENTICATION FOOTER (required there): the code expires in this many minutes, ${CODE_EXPIRATION_MINUTES.min}–${CODE_EXPIRATION_MINUTES.max}.`,
      }),
    ),
    buttons: Type.Optional(
      Type.Array(Button, {
        maxItems: 20,
        description: `BUTTONS: 1–${MAX_BUTTONS} buttons in Meta’s shape; an AUTHENTICATION template has exactly one OTP button, COPY_CODE or ONE_TAP.`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const CreateTemplateBody = Type.Object(
  {
    name: Type.String({
      description: 'Slug: lowercase letters, digits and underscores, 1–512 characters (`^[a-z0-9_]{1,512}$`).',
      examples: ['order_update'],
    }),
    language: Type.String({
      description: 'Language code (`^[a-z]{2,3}(_[A-Za-z]{2,4})?$`), e.g. `en`, `en_US`, `pt_BR`. Each language is a separate template.',
      examples: ['pt_BR'],
    }),
    category: Type.String({ description: '`UTILITY`, `MARKETING` or `AUTHENTICATION`.', examples: ['UTILITY'] }),
    parameter_format: Type.Optional(
      Type.String({
        description:
          '`POSITIONAL` (the default: `{{1}}`, `{{2}}`…) or `NAMED` (`{{first_name}}`: lowercase letters, digits and ' +
          'underscores; examples in `body_text_named_params` / `header_text_named_params`). A URL button’s `{{1}}` is positional either way.',
      }),
    ),
    components: Type.Array(ComponentInput, {
      maxItems: 10,
      examples: [[{ type: 'BODY', text: 'Hello {{1}}, your order {{2}} has shipped.', example: { body_text: [['Ana', '#1001']] } }]],
    }),
  },
  { additionalProperties: false },
);

const ComponentView = Type.Object({
  type: Type.Enum([...COMPONENT_TYPES]),
  format: Type.Optional(Type.Enum([...HEADER_FORMATS], { description: 'On a HEADER only.' })),
  text: Type.Optional(Type.String({ description: 'On a TEXT HEADER, BODY and FOOTER.' })),
  example: Type.Optional(Example),
  add_security_recommendation: Type.Optional(Type.Boolean()),
  code_expiration_minutes: Type.Optional(Type.Integer()),
  buttons: Type.Optional(Type.Array(Button)),
});

export const TemplateView = Type.Object({
  id: Type.String({ examples: ['tpl_01jd2k3m4n5p6q7r8s9t0v1w2x'] }),
  name: Type.String(),
  language: Type.String(),
  category: Type.Enum([...TEMPLATE_CATEGORIES], { description: 'The current category: the provider may change it (see categoryHistory).' }),
  status: Type.Enum(['PENDING', 'APPROVED', 'REJECTED'], { description: 'The review outcome.' }),
  providerStatus: Type.String({
    description:
      'The provider’s own status, finer than `status`: Meta’s APPROVED, PAUSED, FLAGGED, DISABLED, IN_APPEAL, ' +
      'PENDING_DELETION, DELETED, … A template sends only when `status` is APPROVED and this is APPROVED, FLAGGED or LOCKED.',
  }),
  providerStatusReason: Type.Optional(Type.String({ description: 'Why the provider put it in that status (a pause, a rejection’s details).' })),
  parameterFormat: Type.Enum([...PARAMETER_FORMATS], { description: 'POSITIONAL (`{{1}}`…) or NAMED (`{{first_name}}`…).' }),
  components: Type.Array(ComponentView, {
    description: 'As submitted, buttons and examples included (an AUTHENTICATION template’s preset texts filled in where left out).',
  }),
  rejectionReason: Type.Optional(Type.String({ description: 'Why the provider rejected it; only when REJECTED.' })),
  categoryHistory: Type.Array(
    Type.Object({ from: Type.String(), to: Type.String(), at: Timestamp }),
    { description: 'Category changes the provider made, oldest first.' },
  ),
  upcomingCategory: Type.Optional(
    Type.Object(
      { category: Type.String(), effectiveAt: Timestamp },
      { description: 'A category change the provider announced, and when it takes effect.' },
    ),
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export function templateView(row: TemplateRow) {
  const upcoming = row.upcoming_category === null ? undefined : (JSON.parse(row.upcoming_category) as { category: string; effectiveAt: number });
  return {
    id: row.id,
    name: row.name,
    language: row.language,
    category: row.category as (typeof TEMPLATE_CATEGORIES)[number],
    status: row.status,
    providerStatus: row.provider_status ?? row.status,
    ...(row.provider_status_reason !== null && { providerStatusReason: row.provider_status_reason }),
    parameterFormat: row.parameter_format === 'NAMED' ? ('NAMED' as const) : ('POSITIONAL' as const),
    components: componentsOf(row),
    ...(row.status === 'REJECTED' && row.rejection_reason !== null && { rejectionReason: row.rejection_reason }),
    categoryHistory: categoryHistoryOf(row).map((change) => ({ from: change.from, to: change.to, at: iso(change.at) })),
    ...(upcoming && { upcomingCategory: { category: upcoming.category, effectiveAt: iso(upcoming.effectiveAt) } }),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
