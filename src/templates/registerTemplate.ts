import type { Database, Db } from '../db/database.ts';
import { findTemplateByNameAndLanguage, insertTemplate, recordTemplateSubmission, type TemplateRow } from '../db/templates.ts';
import type { FieldError } from '../domain/fieldError.ts';
import { newId } from '../domain/ids.ts';
import { isMediaFormat, mediaHeaderOf, parameterFormatOf, registeredComponents, type TemplateDraft, validateTemplate } from '../domain/templates.ts';
import { DomainError, validationError } from '../errors.ts';
import { DownloadError } from '../net/guardedDownload.ts';
import { loadMediaSample } from '../net/mediaSample.ts';
import type { MediaSample, Provider, TemplateComponent } from '../providers/provider.ts';
import type { Notifier } from '../workers/notifier.ts';
import { providerContextOf, submissionOf } from './providerContext.ts';

// Registering a template (POST /v1/templates): the rules (domain/templates.ts), a media HEADER's
// sample fetched when given by URL (CONTRACT §9), the row stored PENDING, then handed to the
// provider for review. The route only translates HTTP to this call and back.

/**
 * How long a new template waits for the provider to answer its submission before the review
 * worker takes it up anyway (it does only if this process stopped in between).
 */
const SUBMISSION_GRACE_MS = 60_000;

export interface RegistrationDeps {
  database: Database;
  encryptionKey: Buffer;
  provider: Provider;
  notifier: Notifier;
  /** SVC_ALLOW_PRIVATE_CALLBACKS: samples may come from private addresses and over http (development, tests). */
  allowPrivateSamples: boolean;
}

export interface Registration {
  projectId: string;
  draft: TemplateDraft;
  /** Runs the insert in a transaction that also checks the caller's key (authorizedWrite). */
  write: <T>(work: (trx: Db) => Promise<T>) => Promise<T>;
  log: { warn(details: object, message: string): void };
}

export function templateExists(name: string, language: string): DomainError {
  return new DomainError(
    'template_exists',
    `A template named '${name}' in ${language} is already registered; use another name or language, or delete it first.`,
  );
}

/** A media HEADER's sample given by URL, downloaded and checked; 400 naming it when it cannot be used. */
async function sampleOf(components: readonly TemplateComponent[], deps: RegistrationDeps): Promise<MediaSample | undefined> {
  const index = components.findIndex((component) => component === mediaHeaderOf(components));
  const header = components[index];
  if (header?.type !== 'HEADER' || header.format === undefined || !isMediaFormat(header.format)) return undefined;
  const url = header.example?.header_url?.[0];
  if (url === undefined) return undefined;
  if (deps.provider.takesSampleUrls === false) {
    const field = `/components/${index}/example/header_url`;
    const message =
      `This service cannot upload samples to the provider (its operator has not set SVC_WHATSAPP_APP_ID): give ` +
      `example.header_handle instead of ${field}.`;
    throw validationError([{ field, code: 'sample_upload_unavailable', message }]);
  }
  const allowPrivate = deps.allowPrivateSamples;
  try {
    return await loadMediaSample(url, header.format, allowPrivate);
  } catch (error) {
    if (!(error instanceof DownloadError)) throw error;
    const field = `/components/${index}/example/header_url/0`;
    const problem: FieldError = { field, code: `sample_${error.code}`, message: `The ${header.format} sample at ${field} cannot be used: ${error.message}.` };
    throw validationError([problem]);
  }
}

export async function registerTemplate(deps: RegistrationDeps, registration: Registration): Promise<TemplateRow> {
  const { draft, projectId } = registration;
  const errors = validateTemplate(draft);
  if (errors.length > 0) throw validationError(errors);
  const { db } = deps.database;
  // Checked first to answer a taken pair early; the unique constraint decides races.
  if (await findTemplateByNameAndLanguage(db, projectId, draft.name, draft.language)) {
    throw templateExists(draft.name, draft.language);
  }
  const provider = await providerContextOf(deps, projectId);
  if (provider.problem !== undefined) {
    throw new DomainError('provider_setup_incomplete', `Templates cannot reach the provider yet: ${provider.problem}`);
  }
  const components = registeredComponents(draft);
  const mediaSample = await sampleOf(components, deps);
  const createdAt = Date.now();
  const row: TemplateRow = {
    id: newId('tpl', createdAt),
    project_id: projectId,
    name: draft.name,
    language: draft.language,
    category: draft.category,
    status: 'PENDING',
    components: JSON.stringify(components),
    rejection_reason: null,
    provider_template_id: null,
    // Should this process stop before the provider answers, the review worker takes it up then.
    review_due_at: createdAt + SUBMISSION_GRACE_MS,
    lease_expires_at: null,
    created_at: createdAt,
    updated_at: createdAt,
    provider_status: null,
    provider_status_reason: null,
    provider_status_at: null,
    category_history: null,
    upcoming_category: null,
    // Only NAMED is written: a template without the column's value is POSITIONAL, as all were before.
    ...(parameterFormatOf(draft) === 'NAMED' && { parameter_format: 'NAMED' }),
  };
  // Stored first, and only then sent: a lost race (409) or a revoked key (401) never leaves
  // at the provider a template svc does not track.
  await registration.write(async (trx) => {
    if ((await insertTemplate(trx, row)) === 'name_language_taken') throw templateExists(draft.name, draft.language);
  });
  let submission: { providerTemplateId: string | null; reviewDueAt: number };
  try {
    const submitted = await deps.provider.submitTemplate({ ...submissionOf(row, provider), ...(mediaSample && { mediaSample }) });
    submission = { providerTemplateId: submitted.providerTemplateId, reviewDueAt: Date.now() + submitted.checkAfterMs };
  } catch (error) {
    // Registered all the same: it stays PENDING and the review worker asks the provider now
    // (which takes it up, or rejects it), rather than the caller getting a 5xx for a template
    // that exists.
    registration.log.warn({ err: error, templateId: row.id }, 'template submission to the provider failed; the review worker will check it');
    submission = { providerTemplateId: null, reviewDueAt: Date.now() };
  }
  await db.transaction().execute(async (trx) => {
    await recordTemplateSubmission(trx, row.id, submission);
    await deps.notifier.notifyInTransaction(trx, 'templates');
  });
  deps.notifier.wakeLocal('templates');
  return row;
}
