import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { previewTemplate } from '../../templates/templateCatalog.ts';
import { authenticate } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { BEARER, errorResponses } from '../schemas.ts';
import { ButtonContent, HeaderContent } from '../messageView.ts';
import { BodyVariables, HeaderVariables, RichSendFields } from './messages.ts';

const PreviewView = Type.Object({
  header: Type.Union([...HeaderContent.anyOf, Type.Null()], {
    description: 'A TEXT header rendered, a media header’s type and link, a LOCATION header’s place; null without a header.',
  }),
  body: Type.String(),
  footer: Type.Union([Type.String(), Type.Null()]),
  buttons: Type.Optional(Type.Array(ButtonContent, { description: 'A rich template’s buttons with their resolved URL and payload.' })),
});

export async function templatePreviewRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post(
    '/v1/templates/:id/preview',
    {
      onRequest: authenticate(ctx),
      schema: {
        operationId: 'previewTemplate',
        tags: ['Templates'],
        summary: 'Preview a template',
        description:
          'Renders a template with variables, without sending. What a recipient would see, checked by the rules a send applies to its values (400 validation_failed, 422 ' +
          'template_variables_mismatch): the header (text, media type and link, or location), body, footer and, for a rich ' +
          'template, its buttons with their resolved URL and payload. Takes the send’s `variables`, `headerVariables`, ' +
          '`headerMedia`, `headerLocation` and `buttons`. Works whatever the template’s status, so a template can be previewed while PENDING.',
        security: BEARER,
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        body: Type.Object(
          {
            variables: Type.Optional(BodyVariables()),
            headerVariables: Type.Optional(HeaderVariables()),
            ...RichSendFields,
          },
          { additionalProperties: false },
        ),
        response: {
          200: PreviewView,
          ...errorResponses('validation_failed', 'invalid_json', 'not_found', 'template_variables_mismatch'),
        },
      },
    },
    async (request) => {
      const content = await previewTemplate(ctx.database.reader, request.auth.projectId, request.params.id, request.body ?? {}, ctx.provider.parameterRule);
      return {
        header: content.header ?? null,
        body: content.body,
        footer: content.footer ?? null,
        ...('buttons' in content && content.buttons !== undefined && { buttons: content.buttons }),
      };
    },
  );
}
