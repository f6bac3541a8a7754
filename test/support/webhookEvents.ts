import type { App } from '../../src/app.ts';
import { queuedMessageRow } from '../../src/db/messages.ts';
import { attemptOf, deliveryOf, storedDeliveryId } from '../../src/db/deliveryIds.ts';
import { latestAttemptOf, type WebhookAttemptRow, type WebhookDeliveryRow } from '../../src/db/webhookDeliveries.ts';
import { withPayloads } from '../../src/db/webhookPayloads.ts';
import { newId } from '../../src/domain/ids.ts';
import { sealSecret } from '../../src/domain/secretBox.ts';
import { liveWebhookSecrets } from '../../src/projectSecrets.ts';
import { webhookPayload } from '../../src/domain/webhookPayload.ts';
import {
  enqueueWebhookDelivery,
  enqueueWebhookEvents,
  type StatusEventForWebhook,
  type WebhookEventToDeliver,
} from '../../src/webhooks/enqueue.ts';
import { TEST_ENCRYPTION_KEY } from './server.ts';

// Status events made the way the service makes them — a message event and its webhook delivery
// in one transaction, then a wake-up — without going through the provider, so webhook tests
// control every field and every moment.

const KEY = Buffer.from(TEST_ENCRYPTION_KEY, 'base64');

/** A running service, or just its database and notifier (to drive a service in another process). */
export type Target = Pick<App, 'database' | 'notifier'>;

/** Sets a project's callback URL directly (the API would refuse private addresses). */
export async function setCallbackUrl(app: Target, projectId: string, url: string | null): Promise<void> {
  await app.database.db
    .updateTable('projects')
    .set({ callback_url: url, updated_at: Date.now() })
    .where('id', '=', projectId)
    .execute();
}

/** The project's live signing secrets, current first. */
export async function liveSecrets(app: Target, projectId: string): Promise<string[]> {
  const project = await app.database.db
    .selectFrom('projects')
    .selectAll()
    .where('id', '=', projectId)
    .executeTakeFirstOrThrow();
  return liveWebhookSecrets(project, KEY, Date.now());
}

/** Rotates the secret the way the rotate endpoint does: the old one signs beside the new for 24 h. */
export async function rotateSecretInDatabase(app: Target, projectId: string, newSecret: string): Promise<void> {
  const now = Date.now();
  await app.database.db
    .updateTable('projects')
    .set((eb) => ({
      previous_webhook_secret_enc: eb.ref('webhook_secret_enc'),
      previous_webhook_secret_expires_at: now + 24 * 60 * 60 * 1000,
      webhook_secret_enc: sealSecret(KEY, newSecret),
      updated_at: now,
    }))
    .where('id', '=', projectId)
    .execute();
}

export interface TestMessage {
  id: string;
  projectId: string;
  to: string;
  template: string;
  providerMessageId: string;
}

let sequence = 0;

/** A message row, as if POST /v1/messages had accepted it. */
export async function insertMessage(app: Target, projectId: string): Promise<TestMessage> {
  const now = Date.now();
  sequence++;
  const message: TestMessage = {
    id: newId('msg', now),
    projectId,
    to: `+1415555${String(1000 + (sequence % 9000)).padStart(4, '0')}`,
    template: 'order_update',
    providerMessageId: `wamid.test${sequence}${now}`,
  };
  const row = queuedMessageRow(
    {
      projectId,
      to: message.to,
      template: { id: newId('tpl', now), name: message.template, language: 'en', category: 'UTILITY' },
      variables: { '1': 'Ada' },
      content: { body: 'Hello Ada' },
    },
    now,
  );
  // Not due: these tests make its status changes themselves.
  await app.database.db
    .insertInto('messages')
    .values({ ...row, id: message.id, due_at: null, provider_message_id: message.providerMessageId })
    .execute();
  return message;
}

export type EventStatus = StatusEventForWebhook['status'];

export interface EmittedEvent {
  eventId: string;
  event: StatusEventForWebhook;
  enqueued: boolean;
}

/** Records a status event and enqueues its webhook in one transaction, then wakes the worker. */
export async function emitStatus(
  app: Target,
  message: TestMessage,
  status: EventStatus,
  options: { occurredAt?: number; error?: StatusEventForWebhook['error']; wake?: boolean } = {},
): Promise<EmittedEvent> {
  const now = Date.now();
  const eventId = newId('evt', now);
  const event: StatusEventForWebhook = {
    projectId: message.projectId,
    eventId,
    messageId: message.id,
    status,
    to: message.to,
    template: message.template,
    providerMessageId: message.providerMessageId,
    occurredAt: options.occurredAt ?? now,
    ...(options.error !== undefined && { error: options.error }),
  };
  const enqueued = await app.database.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('message_events')
      .values({
        id: eventId,
        message_id: message.id,
        project_id: message.projectId,
        status,
        occurred_at: event.occurredAt,
        error: options.error ? JSON.stringify(options.error) : null,
        created_at: now,
      })
      .execute();
    return enqueueWebhookDelivery(trx, app.notifier, event, now);
  });
  if (enqueued && options.wake !== false) app.notifier.wakeLocal('webhooks');
  return { eventId, event, enqueued };
}

/**
 * A backlog: `count` message.sent deliveries of as many messages, in one transaction. No message
 * or event rows: each delivery carries its body, as a delivery made before migration 0023 does.
 */
export async function enqueueBacklog(app: Target, projectId: string, count: number): Promise<void> {
  const now = Date.now();
  const events: WebhookEventToDeliver[] = [];
  for (let i = 0; i < count; i++) {
    const eventId = newId('evt', now);
    const messageId = newId('msg', now);
    const payload = webhookPayload({
      status: 'SENT',
      messageId,
      to: '+14155550100',
      template: 'order_update',
      providerMessageId: `wamid.backlog${i}`,
      occurredAt: now,
    });
    events.push({ projectId, eventId, event: 'message.sent', messageId, templateId: null, payload });
  }
  await app.database.db.transaction().execute(async (trx) => {
    for (let i = 0; i < events.length; i += 200) {
      await enqueueWebhookEvents(trx, app.notifier, events.slice(i, i + 200), now);
    }
  });
  app.notifier.wakeLocal('webhooks');
}

/** The deliveries of a project, straight from the database (for waiting on their state). */
export async function deliveryRows(app: Target, projectId: string) {
  const rows = await app.database.db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();
  return rows.map(deliveryOf);
}

export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs = 15_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Every attempt of a delivery, oldest first, as the API shows them: the earlier ones in
 * webhook_attempts, the latest in the delivery's own row.
 */
export async function deliveryAttempts(app: Pick<Target, 'database'>, deliveryId: string): Promise<WebhookAttemptRow[]> {
  const { db } = app.database;
  const stored = storedDeliveryId(db, deliveryId) as string;
  const delivery = deliveryOf(await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', stored).executeTakeFirstOrThrow());
  const earlier = (await db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', stored).orderBy('attempt').execute()).map(attemptOf);
  const latest = latestAttemptOf(delivery);
  return latest ? [...earlier, latest] : earlier;
}

/** The body a delivery sends: stored, or rebuilt from its event. */
export async function deliveryBody(app: Pick<Target, 'database'>, row: WebhookDeliveryRow): Promise<string> {
  const [withBody] = await withPayloads(app.database.db, [row]);
  return withBody!.payload;
}
