import type { Db } from '../db/database.ts';
import type { AppliedTemplateStatus } from '../db/templates.ts';
import { newId } from '../domain/ids.ts';
import { templateEventOf, templateWebhookPayload } from '../domain/webhookPayload.ts';
import type { Notifier } from '../workers/notifier.ts';
import { enqueueWebhookEvents } from './enqueue.ts';

/**
 * Enqueues the event of a template status change, in the transaction that wrote it (so no
 * change is recorded without its event): template.approved or template.rejected when a review
 * settles it, or the provider's new status of it (template.paused, template.disabled…). A change
 * of reason alone, or a provider status no event names, sends nothing. Returns true if a delivery
 * was created (the caller wakes the 'webhooks' channel after commit).
 */
export async function enqueueTemplateEvent(
  trx: Db,
  notifier: Notifier,
  applied: AppliedTemplateStatus,
  now: number,
): Promise<boolean> {
  const providerChanged = applied.providerStatus !== applied.previousProviderStatus;
  const event = templateEventOf({
    reviewed: applied.reviewed,
    providerStatus: providerChanged ? applied.providerStatus : undefined,
  });
  if (event === undefined) return false;
  const { template } = applied;
  const eventId = applied.eventId ?? newId('tse', now);
  return enqueueWebhookEvents(
    trx,
    notifier,
    [
      {
        projectId: template.project_id,
        eventId,
        event,
        messageId: null,
        templateId: template.id,
        payload: templateWebhookPayload({
          event,
          eventId,
          templateId: template.id,
          name: template.name,
          language: template.language,
          status: template.status,
          providerStatus: applied.providerStatus ?? null,
          reason: applied.reason,
          occurredAt: applied.occurredAt,
        }),
      },
    ],
    now,
  );
}
