import type { AccountCheck, AccountProblem, ProviderError } from '../provider.ts';
import type { WhatsAppAccountQuery, WhatsAppCredentials } from './credentials.ts';
import type { GraphClient, GraphFailure } from './client.ts';
import { graphErrorClass, graphFailureError, isGraphOutage } from './errors.ts';

// Onboarding, as Meta documents it for every kind of token: the phone number is read with the
// token (proving both), the token's scopes are read with debug_token, the WhatsApp Business
// Account (WABA) that owns the number is the one the customer names or the one the token's scopes
// name (Embedded Signup and user tokens list it under whatsapp_business_management, or now
// whatsapp_business_manage_events; system-user tokens list none), and svc's Meta app is
// subscribed to that WABA, without which Meta sends no webhook about it at all.

interface PhoneNumberNode {
  id?: string;
  display_phone_number?: string;
  verified_name?: string;
  quality_rating?: string;
  throughput?: { level?: string };
}

interface DebugTokenData {
  is_valid?: boolean;
  scopes?: string[];
  granular_scopes?: { scope?: string; target_ids?: string[] }[];
}

interface PhoneNumbersPage {
  data?: { id?: string }[];
  paging?: { cursors?: { after?: string }; next?: string };
}

const PHONE_NUMBER_FIELDS = 'id,display_phone_number,verified_name,quality_rating,throughput';
/** Meta's throughput levels (GET /{phone-number-id}?fields=throughput): 80 by default, 1,000 once upgraded. */
const MESSAGES_PER_SECOND: Readonly<Record<string, number>> = { STANDARD: 80, HIGH: 1000 };
const MESSAGING = 'whatsapp_business_messaging';
const MANAGEMENT = 'whatsapp_business_management';
/** A WABA's numbers are listed a page at a time; this many pages is far beyond any real account. */
const MAX_PHONE_NUMBER_PAGES = 20;

class Unavailable {
  readonly error: ProviderError;
  constructor(failure: GraphFailure) {
    this.error = graphFailureError(failure);
  }
}

function describe(error: ProviderError): string {
  return `${error.code} ${error.title}: ${error.message}`;
}

function isTokenRefusal(failure: GraphFailure): boolean {
  if (failure.kind !== 'http') return false;
  const code = failure.error?.code;
  if (typeof code === 'number') return graphErrorClass(code)?.group === 'token';
  return failure.status === 401;
}

/** Why Meta refused to show the phone number: the token itself, or the number (wrong id, not granted). */
function phoneNumberRefusal(phoneNumberId: string, failure: GraphFailure): AccountCheck {
  const error = graphFailureError(failure);
  if (isTokenRefusal(failure)) {
    return { kind: 'rejected', code: 'token_rejected', reason: 'Meta refused the access token: it is invalid, expired or revoked; generate a new one.', error };
  }
  const reason =
    `Meta does not show phone number id ${phoneNumberId} to this token: check the id (WhatsApp Manager → API Setup, ` +
    'or GET /{waba-id}/phone_numbers) and that the token’s system user is assigned the WhatsApp Business Account.';
  return { kind: 'rejected', code: 'phone_number_rejected', reason, error };
}

/** Whether the WABA has the phone number: 'yes', 'no', or Meta's refusal to list its numbers. */
async function hasNumber(
  client: GraphClient,
  credentials: WhatsAppCredentials,
  businessAccountId: string,
): Promise<'yes' | 'no' | { refused: ProviderError }> {
  let after: string | undefined;
  for (let page = 0; page < MAX_PHONE_NUMBER_PAGES; page++) {
    const listed = await client.call<PhoneNumbersPage>({
      method: 'GET',
      path: `/${encodeURIComponent(businessAccountId)}/phone_numbers`,
      accessToken: credentials.accessToken,
      query: { fields: 'id', limit: '100', ...(after !== undefined && { after }) },
    });
    if (!listed.ok) {
      if (isGraphOutage(listed.failure)) throw new Unavailable(listed.failure);
      return { refused: graphFailureError(listed.failure) };
    }
    if (listed.body?.data?.some((number) => number.id === credentials.phoneNumberId)) return 'yes';
    after = listed.body?.paging?.cursors?.after;
    if (listed.body?.paging?.next === undefined || after === undefined) return 'no';
  }
  return 'no';
}

