import type { SwaggerOptions } from '@fastify/swagger';
import type { Config } from '../../config.ts';
import { webhookPayloadSchemas, webhooksSection } from './webhooks.ts';

/** The options of @fastify/swagger: the document's fixed parts, and the hooks that finish it. */
export function swaggerOptions(_config: Config): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'svc',
        version: '1.0.0',
        description: 'Outbound business messaging through provider-approved templates.',
      },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'svc_live_…' } },
        schemas: webhookPayloadSchemas,
      },
      webhooks: webhooksSection(),
    },
  } as SwaggerOptions;
}
