import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { newId } from '../../domain/ids.ts';
import { registeredComponents, validateTemplate } from '../../domain/templates.ts';
import { findProject } from '../../db/projects.ts';
import { findProviderAccount } from '../../db/providerAccounts.ts';
import {
  componentsOf,
  deleteTemplate,
  findTemplate,
  findTemplateByNameAndLanguage,
  insertTemplate,
  listTemplates,
  recordTemplateSubmission,
  type TemplateRow,
} from '../../db/templates.ts';
import { providerCredentialsOf } from '../../projectSecrets.ts';
import type { ProviderCredentials, TemplateSubmission } from '../../providers/provider.ts';
import { authenticate, authorizedWrite } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { ApiError, validationError } from '../errors.ts';
import { decodeCursor, PageQuery, paginate } from '../pagination.ts';
import { BEARER, errorResponses, iso, Timestamp } from '../schemas.ts';
import { CreateTemplateBody, TemplateView, templateView } from './templateViews.ts';

export { TemplateView, templateView };

/**
 * How long a new template waits for the provider to answer its submission before the review
 * worker takes it up anyway (it does only if this process stopped in between).
 */
const SUBMISSION_GRACE_MS = 60_000;

export const TemplateIdParams = Type.Object({ id: Type.String({ maxLength: 200 }) });

export function templateNotFound(): ApiError {
  return new ApiError('not_found', 'No template of this project has that id.');
}

function templateExists(name: string, language: string): ApiError {
  return new ApiError(
    'template_exists',
    `A template named '${name}' in ${language} is already registered; use another name or language, or delete it first.`,
  );
}

interface ProviderContext {
  credentials: ProviderCredentials | undefined;
  businessAccountId: string | null;
  /** What keeps templates from reaching the provider: its account was checked, and its business account is not known. */
  problem: string | undefined;
}

async function providerContextOf(ctx: HttpContext, projectId: string): Promise<ProviderContext> {
  const project = await findProject(ctx.database.db, projectId);
  const credentials = project ? providerCredentialsOf(project, ctx.encryptionKey) : undefined;
  const account = credentials ? await findProviderAccount(ctx.database.db, projectId) : undefined;
  const businessAccountId = account?.business_account_id ?? null;
  const problem =
    account && account.checked_at !== null && businessAccountId === null && account.problem !== null
      ? (JSON.parse(account.problem) as { message: string }).message
      : undefined;
  return { credentials, businessAccountId, problem };
}

function submissionOf(row: TemplateRow, provider: ProviderContext): TemplateSubmission & { providerTemplateId: string | null } {
  return {
    templateId: row.id,
    projectId: row.project_id,
    name: row.name,
    language: row.language,
    category: row.category,
    components: componentsOf(row),
    credentials: provider.credentials,
    businessAccountId: provider.businessAccountId,
    providerTemplateId: row.provider_template_id,
  };
}