/** The WABA ids a token's granted scopes name, from every WhatsApp scope. */
function scopedBusinessAccounts(token: DebugTokenData | undefined): string[] {
  const ids = new Set<string>();
  for (const scope of token?.granular_scopes ?? []) {
    if (!scope.scope?.startsWith('whatsapp_business_')) continue;
    for (const id of scope.target_ids ?? []) if (typeof id === 'string' && id !== '') ids.add(id);
  }
  return [...ids];
}

type BusinessAccount = { id: string } | { problem: AccountProblem };

async function businessAccountOf(
  client: GraphClient,
  query: WhatsAppAccountQuery,
  token: DebugTokenData | undefined,
): Promise<BusinessAccount> {
  const { credentials, businessAccountId } = query;
  const number = credentials.phoneNumberId;
  if (businessAccountId !== null) {
    if (query.businessAccountKnown) return { id: businessAccountId };
    const found = await hasNumber(client, credentials, businessAccountId);
    if (found === 'yes') return { id: businessAccountId };
    if (found === 'no') {
      return {
        problem: {
          code: 'business_account_mismatch',
          message:
            `Phone number id ${number} is not in WhatsApp Business Account ${businessAccountId}: save the credentials ` +
            'again with the providerBusinessAccountId of the account the number belongs to (WhatsApp Manager → Phone numbers).',
        },
      };
    }
    return {
      problem: {
        code: 'business_account_inaccessible',
        message:
          `The token cannot read WhatsApp Business Account ${businessAccountId} (${describe(found.refused)}): check the id, ` +
          'and that the token’s system user is assigned the account with whatsapp_business_management.',
      },
    };
  }
  const candidates = scopedBusinessAccounts(token);
  if (candidates.length === 1) return { id: candidates[0]! };
  for (const candidate of candidates) {
    if ((await hasNumber(client, credentials, candidate)) === 'yes') return { id: candidate };
  }
  return {
    problem: {
      code: 'business_account_not_found',
      message:
        candidates.length === 0
          ? 'The token does not name its WhatsApp Business Account (system-user tokens never do): save the credentials ' +
            'again with providerBusinessAccountId, the account’s id from WhatsApp Manager (Account tools → Business settings).'
          : `None of the WhatsApp Business Accounts the token names (${candidates.join(', ')}) has phone number id ${number}: ` +
            'save the credentials again with the right providerBusinessAccountId.',
    },
  };
}

/**
 * The currency Meta bills the WABA in (GET /{waba-id}?fields=currency, an ISO 4217 code; fixed
 * for the WABA's life: Meta changes a currency by moving the numbers to a new WABA). Null when
 * Meta does not show it: costs are then priced in SVC_RATE_CARD_CURRENCY.
 */
async function currencyOf(client: GraphClient, credentials: WhatsAppCredentials, businessAccountId: string): Promise<string | null> {
  const read = await client.call<{ currency?: unknown }>({
    method: 'GET',
    path: `/${encodeURIComponent(businessAccountId)}`,
    accessToken: credentials.accessToken,
    query: { fields: 'currency' },
  });
  if (!read.ok) {
    if (isGraphOutage(read.failure)) throw new Unavailable(read.failure);
    return null;
  }
  const currency = read.body?.currency;
  return typeof currency === 'string' && /^[A-Z]{3}$/.test(currency) ? currency : null;
}

