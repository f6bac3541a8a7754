import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.ts';
import { DomainError } from '../../errors.ts';
import type { ProviderInbox } from '../provider.ts';
import { inboundReportsOf } from './inboundMessages.ts';
import { hasValidSignature, reportsOf } from './webhook.ts';

// Meta's webhook for the WhatsApp Cloud API (CONTRACT §7): the verification handshake, and the
// signed notifications of message statuses, template statuses and category changes, number
// throughput changes and volume pricing tiers. Meta authenticates with the app secret's signature, not an API key. One
// Meta app may serve other WABAs and deployments too: what names no project's number or account
// here is acknowledged and ignored. The provider's inbound routes: the HTTP server registers them
// in a scope of their own, with svc's inbox (messages/providerInbox.ts) for every lookup and record.

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

/**
 * Hands every report of a trusted notification to svc's inbox, in Meta's order; returns how many
 * reports it held, and how many statuses of a project's number name an svc message not found yet.
 */
async function applyNotification(inbox: ProviderInbox, payload: unknown): Promise<{ received: number; missing: number }> {
  const { messages, templates, categories, accountChanges, volumeTiers } = reportsOf(payload);
  const ours = await inbox.sendersHere(messages.map((report) => report.phoneNumberId).filter((id) => id !== undefined));
  let missing = 0;
  for (const report of messages) {
    // Every status names its sending number; applying checks it against the message's project.
    if (report.phoneNumberId === undefined) continue;
    const result = await inbox.report(report);
    // Of a project's number here, naming an svc message not found yet: worth Meta's retry. Of
    // a number no project has here (another app's or deployment's): acknowledged.
    if (result === 'unknown' && ours.has(report.phoneNumberId) && report.messageId !== undefined && SVC_MESSAGE_ID.test(report.messageId)) missing++;
  }
  // Unknown template ids are left to the review worker, which polls every PENDING template.
  for (const update of templates) {
    for (const templateId of await inbox.templatesNamed(update.providerTemplateId, update.businessAccountId)) {
      await inbox.report({
        kind: 'template',
        templateId,
        ...(update.status !== undefined && { status: update.status }),
        providerStatus: update.providerStatus,
        ...(update.reason !== undefined && { reason: update.reason }),
        occurredAt: update.occurredAt,
      });
    }
  }
  for (const update of categories) {
    for (const templateId of await inbox.templatesNamed(update.providerTemplateId, update.businessAccountId)) {
      await inbox.report({
        kind: 'template_category',
        templateId,
        category: update.category,
        ...(update.upcoming && { upcoming: update.upcoming }),
        occurredAt: update.occurredAt,
      });
    }
  }
  // Volume tiers a WABA reached: its later deliveries are priced at them (costs/volumeTiers.ts).
  for (const update of volumeTiers) await inbox.report({ kind: 'volume_tier', ...update });
  // A number's throughput changed (THROUGHPUT_UPGRADE…): its accounts are checked again at once.
  await inbox.accountChanged(accountChanges);
  // Recipients' messages (replies, opt-out keywords) and marketing preferences (CONTRACT §9).
  const inbound = inboundReportsOf(payload);
  for (const message of inbound.messages) await inbox.inboundMessage(message);
  for (const preference of inbound.preferences) await inbox.marketingPreference(preference);
  for (const change of inbound.userIdChanges) await inbox.userIdChange(change);
  const received = messages.length + templates.length + categories.length + accountChanges.length + volumeTiers.length;
  return { received: received + inbound.messages.length + inbound.preferences.length + inbound.userIdChanges.length, missing };
}

export async function whatsappWebhookRoutes(
  app: FastifyInstance,
  { appSecret, verifyToken }: Pick<Config['whatsapp'], 'appSecret' | 'verifyToken'>,
  inbox: ProviderInbox,
): Promise<void> {
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
        throw new DomainError('forbidden', 'The verification request does not match the configured verify token.');
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
        throw new DomainError('unauthorized', 'The X-Hub-Signature-256 header is missing or does not match the body.');
      }
      let payload: unknown;
      try {
        payload = JSON.parse(raw.toString('utf8'));
      } catch {
        throw new DomainError('invalid_json');
      }
      const { received, missing } = await applyNotification(inbox, payload);
      if (missing > 0) {
        request.log.warn({ missing }, 'WhatsApp statuses for messages not found; Meta will send them again');
        throw new DomainError('unavailable', 'Some statuses name messages that cannot be found yet; send them again later.');
      }
      return reply.code(200).send({ received });
    },
  );
}