export async function templateRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', authenticate(ctx));

  api.post(
    '/v1/templates',
    {
      schema: {
        tags: ['Templates'],
        summary: 'Register a template for provider review',
        description:
          'The template starts PENDING and becomes APPROVED or REJECTED when the provider has reviewed it. ' +
          'Each (name, language) pair can be registered once per project. The template is stored before it is ' +
          'submitted to the provider; if that submission fails, it is registered all the same (PENDING) and the ' +
          'review worker checks it with the provider. When the provider account cannot take templates (its business ' +
          'account is unknown: see `provider.problem` on GET /v1/projects/me), the answer is 422 provider_setup_incomplete.',
        security: BEARER,
        body: CreateTemplateBody,
        response: {
          200: TemplateView,
          ...errorResponses('validation_failed', 'invalid_json', 'template_exists', 'provider_setup_incomplete'),
        },
      },
    },
    async (request) => {
      const { body } = request;
      const errors = validateTemplate(body);
      if (errors.length > 0) throw validationError(errors);
      const { projectId } = request.auth;
      const { db } = ctx.database;
      // Checked first to answer a taken pair early; the unique constraint decides races.
      if (await findTemplateByNameAndLanguage(db, projectId, body.name, body.language)) {
        throw templateExists(body.name, body.language);
      }
      const provider = await providerContextOf(ctx, projectId);
      if (provider.problem !== undefined) {
        throw new ApiError('provider_setup_incomplete', `Templates cannot reach the provider yet: ${provider.problem}`);
      }
      const createdAt = Date.now();
      const row: TemplateRow = {
        id: newId('tpl', createdAt),
        project_id: projectId,
        name: body.name,
        language: body.language,
        category: body.category,
        status: 'PENDING',
        components: JSON.stringify(registeredComponents(body)),
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
      };
      // Stored first, and only then sent: a lost race (409) or a revoked key (401) never leaves
      // at the provider a template svc does not track.
      await authorizedWrite(ctx, request, async (trx) => {
        if ((await insertTemplate(trx, row)) === 'name_language_taken') throw templateExists(body.name, body.language);
      });
      let submission: { providerTemplateId: string | null; reviewDueAt: number };
      try {
        const submitted = await ctx.provider.submitTemplate(submissionOf(row, provider));
        submission = { providerTemplateId: submitted.providerTemplateId, reviewDueAt: Date.now() + submitted.checkAfterMs };
      } catch (error) {
        // Registered all the same: it stays PENDING and the review worker asks the provider now
        // (which takes it up, or rejects it), rather than the caller getting a 5xx for a template
        // that exists.
        request.log.warn({ err: error, templateId: row.id }, 'template submission to the provider failed; the review worker will check it');
        submission = { providerTemplateId: null, reviewDueAt: Date.now() };
      }
      await db.transaction().execute(async (trx) => {
        await recordTemplateSubmission(trx, row.id, submission);
        await ctx.notifier.notifyInTransaction(trx, 'templates');
      });
      ctx.notifier.wakeLocal('templates');
      return templateView(row);
    },
  );

  api.get(
    '/v1/templates',
    {
      schema: {
        tags: ['Templates'],
        summary: 'List the templates of the project',
        description: 'Newest first. When more follow, the `Link` header carries the next page (rel="next").',
        security: BEARER,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: Type.Array(TemplateView), ...errorResponses('validation_failed') },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query;
      const rows = await listTemplates(ctx.database.reader, request.auth.projectId, { limit, afterId: decodeCursor(cursor) });
      return paginate(request, reply, rows, limit).map(templateView);
    },
  );

  api.get(
    '/v1/templates/:id',
    {
      schema: {
        tags: ['Templates'],
        summary: 'Get a template',
        security: BEARER,
        params: TemplateIdParams,
        response: { 200: TemplateView, ...errorResponses('not_found') },
      },
    },
    async (request) => {
      const row = await findTemplate(ctx.database.reader, request.auth.projectId, request.params.id);
      if (row === undefined) throw templateNotFound();
      return templateView(row);
    },
  );

  api.delete(
    '/v1/templates/:id',
    {
      schema: {
        tags: ['Templates'],
        summary: 'Delete a template',
        description:
          'Whatever its status, here and at the provider (by its id there, so its other languages stay). Returns the ' +
          'template as it was, with `deletedAt` and `providerDeletion`: `deleted`, `absent` (the provider never had ' +
          'it) or `refused` (with `providerError`: the provider keeps it, e.g. Meta never deletes a DISABLED template, ' +
          'and its name and language stay taken there). When the provider cannot be reached, nothing is deleted (503). ' +
          'Its (name, language) pair can then be registered again in svc.',
        security: BEARER,
        params: TemplateIdParams,
        response: {
          200: Type.Object({
            ...TemplateView.properties,
            deletedAt: Timestamp,
            providerDeletion: Type.Enum(['deleted', 'absent', 'refused']),
            providerError: Type.Optional(
              Type.Object({ code: Type.String(), title: Type.String(), message: Type.String(), fbtraceId: Type.Optional(Type.String()) }),
            ),
          }),
          ...errorResponses('not_found', 'unavailable'),
        },
      },
    },
    async (request) => {
      const { projectId } = request.auth;
      const found = await findTemplate(ctx.database.db, projectId, request.params.id);
      if (found === undefined) throw templateNotFound();
      const deletion = await ctx.provider.deleteTemplate(submissionOf(found, await providerContextOf(ctx, projectId)));
      if (deletion.kind === 'unavailable') {
        throw new ApiError(
          'unavailable',
          `The provider could not be reached to delete the template; nothing was deleted, try again. (${deletion.error.code}: ${deletion.error.message})`,
          { headers: { 'retry-after': '30' } },
        );
      }
      const deletedAt = Date.now();
      const row = await authorizedWrite(ctx, request, (trx) => deleteTemplate(trx, projectId, found.id));
      if (row === undefined) throw templateNotFound();
      return {
        ...templateView(row),
        deletedAt: iso(deletedAt),
        providerDeletion: deletion.kind,
        ...(deletion.kind === 'refused' && { providerError: deletion.error }),
      };
    },
  );
}
