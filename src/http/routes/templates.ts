import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { newId } from '../../domain/ids.ts';
import {
  COMPONENT_TYPES,
  MAX_TEXT_LENGTH,
  TEMPLATE_CATEGORIES,
  type TemplateComponent,
  validateTemplate,
} from '../../domain/templates.ts';
import { findProject } from '../../db/projects.ts';
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
import { authenticate, authorizedWrite } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { ApiError, validationError } from '../errors.ts';
import { decodeCursor, PageQuery, paginate } from '../pagination.ts';
import { BEARER, errorResponses, iso, Timestamp } from '../schemas.ts';

const ComponentView = Type.Object({
  type: Type.Enum([...COMPONENT_TYPES]),
  format: Type.Optional(Type.Enum(['TEXT'], { description: 'On a HEADER only.' })),
  text: Type.String(),
});

export const TemplateView = Type.Object({
  id: Type.String({ examples: ['tpl_01jd2k3m4n5p6q7r8s9t0v1w2x'] }),
  name: Type.String(),
  language: Type.String(),
  category: Type.Enum([...TEMPLATE_CATEGORIES]),
  status: Type.Enum(['PENDING', 'APPROVED', 'REJECTED']),
  components: Type.Array(ComponentView, { description: 'As submitted.' }),
  rejectionReason: Type.Optional(Type.String({ description: 'Why the provider rejected it; only when REJECTED.' })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export function templateView(row: TemplateRow) {
  return {
    id: row.id,
    name: row.name,
    language: row.language,
    category: row.category as (typeof TEMPLATE_CATEGORIES)[number],
    status: row.status,
    components: componentsOf(row),
    ...(row.status === 'REJECTED' && row.rejection_reason !== null && { rejectionReason: row.rejection_reason }),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

// The body schema checks shape only (types, required and unknown fields); the rules, with
// messages that say how to fix the template, are in domain/templates.ts.
const ComponentInput = Type.Object(
  {
    type: Type.String({ description: '`HEADER`, `BODY` or `FOOTER`; exactly one BODY, at most one of the others.' }),
    format: Type.Optional(Type.String({ description: 'HEADER only: `TEXT`, the only kind supported (a HEADER without it is TEXT).' })),
    text: Type.String({
      description:
        `BODY 1–${MAX_TEXT_LENGTH.BODY} characters, HEADER and FOOTER 1–${MAX_TEXT_LENGTH.HEADER}. ` +
        'Placeholders `{{1}}`, `{{2}}`, … numbered without gaps in each component; at most one in a HEADER, none in a FOOTER.',
    }),
  },
  { additionalProperties: false },
);

const CreateTemplateBody = Type.Object(
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
    components: Type.Array(ComponentInput, {
      maxItems: 10,
      examples: [[{ type: 'BODY', text: 'Hello {{1}}, your order {{2}} has shipped.' }]],
    }),
  },
  { additionalProperties: false },
);

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
          'review worker checks it with the provider.',
        security: BEARER,
        body: CreateTemplateBody,
        response: { 200: TemplateView, ...errorResponses('validation_failed', 'invalid_json', 'template_exists') },
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
      const createdAt = Date.now();
      const components = body.components as TemplateComponent[];
      const row: TemplateRow = {
        id: newId('tpl', createdAt),
        project_id: projectId,
        name: body.name,
        language: body.language,
        category: body.category,
        status: 'PENDING',
        components: JSON.stringify(body.components),
        rejection_reason: null,
        provider_template_id: null,
        // Should this process stop before the provider answers, the review worker takes it up then.
        review_due_at: createdAt + SUBMISSION_GRACE_MS,
        lease_expires_at: null,
        created_at: createdAt,
        updated_at: createdAt,
      };
      // Stored first, and only then sent: a lost race (409) or a revoked key (401) never leaves
      // at the provider a template svc does not track.
      await authorizedWrite(ctx, request, async (trx) => {
        if ((await insertTemplate(trx, row)) === 'name_language_taken') throw templateExists(body.name, body.language);
      });
      let submission: { providerTemplateId: string | null; reviewDueAt: number };
      try {
        const project = await findProject(db, projectId);
        const submitted = await ctx.provider.submitTemplate({
          templateId: row.id,
          projectId,
          name: row.name,
          language: row.language,
          category: row.category,
          components,
          credentials: project ? providerCredentialsOf(project, ctx.encryptionKey) : undefined,
        });
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
          'Whatever its status. Returns the template as it was, with `deletedAt`. Its (name, language) pair can then be registered again.',
        security: BEARER,
        params: TemplateIdParams,
        response: {
          200: Type.Object({ ...TemplateView.properties, deletedAt: Timestamp }),
          ...errorResponses('not_found'),
        },
      },
    },
    async (request) => {
      const deletedAt = Date.now();
      const row = await authorizedWrite(ctx, request, (trx) =>
        deleteTemplate(trx, request.auth.projectId, request.params.id),
      );
      if (row === undefined) throw templateNotFound();
      return { ...templateView(row), deletedAt: iso(deletedAt) };
    },
  );
}
