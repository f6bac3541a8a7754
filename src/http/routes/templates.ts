import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { registerTemplate } from '../../templates/registerTemplate.ts';
import { getTemplate, listProjectTemplates, removeTemplate } from '../../templates/templateCatalog.ts';
import { authenticate, authorizedWrite } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { decodeCursor, PageQuery, paginate } from '../pagination.ts';
import { BEARER, errorResponses, iso, Timestamp } from '../schemas.ts';
import { CreateTemplateBody, TemplateView, templateView } from './templateViews.ts';

export { TemplateView, templateView };

export const TemplateIdParams = Type.Object({ id: Type.String({ maxLength: 200 }) });

export async function templateRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', authenticate(ctx));

  api.post(
    '/v1/templates',
    {
      schema: {
        tags: ['Templates'],
        summary: 'Create a template',
        description:
          'Registers a template for the provider’s review. The template starts PENDING and becomes APPROVED or REJECTED when the provider has reviewed it. ' +
          'Each (name, language) pair can be registered once per project. The template is stored before it is ' +
          'submitted to the provider; if that submission fails, it is registered all the same (PENDING) and the ' +
          'review worker checks it with the provider. When the provider account cannot take templates (its business ' +
          'account is unknown: see `provider.problem` on GET /v1/projects/me), the answer is 422 provider_setup_incomplete. ' +
          'Components follow Meta’s template JSON: media (IMAGE, VIDEO, DOCUMENT, with a sample) and LOCATION headers, ' +
          'BUTTONS (QUICK_REPLY, URL, PHONE_NUMBER, COPY_CODE; OTP in AUTHENTICATION templates) and named parameters ' +
          '(`parameter_format: NAMED`). A sample given as `example.header_url` is downloaded by svc and uploaded to the ' +
          'provider; one that cannot be fetched or breaks a limit is 400 validation_failed naming it.',
        security: BEARER,
        body: CreateTemplateBody,
        response: {
          200: TemplateView,
          ...errorResponses('validation_failed', 'invalid_json', 'template_exists', 'provider_setup_incomplete'),
        },
      },
    },
    async (request) => {
      const row = await registerTemplate(
        { ...ctx, allowPrivateSamples: ctx.config.allowPrivateCallbacks },
        {
          projectId: request.auth.projectId,
          draft: request.body,
          write: (work) => authorizedWrite(ctx, request, work),
          log: request.log,
        },
      );
      return templateView(row);
    },
  );

  api.get(
    '/v1/templates',
    {
      schema: {
        tags: ['Templates'],
        summary: 'List templates',
        description: 'Newest first. When more follow, the `Link` header carries the next page (rel="next").',
        security: BEARER,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: Type.Array(TemplateView), ...errorResponses('validation_failed') },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query;
      const rows = await listProjectTemplates(ctx.database.reader, request.auth.projectId, { limit, afterId: decodeCursor(cursor) });
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
      return templateView(await getTemplate(ctx.database.reader, request.auth.projectId, request.params.id));
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
      const { row, deletedAt, deletion } = await removeTemplate(ctx, request.auth.projectId, request.params.id, (work) =>
        authorizedWrite(ctx, request, work),
      );
      return {
        ...templateView(row),
        deletedAt: iso(deletedAt),
        providerDeletion: deletion.kind,
        ...(deletion.kind === 'refused' && { providerError: deletion.error }),
      };
    },
  );
}
