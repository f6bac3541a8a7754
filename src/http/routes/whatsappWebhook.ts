import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { projectsSendingFrom } from '../../db/projects.ts';
import { makeBusinessAccountDue } from '../../db/providerAccounts.ts';
import { findTemplatesForProviderReport } from '../../db/templates.ts';
import { recordInboundMessage, recordMarketingPreference, recordUserIdChange } from '../../messages/recordReply.ts';
import { inboundReportsOf } from '../../providers/whatsapp/inboundMessages.ts';
import { hasValidSignature, reportsOf } from '../../providers/whatsapp/webhook.ts';
import type { HttpContext } from '../context.ts';
import { ApiError } from '../errors.ts';

// Meta's webhook for the WhatsApp Cloud API (CONTRACT §7): the verification handshake, and the
// signed notifications of message statuses, template statuses and category changes, number
// throughput changes and volume pricing tiers. Meta authenticates with the app secret's signature, not an API key. One
// Meta app may serve other WABAs and deployments too: what names no project's number or account
// here is acknowledged and ignored.

const PATH = '/v1/providers/whatsapp/webhook';
const TAG = 'Provider webhooks';
/** Meta batches many status updates into one notification. */
const WEBHOOK_BODY_LIMIT = 4 * 1024 * 1024;
/** svc's message ids (CONTRACT §3): a status naming one svc cannot find yet is worth Meta's retry. */
const SVC_MESSAGE_ID = /^msg_/;

function sameSecret(given: string, expected: string): boolean {
  // Hashed first: timingSafeEqual needs equal lengths, and the length must not leak either.
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function first(value: unknown): string | undefined {
  const single = Array.isArray(value) ? value[0] : value;
  return typeof single === 'string' ? single : undefined;
}

export async function whatsappWebhookRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  if (ctx.config.provider !== 'whatsapp') return;
  const { appSecret, verifyToken } = ctx.config.whatsapp;

  // The signature covers the exact bytes Meta sent: keep them, parse only once they are trusted.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) => {
    done(null, body);
  });

  app.get(
    PATH,
    {
      schema: {
        tags: [TAG],
        summary: 'WhatsApp webhook verification handshake',
        description:
          'Meta calls this when the webhook is configured: with `hub.mode=subscribe` and `hub.verify_token` equal to ' +
          '`SVC_WHATSAPP_VERIFY_TOKEN`, the answer is `hub.challenge` as text (200); anything else is 403.',
      },
    },
    async (request, reply) => {
      const query = request.query as Record<string, unknown>;
      const mode = first(query['hub.mode']);
      const token = first(query['hub.verify_token']);
      const challenge = first(query['hub.challenge']);
      if (mode !== 'subscribe' || token === undefined || challenge === undefined || verifyToken === undefined || !sameSecret(token, verifyToken)) {
        throw new ApiError('forbidden', 'The verification request does not match the configured verify token.');
      }
      return reply.type('text/plain; charset=utf-8').send(challenge);
    },
  );

  app.post(
    PATH,
    {
      bodyLimit: WEBHOOK_BODY_LIMIT,
      schema: {
        tags: [TAG],
        summary: 'WhatsApp webhook notifications',
        description:
          'Message statuses (sent, delivered, read, failed), template statuses and category changes, number ' +
          'throughput changes, volume pricing tiers (`account_update`), recipients’ messages (replies to svc’s messages, opt-out keywords) and marketing ' +
          'preferences (`user_preferences`) from Meta, signed with `X-Hub-Signature-256` (HMAC-SHA256 of the body with ' +
          '`SVC_WHATSAPP_APP_SECRET`): unsigned or badly signed posts are 401. Answers 200 once every report is ' +
          'recorded (duplicates, late reports, and reports about numbers or accounts of no project here change ' +
          'nothing), and 503 when a status of a project’s number names an svc message that cannot be found yet, so ' +
          'that Meta sends it again.',
      },
    },
    async (request, reply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const signature = first(request.headers['x-hub-signature-256']);
      if (appSecret === undefined || !hasValidSignature(raw, signature, appSecret)) {
        throw new ApiError('unauthorized', 'The X-Hub-Signature-256 header is missing or does not match the body.');
      }
      let payload: unknown;
      try {
        payload = JSON.parse(raw.toString('utf8'));
      } catch {
        throw new ApiError('invalid_json', 'The body is not valid JSON.');
      }
      const { messages, templates, categories, accountChanges, volumeTiers } = reportsOf(payload);
      const { db } = ctx.database;
      const owners = await projectsSendingFrom(db, [...new Set(messages.map((report) => report.phoneNumberId).filter((id) => id !== undefined))]);
      let missing = 0;
      for (const report of messages) {
        // Every status names its sending number; applying checks it against the message's project.
        if (report.phoneNumberId === undefined) continue;
        const result = await ctx.inbound(report);
        // Of a project's number here, naming an svc message not found yet: worth Meta's retry. Of
        // a number no project has here (another app's or deployment's): acknowledged.
        const ours = owners.has(report.phoneNumberId);
        if (result === 'unknown' && ours && report.messageId !== undefined && SVC_MESSAGE_ID.test(report.messageId)) missing++;
      }
      // Unknown template ids are left to the review worker, which polls every PENDING template.
      for (const update of templates) {
        for (const template of await findTemplatesForProviderReport(db, update.providerTemplateId, update.businessAccountId)) {
          await ctx.inbound({
            kind: 'template',
            templateId: template.id,
            ...(update.status !== undefined && { status: update.status }),
            providerStatus: update.providerStatus,
            ...(update.reason !== undefined && { reason: update.reason }),
            occurredAt: update.occurredAt,
          });
        }
      }
      for (const update of categories) {
        for (const template of await findTemplatesForProviderReport(db, update.providerTemplateId, update.businessAccountId)) {
          await ctx.inbound({
            kind: 'template_category',
            templateId: template.id,
            category: update.category,
            ...(update.upcoming && { upcoming: update.upcoming }),
            occurredAt: update.occurredAt,
          });
        }
      }
      // Volume tiers a WABA reached: its later deliveries are priced at them (costs/volumeTiers.ts).
      for (const update of volumeTiers) await ctx.inbound({ kind: 'volume_tier', ...update });
      // A number's throughput changed (THROUGHPUT_UPGRADE…): its accounts are checked again at once,
      // by whichever worker process is listening, and the dispatcher's pace follows the new tier.
      let accountsDue = 0;
      for (const businessAccountId of new Set(accountChanges)) accountsDue += await makeBusinessAccountDue(db, businessAccountId, Date.now());
      if (accountsDue > 0) {
        await ctx.notifier.notifyInTransaction(db, 'accounts');
        ctx.notifier.wakeLocal('accounts');
      }
      // Recipients' messages (replies, opt-out keywords) and marketing preferences (CONTRACT §9).
      const inbound = inboundReportsOf(payload);
      const deps = { database: ctx.database, notifier: ctx.notifier };
      for (const message of inbound.messages) await recordInboundMessage(deps, message);
      for (const preference of inbound.preferences) await recordMarketingPreference(deps, preference);
      for (const change of inbound.userIdChanges) await recordUserIdChange(deps, change);
      if (missing > 0) {
        request.log.warn({ missing }, 'WhatsApp statuses for messages not found; Meta will send them again');
        throw new ApiError('unavailable', 'Some statuses name messages that cannot be found yet; send them again later.');
      }
      const received = messages.length + templates.length + categories.length + accountChanges.length + volumeTiers.length;
      return reply.code(200).send({ received: received + inbound.messages.length + inbound.preferences.length + inbound.userIdChanges.length });
    },
  );
}
