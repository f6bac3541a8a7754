import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ProjectRow } from '../../db/projects.ts';
import { createProject, readProject } from '../../projects/projects.ts';
import { authenticate, bearerToken, unauthorized } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { RateLimiter, rateLimitHeaders } from '../rateLimit.ts';
import { BEARER, errorResponses, iso, Timestamp } from '../schemas.ts';
import { ProviderAccountView, providerAccountView } from './providerCredentials.ts';
import { PROVIDER_NAMES } from '../../providers/names.ts';

export const ProjectView = Type.Object({
  projectId: Type.String({ examples: ['proj_01jd2k3m4n5p6q7r8s9t0v1w2x'] }),
  id: Type.String({ description: 'The same value as projectId.' }),
  name: Type.String(),
  ownerEmail: Type.String(),
  providerPhoneNumberId: Type.Optional(Type.String()),
  callbackUrl: Type.Optional(Type.String()),
  provider: Type.Optional(ProviderAccountView),
  providerName: Type.Optional(
    Type.Enum(PROVIDER_NAMES, {
      description: 'Which provider this svc sends through (SVC_PROVIDER): `sandbox` simulates WhatsApp and sends nothing. Read-only.',
    }),
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export function projectView(row: ProjectRow, provider?: ReturnType<typeof providerAccountView>) {
  return {
    projectId: row.id,
    id: row.id,
    name: row.name,
    ownerEmail: row.owner_email,
    ...(row.provider_phone_number_id !== null && { providerPhoneNumberId: row.provider_phone_number_id }),
    ...(row.callback_url !== null && { callbackUrl: row.callback_url }),
    ...(provider && { provider }),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

const CreateProjectBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Display name.' }),
    ownerEmail: Type.String({ format: 'email', maxLength: 254, description: 'Contact e-mail of the owner.' }),
  },
  { additionalProperties: false },
);

const CreatedProject = Type.Object({
  projectId: Type.String(),
  id: Type.String(),
  name: Type.String(),
  ownerEmail: Type.String(),
  createdAt: Timestamp,
  apiKey: Type.String({ description: 'The first API key. Shown once; it cannot be read back.' }),
  apiKeyId: Type.String({ description: 'Id of that key, to revoke it later.' }),
});

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export async function projectRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const signupLimiter = new RateLimiter(ctx.config.signupRateLimitPerMinute);

  function guardSignup(request: FastifyRequest, reply: FastifyReply): void {
    if (ctx.config.signup === 'closed') {
      const token = bearerToken(request);
      if (token === undefined || !sameSecret(token, ctx.config.adminToken!)) {
        throw unauthorized('Sign-up is closed: send "Authorization: Bearer <SVC_ADMIN_TOKEN>".');
      }
      return;
    }
    const decision = signupLimiter.take(request.ip);
    const headers = rateLimitHeaders('signup', decision);
    if (!decision.allowed) {
      const detail = `Too many projects created from this address; retry in ${decision.retryAfterSeconds} s.`;
      throw new ApiError('rate_limited', detail, { headers });
    }
    reply.headers(headers);
  }

  api.post(
    '/v1/projects',
    {
      schema: {
        tags: ['Projects'],
        summary: 'Create a project',
        description: 'Creates a project and its first API key (in the answer, shown once). The only endpoint without an API key. Rate-limited per client address.',
        body: CreateProjectBody,
        response: {
          200: CreatedProject,
          ...errorResponses('validation_failed', 'invalid_json', 'rate_limited'),
        },
      },
      onRequest: async (request, reply) => guardSignup(request, reply),
    },
    async (request) => {
      const now = Date.now();
      const { project, apiKey, apiKeyId: keyId } = await createProject(ctx.database, ctx.encryptionKey, request.body, now);
      return {
        projectId: project.id,
        id: project.id,
        name: project.name,
        ownerEmail: project.owner_email,
        createdAt: iso(now),
        apiKey,
        apiKeyId: keyId,
      };
    },
  );

  api.get(
    '/v1/projects/me',
    {
      schema: {
        tags: ['Projects'],
        summary: 'Get the project',
        description: 'The project of the calling API key: its provider setup, callback URL and sending number.',
        security: BEARER,
        response: { 200: ProjectView, ...errorResponses() },
      },
      onRequest: authenticate(ctx),
    },
    async (request) => {
      const { project, account } = await readProject(ctx.database.reader, request.auth.projectId);
      // Which provider answers, so a reader (the console's "sandbox" badge) knows nothing really goes out.
      return { ...projectView(project, account && providerAccountView(project, account, ctx.config)), providerName: ctx.config.provider };
    },
  );
}
