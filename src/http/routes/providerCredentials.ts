import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { CALLBACK_URL_MAX_LENGTH } from '../../domain/callbackUrl.ts';
import { type PaceSettings, sendPaceOf } from '../../domain/sendPace.ts';
import type { ProjectRow } from '../../db/projects.ts';
import type { ProviderAccountRow } from '../../db/providerAccounts.ts';
import { saveCredentials } from '../../credentials/saveCredentials.ts';
import { authenticate, authorizedWrite, unauthorized } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { BEARER, errorResponses, iso, Timestamp } from '../schemas.ts';

const SaveCredentialsBody = Type.Object(
  {
    providerPhoneNumberId: Type.Optional(Type.String({
      minLength: 1,
      maxLength: 128,
      pattern: '^[\\x21-\\x7E]+$',
      description: 'Phone number id from the provider console (Meta’s are digits). Printable ASCII, no spaces.',
      examples: ['106540352242922'],
    })),
    providerAccessToken: Type.Optional(Type.String({
      minLength: 1,
      maxLength: 4096,
      pattern: '^[\\x21-\\x7E]+$',
      description:
        'Provider token with business messaging permission; a permanent system-user token is advised. ' +
        'Stored encrypted, never returned. Printable ASCII, no spaces.',
      writeOnly: true,
    })),
    providerBusinessAccountId: Type.Optional(Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[0-9]+$',
      description:
        'The WhatsApp Business Account (WABA) id that owns the phone number, from WhatsApp Manager. Needed with ' +
        'system-user tokens, which do not name their account; otherwise found from the token. Verified against ' +
        'the account’s phone numbers. May be sent alone to complete saved credentials.',
      examples: ['102290129340398'],
    })),
    // One schema with a type list rather than a union: a wrong type then gets one clear error.
    callbackUrl: Type.Optional(Type.Unsafe<string | null>({
      type: ['string', 'null'],
      maxLength: CALLBACK_URL_MAX_LENGTH,
      description:
        'Public https URL for status webhooks; null removes it. No user-info, no fragment, at most ' +
        `${CALLBACK_URL_MAX_LENGTH} characters; its host must not be or resolve to a private, loopback, ` +
        'link-local, carrier-grade NAT, metadata or reserved address. A host name that does not resolve ' +
        'yet is accepted: the address is checked again at every delivery.',
      examples: ['https://example.com/webhooks/svc'],
    })),
  },
  // Which fields are required is decided in the handler: the credentials are required together
  // on the first call only (CONTRACT §1), which the schema cannot know.
  { additionalProperties: false },
);

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const ProviderAccountView = Type.Object(
  {
    status: Type.Enum(['ready', 'action_required', 'unchecked'], {
      description:
        '`ready`: checked, nothing to do; `action_required`: see `problem`; `unchecked`: not checked yet ' +
        '(credentials saved before svc checked them; the check runs shortly).',
    }),
    businessAccountId: Nullable(Type.String({ description: 'The WhatsApp Business Account that owns the number; null when unknown.' })),
    displayPhoneNumber: Nullable(Type.String()),
    verifiedName: Nullable(Type.String()),
    qualityRating: Nullable(Type.String({ description: 'GREEN, YELLOW, RED or NA, as Meta rates the number.' })),
    messagesPerSecond: Type.Integer({
      description:
        'The pace svc sends at from this number: its throughput at the provider (80, or 1,000 once upgraded), ' +
        'never above SVC_PROVIDER_MAX_MPS, which applies alone while the provider has not said.',
    }),
    webhooksSubscribed: Type.Boolean({ description: 'Whether the provider sends this account’s statuses and template reviews to svc.' }),
    problem: Type.Optional(
      Type.Object(
        { code: Type.String(), message: Type.String() },
        { description: 'What to do before everything works; absent when nothing. Codes: see the README, "Going live with WhatsApp".' },
      ),
    ),
    checkedAt: Nullable(Timestamp),
  },
  { description: 'What the provider says of the sending number and its business account; refreshed hourly.' },
);

export function providerAccountView(project: Pick<ProjectRow, 'provider_messages_per_second'>, account: ProviderAccountRow, pace: PaceSettings) {
  const problem = account.problem === null ? undefined : (JSON.parse(account.problem) as { code: string; message: string });
  return {
    status: account.checked_at === null ? ('unchecked' as const) : problem ? ('action_required' as const) : ('ready' as const),
    businessAccountId: account.business_account_id,
    displayPhoneNumber: account.display_phone_number,
    verifiedName: account.verified_name,
    qualityRating: account.quality_rating,
    messagesPerSecond: sendPaceOf(project.provider_messages_per_second, pace),
    webhooksSubscribed: account.webhooks_subscribed === 1,
    ...(problem && { problem }),
    checkedAt: account.checked_at === null ? null : iso(account.checked_at),
  };
}

const ProviderCredentialsView = Type.Object({
  projectId: Type.String(),
  id: Type.String({ description: 'The same value as projectId.' }),
  providerPhoneNumberId: Type.String(),
  callbackUrl: Type.Optional(Type.String({ description: 'Absent when no callback URL is set.' })),
  provider: Type.Optional(ProviderAccountView),
  updatedAt: Timestamp,
});

function providerCredentialsView(row: ProjectRow, account: ProviderAccountRow | undefined, pace: PaceSettings) {
  return {
    projectId: row.id,
    id: row.id,
    providerPhoneNumberId: row.provider_phone_number_id!,
    ...(row.callback_url !== null && { callbackUrl: row.callback_url }),
    ...(account && { provider: providerAccountView(row, account, pace) }),
    updatedAt: iso(row.updated_at),
  };
}

export async function providerCredentialRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', authenticate(ctx));

  api.put(
    '/v1/projects/me/provider-credentials',
    {
      schema: {
        tags: ['Projects'],
        summary: 'Save provider credentials',
        description:
          'Saves the provider credentials and the callback URL. The first call needs `providerPhoneNumberId` and `providerAccessToken` together. Once they are ' +
          'saved, a body with only `callbackUrl` changes just the URL (`null` removes it), and new ' +
          'credentials (again both together) rotate the token. The token is encrypted at rest and never returned. ' +
          'With the WhatsApp provider, the credentials are checked with Meta before they are saved (a refusal is ' +
          '422 provider_credentials_rejected, an outage 503), the business account is found or verified, svc’s app ' +
          'is subscribed to its webhooks, and `provider` describes the number; anything left to do is its `problem`.',
        security: BEARER,
        body: SaveCredentialsBody,
        response: {
          200: ProviderCredentialsView,
          ...errorResponses('validation_failed', 'invalid_json', 'provider_credentials_rejected', 'unavailable'),
        },
      },
    },
    async (request) => {
      const { providerPhoneNumberId, providerAccessToken, providerBusinessAccountId, callbackUrl } = request.body;
      const saved = await saveCredentials(
        {
          provider: ctx.provider,
          encryptionKey: ctx.encryptionKey,
          allowPrivateCallbacks: ctx.config.allowPrivateCallbacks,
          db: ctx.database.db,
          write: (work) => authorizedWrite(ctx, request, work),
        },
        request.auth.projectId,
        { sender: providerPhoneNumberId, secret: providerAccessToken, businessAccountId: providerBusinessAccountId, callbackUrl },
      );
      if (!saved) throw unauthorized();
      return providerCredentialsView(saved.project, saved.account, ctx.config);
    },
  );
}