/** Subscribes svc's Meta app to the WABA's webhooks (idempotent at Meta); a problem when refused. */
async function subscribe(client: GraphClient, credentials: WhatsAppCredentials, businessAccountId: string): Promise<AccountProblem | null> {
  const result = await client.call<{ success?: boolean }>({
    method: 'POST',
    path: `/${encodeURIComponent(businessAccountId)}/subscribed_apps`,
    accessToken: credentials.accessToken,
  });
  if (result.ok && result.body?.success !== false) return null;
  if (!result.ok && isGraphOutage(result.failure)) throw new Unavailable(result.failure);
  const why = result.ok ? 'Meta answered success: false' : describe(graphFailureError(result.failure));
  return {
    code: 'webhook_subscription_failed',
    message:
      `svc could not subscribe its Meta app to WhatsApp Business Account ${businessAccountId} (${why}), so message ` +
      'statuses and template reviews will not arrive: give the token whatsapp_business_management on the account and ' +
      'save the credentials again.',
  };
}

export async function checkAccount(client: GraphClient, query: WhatsAppAccountQuery): Promise<AccountCheck> {
  const { credentials } = query;
  try {
    const number = await client.call<PhoneNumberNode>({
      method: 'GET',
      path: `/${encodeURIComponent(credentials.phoneNumberId)}`,
      accessToken: credentials.accessToken,
      query: { fields: PHONE_NUMBER_FIELDS },
    });
    if (!number.ok) {
      if (isGraphOutage(number.failure)) throw new Unavailable(number.failure);
      return phoneNumberRefusal(credentials.phoneNumberId, number.failure);
    }
    const debug = await client.call<{ data?: DebugTokenData }>({
      method: 'GET',
      path: '/debug_token',
      accessToken: credentials.accessToken,
      query: { input_token: credentials.accessToken },
    });
    if (!debug.ok && isGraphOutage(debug.failure)) throw new Unavailable(debug.failure);
    // Unreadable scopes are no verdict: the number was readable, so the account is worked out without them.
    const token = debug.ok ? debug.body?.data : undefined;
    if (token?.is_valid === false) {
      return {
        kind: 'rejected',
        code: 'token_rejected',
        reason: 'Meta says the access token is not valid (debug_token): generate a new one.',
        error: { code: 'token_invalid', title: 'Invalid access token', message: 'debug_token answered is_valid: false.' },
      };
    }
    if (token?.scopes !== undefined && !token.scopes.includes(MESSAGING)) {
      return {
        kind: 'rejected',
        code: 'missing_permission',
        reason: `The access token lacks the ${MESSAGING} permission, without which it cannot send: generate one that has it.`,
        error: { code: 'missing_permission', title: 'Missing permission', message: `Granted: ${token.scopes.join(', ') || 'none'}.` },
      };
    }
    const account = await businessAccountOf(client, query, token);
    const businessAccountId = 'id' in account ? account.id : null;
    let problem: AccountProblem | null = 'problem' in account ? account.problem : null;
    let webhooksSubscribed = false;
    let currency: string | null = null;
    if (businessAccountId !== null) {
      const refused = await subscribe(client, credentials, businessAccountId);
      webhooksSubscribed = refused === null;
      problem ??= refused;
      currency = await currencyOf(client, credentials, businessAccountId);
    }
    if (problem === null && token?.scopes !== undefined && !token.scopes.includes(MANAGEMENT)) {
      problem = {
        code: 'missing_permission',
        message: `The access token lacks ${MANAGEMENT}: templates cannot be registered or reviewed. Generate a token that has it.`,
      };
    }
    const level = number.body?.throughput?.level;
    return {
      kind: 'checked',
      account: {
        businessAccountId,
        displayPhoneNumber: number.body?.display_phone_number ?? null,
        verifiedName: number.body?.verified_name ?? null,
        qualityRating: number.body?.quality_rating ?? null,
        messagesPerSecond: level === undefined ? null : (MESSAGES_PER_SECOND[level] ?? null),
        webhooksSubscribed,
        problem,
        currency,
      },
    };
  } catch (error) {
    if (error instanceof Unavailable) return { kind: 'unavailable', error: error.error };
    throw error;
  }
}
