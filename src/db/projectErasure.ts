import { lockActiveApiKeys } from './apiKeys.ts';
import type { Db } from './database.ts';
import { dialectOf } from './prepared.ts';

export interface ErasedCounts {
  apiKeys: number;
  providerCredentials: number;
  templates: number;
  messages: number;
  messageEvents: number;
  idempotencyKeys: number;
  webhookDeliveries: number;
  webhookAttempts: number;
}

const rows = (result: { numDeletedRows: bigint }) => Number(result.numDeletedRows);

/**
 * Erases a project and everything it owns, in the caller's transaction, so it all stops at once,
 * at the commit. The project's keys are locked first, under the lock every key change takes: a
 * request of the project that writes meanwhile waits for us and then finds its key gone (401).
 * Then its templates, its messages with their events, idempotency and sandbox records, its
 * webhook deliveries with their attempts, and last its keys and the project itself, provider
 * credentials and callback URL with it. Returns 'requester_revoked' when the requesting key is
 * no longer active.
 */
export async function eraseProject(
  db: Db,
  projectId: string,
  requesterKeyId: string,
): Promise<ErasedCounts | 'requester_revoked'> {
  const dialect = dialectOf(db);
  const active = await lockActiveApiKeys(db, projectId);
  if (!active.includes(requesterKeyId)) return 'requester_revoked';

  await db.deleteFrom('template_status_events').where('project_id', '=', projectId).execute();
  const templates = await db.deleteFrom('templates').where('project_id', '=', projectId).executeTakeFirst();

  const messageIds = db.selectFrom('messages').select('id').where('project_id', '=', projectId);
  // The messages first: a submission being recorded for one of them (the sandbox share-locks it)
  // commits before this goes on, so its records are erased below too.
  if (dialect === 'postgres') await messageIds.orderBy('id').forUpdate().execute(); // in id order, as the workers lock them
  await db.deleteFrom('sandbox_reports').where('message_id', 'in', messageIds).execute();
  await db.deleteFrom('sandbox_submissions').where('message_id', 'in', messageIds).execute();
  const idempotencyKeys = await db.deleteFrom('idempotency_keys').where('project_id', '=', projectId).executeTakeFirst();
  // A message's QUEUED event is its own row (only messages of older versions have it stored too):
  // the events erased are the other ones, plus one QUEUED per message.
  await db.deleteFrom('message_events').where('project_id', '=', projectId).where('status', '=', 'QUEUED').execute();
  const laterEvents = await db.deleteFrom('message_events').where('project_id', '=', projectId).executeTakeFirst();
  // Replies go with their messages (no foreign key: see migration 0016_replies_opt_outs).
  await db.deleteFrom('message_replies').where('project_id', '=', projectId).execute();
  // The recipients' joined identities (phone numbers, BSUIDs) are personal data too.
  await db.deleteFrom('recipient_links').where('project_id', '=', projectId).execute();
  const messages = await db.deleteFrom('messages').where('project_id', '=', projectId).executeTakeFirst();

  const deliveryIds = db.selectFrom('webhook_deliveries').select('id').where('project_id', '=', projectId);
  // Locked in id order, as the webhook recorder locks the deliveries whose attempts it records
  // (recordWebhookAttempts): one waits for the other, and neither for a cycle.
  if (dialect === 'postgres') await deliveryIds.orderBy('id').forUpdate().execute();
  const webhookAttempts = await db.deleteFrom('webhook_attempts').where('delivery_id', 'in', deliveryIds).executeTakeFirst();
  // Each delivery row holds its latest attempt (migration 0023): erased with it, counted as one.
  const latestAttempts = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('project_id', '=', projectId)
    .where('last_attempt_at', 'is not', null)
    .executeTakeFirst();
  const webhookDeliveries = await db.deleteFrom('webhook_deliveries').where('project_id', '=', projectId).executeTakeFirst();

  const apiKeys = await db.deleteFrom('api_keys').where('project_id', '=', projectId).executeTakeFirst();
  const project = await db
    .deleteFrom('projects')
    .where('id', '=', projectId)
    .returning('provider_access_token_enc')
    .executeTakeFirst();
  return {
    apiKeys: rows(apiKeys),
    providerCredentials: project?.provider_access_token_enc ? 1 : 0,
    templates: rows(templates),
    messages: rows(messages),
    messageEvents: rows(laterEvents) + rows(messages),
    idempotencyKeys: rows(idempotencyKeys),
    webhookDeliveries: rows(webhookDeliveries),
    webhookAttempts: rows(webhookAttempts) + Number(latestAttempts?.n ?? 0),
  };
}
