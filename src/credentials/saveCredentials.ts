import type { Db } from '../db/database.ts';
import { findProject, type ProjectRow, updateProject } from '../db/projects.ts';
import {
  accountColumns,
  findProviderAccount,
  PROVIDER_ACCOUNT_REFRESH_MS,
  type ProviderAccountRow,
  saveProviderAccount,
} from '../db/providerAccounts.ts';
import type { FieldError } from '../domain/fieldError.ts';
import { sealSecret } from '../domain/secretBox.ts';
import { DomainError, validationError } from '../errors.ts';
import { providerCredentialsOf } from '../projectSecrets.ts';
import type { AccountQuery, Provider, ProviderAccount, ProviderCredentials } from '../providers/provider.ts';
import { webhookUrlError } from '../webhooks/urlCheck.ts';

// Saving a project's provider credentials and callback URL (PUT /v1/projects/me/provider-credentials):
// the credentials are required together on the first call (CONTRACT §1), checked with the
// provider before anything is saved, and stored as svc stores every secret: the sender in clear
// (reports are matched on it), the secret sealed with the secret box.

export interface CredentialsChange {
  /** The sender at the provider (WhatsApp: phone number id) and its secret (access token): given together. */
  sender?: string;
  secret?: string;
  /** The business account that owns the sender, when the customer names it. */
  businessAccountId?: string;
  /** A new callback URL; null removes it. */
  callbackUrl?: string | null;
}

export interface CredentialsDeps {
  provider: Provider;
  encryptionKey: Buffer;
  allowPrivateCallbacks: boolean;
  /** The caller's read connection, and its write transaction (which checks the caller still may write). */
  db: Db;
  write<T>(work: (trx: Db) => Promise<T>): Promise<T>;
}

export interface SavedCredentials {
  project: ProjectRow;
  /** The provider's account as checked now, or as stored before; undefined until first checked. */
  account: ProviderAccountRow | undefined;
}

/** Field errors of a change the schema cannot judge alone: what is required depends on what is saved. */
async function changeProblems(change: CredentialsChange, project: ProjectRow, allowPrivateCallbacks: boolean): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  const bringsCredentials = change.sender !== undefined || change.secret !== undefined;
  const hasCredentials = project.provider_access_token_enc !== null;
  if (bringsCredentials || !hasCredentials) {
    // The two are one credential: a secret belongs to its sender.
    const why = hasCredentials
      ? 'is required with the other credential: they are saved together.'
      : 'is required until the provider credentials are saved.';
    if (change.sender === undefined) errors.push({ field: '/providerPhoneNumberId', code: 'required', message: `/providerPhoneNumberId ${why}` });
    if (change.secret === undefined) errors.push({ field: '/providerAccessToken', code: 'required', message: `/providerAccessToken ${why}` });
  } else if (change.callbackUrl === undefined && change.businessAccountId === undefined) {
    errors.push({
      field: '/',
      code: 'empty_update',
      message: 'Send providerPhoneNumberId with providerAccessToken, providerBusinessAccountId, callbackUrl, or all of them.',
    });
  }
  if (typeof change.callbackUrl === 'string') {
    const urlError = await webhookUrlError(change.callbackUrl, allowPrivateCallbacks, '/callbackUrl');
    if (urlError) errors.push(urlError);
  }
  return errors;
}

/** Which business account to ask about: the one given, the one already known for this sender, or none (found from the secret). */
function businessAccountQuery(
  given: string | undefined,
  sender: string,
  project: ProjectRow,
  account: ProviderAccountRow | undefined,
): Pick<AccountQuery, 'businessAccountId' | 'businessAccountKnown'> {
  if (given !== undefined) return { businessAccountId: given, businessAccountKnown: false };
  const known = account?.business_account_id ?? null;
  if (known !== null && project.provider_phone_number_id === sender) return { businessAccountId: known, businessAccountKnown: true };
  return { businessAccountId: null, businessAccountKnown: false };
}

/** Asks the provider about the credentials; a refusal is 422 and an outage 503, and then nothing is saved. */
async function checkedAccount(provider: Provider, query: AccountQuery): Promise<ProviderAccount> {
  const check = await provider.checkAccount(query);
  if (check.kind === 'checked') return check.account;
  const { code, title, message, fbtraceId } = check.error;
  const meta = `The provider answered ${code} (${title}): ${message}${fbtraceId ? ` [fbtrace_id ${fbtraceId}]` : ''}`;
  if (check.kind === 'rejected') {
    throw new DomainError('provider_credentials_rejected', `${check.reason} ${meta} Nothing was saved.`);
  }
  throw new DomainError('unavailable', `The provider could not be asked to check the credentials; nothing was saved, try again. ${meta}`, {
    headers: { 'retry-after': '30' },
  });
}

/** Validates, checks with the provider, and saves the project's credentials and callback URL. */
export async function saveCredentials(deps: CredentialsDeps, projectId: string, change: CredentialsChange): Promise<SavedCredentials | undefined> {
  const project = await findProject(deps.db, projectId);
  if (!project) return undefined;
  const errors = await changeProblems(change, project, deps.allowPrivateCallbacks);
  if (errors.length > 0) throw validationError(errors);

  const stored = await findProviderAccount(deps.db, projectId);
  const given: ProviderCredentials | undefined =
    change.sender !== undefined && change.secret !== undefined ? { sender: change.sender, secret: change.secret } : undefined;
  const credentials = given ?? (change.businessAccountId !== undefined ? providerCredentialsOf(project, deps.encryptionKey) : undefined);
  const account = credentials
    ? await checkedAccount(deps.provider, {
        credentials,
        ...businessAccountQuery(change.businessAccountId, credentials.sender, project, stored),
      })
    : undefined;

  const now = Date.now();
  const changes: Partial<ProjectRow> = { updated_at: now };
  if (given) {
    changes.provider_phone_number_id = given.sender;
    changes.provider_access_token_enc = sealSecret(deps.encryptionKey, given.secret);
    changes.credentials_updated_at = now;
  }
  if (change.callbackUrl !== undefined) changes.callback_url = change.callbackUrl;
  const accountRow: ProviderAccountRow | undefined = account && {
    project_id: projectId,
    credentials_updated_at: changes.credentials_updated_at ?? project.credentials_updated_at ?? now,
    ...accountColumns(account),
    checked_at: now,
    check_due_at: now + PROVIDER_ACCOUNT_REFRESH_MS,
  };
  const saved = await deps.write(async (trx) => {
    if (account && accountRow) await saveProviderAccount(trx, accountRow, account.messagesPerSecond);
    return updateProject(trx, projectId, changes);
  });
  return { project: saved!, account: accountRow ?? stored };
}
