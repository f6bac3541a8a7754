import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { CALLBACK_URL_MAX_LENGTH } from '../../domain/callbackUrl.ts';
import { sealSecret } from '../../domain/secretBox.ts';
import { type PaceSettings, sendPaceOf } from '../../domain/sendPace.ts';
import { findProject, type ProjectRow, updateProject } from '../../db/projects.ts';
import {
  accountColumns,
  findProviderAccount,
  PROVIDER_ACCOUNT_REFRESH_MS,
  type ProviderAccountRow,
  saveProviderAccount,
} from '../../db/providerAccounts.ts';
import { webhookUrlError } from '../../webhooks/urlCheck.ts';
import { providerCredentialsOf } from '../../projectSecrets.ts';
import type { AccountQuery, ProviderAccount, ProviderCredentials } from '../../providers/provider.ts';
import { authenticate, authorizedWrite, unauthorized } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { ApiError, type FieldError, validationError } from '../errors.ts';
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

/** Which business account to ask about: the one given, the one already known for this number, or none (found from the token). */
function businessAccountQuery(
  given: string | undefined,
  phoneNumberId: string,
  project: ProjectRow,
  account: ProviderAccountRow | undefined,
): Pick<AccountQuery, 'businessAccountId' | 'businessAccountKnown'> {
  if (given !== undefined) return { businessAccountId: given, businessAccountKnown: false };
  const known = account?.business_account_id ?? null;
  if (known !== null && project.provider_phone_number_id === phoneNumberId) return { businessAccountId: known, businessAccountKnown: true };
  return { businessAccountId: null, businessAccountKnown: false };
}

/** Asks the provider about the credentials; a refusal is 422 and an outage 503, and then nothing is saved. */
async function checkedAccount(ctx: HttpContext, query: AccountQuery): Promise<ProviderAccount> {
  const check = await ctx.provider.checkAccount(query);
  if (check.kind === 'checked') return check.account;
  const { code, title, message, fbtraceId } = check.error;
  const meta = `The provider answered ${code} (${title}): ${message}${fbtraceId ? ` [fbtrace_id ${fbtraceId}]` : ''}`;
  if (check.kind === 'rejected') {
    throw new ApiError('provider_credentials_rejected', `${check.reason} ${meta} Nothing was saved.`);
  }
  throw new ApiError('unavailable', `The provider could not be asked to check the credentials; nothing was saved, try again. ${meta}`, {
    headers: { 'retry-after': '30' },
  });
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
      const { projectId } = request.auth;
      const { providerPhoneNumberId, providerAccessToken, providerBusinessAccountId, callbackUrl } = request.body;
      const project = await findProject(ctx.database.db, projectId);
      if (!project) throw unauthorized();

      const errors: FieldError[] = [];
      const bringsCredentials = providerPhoneNumberId !== undefined || providerAccessToken !== undefined;
      const hasCredentials = project.provider_access_token_enc !== null;
      if (bringsCredentials || !hasCredentials) {
        // The two are one credential: a token belongs to its phone number.
        const why = hasCredentials
          ? 'is required with the other credential: they are saved together.'
          : 'is required until the provider credentials are saved.';
        if (providerPhoneNumberId === undefined) {
          errors.push({ field: '/providerPhoneNumberId', code: 'required', message: `/providerPhoneNumberId ${why}` });
        }
        if (providerAccessToken === undefined) {
          errors.push({ field: '/providerAccessToken', code: 'required', message: `/providerAccessToken ${why}` });
        }
      } else if (callbackUrl === undefined && providerBusinessAccountId === undefined) {
        errors.push({
          field: '/',
          code: 'empty_update',
          message: 'Send providerPhoneNumberId with providerAccessToken, providerBusinessAccountId, callbackUrl, or all of them.',
        });
      }
      if (typeof callbackUrl === 'string') {
        const urlError = await webhookUrlError(callbackUrl, ctx.config.allowPrivateCallbacks, '/callbackUrl');
        if (urlError) errors.push(urlError);
      }
      if (errors.length > 0) throw validationError(errors);

      const stored = await findProviderAccount(ctx.database.db, projectId);
      const credentials: ProviderCredentials | undefined =
        providerPhoneNumberId !== undefined && providerAccessToken !== undefined
          ? { phoneNumberId: providerPhoneNumberId, accessToken: providerAccessToken }
          : providerBusinessAccountId !== undefined
            ? providerCredentialsOf(project, ctx.encryptionKey)
            : undefined;
      const account = credentials
        ? await checkedAccount(ctx, {
            credentials,
            ...businessAccountQuery(providerBusinessAccountId, credentials.phoneNumberId, project, stored),
          })
        : undefined;

      const now = Date.now();
      const changes: Partial<ProjectRow> = { updated_at: now };
      if (providerPhoneNumberId !== undefined && providerAccessToken !== undefined) {
        changes.provider_phone_number_id = providerPhoneNumberId;
        changes.provider_access_token_enc = sealSecret(ctx.encryptionKey, providerAccessToken);
        changes.credentials_updated_at = now;
      }
      if (callbackUrl !== undefined) changes.callback_url = callbackUrl;
      const accountRow: ProviderAccountRow | undefined = account && {
        project_id: projectId,
        credentials_updated_at: changes.credentials_updated_at ?? project.credentials_updated_at ?? now,
        ...accountColumns(account),
        checked_at: now,
        check_due_at: now + PROVIDER_ACCOUNT_REFRESH_MS,
      };
      const saved = await authorizedWrite(ctx, request, async (trx) => {
        if (account && accountRow) await saveProviderAccount(trx, accountRow, account.messagesPerSecond);
        return updateProject(trx, projectId, changes);
      });
      return providerCredentialsView(saved!, accountRow ?? stored, ctx.config);
    },
  );
}
