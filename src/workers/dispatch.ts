import { claimDue, nextDueAt } from '../db/claims.ts';
import { lockMessages, type MessageRow, updateMessage } from '../db/messages.ts';
import { withJitter } from '../domain/durations.ts';
import { transitionsFor } from '../domain/messageStatus.ts';
import { orderedValues } from '../domain/messageRequest.ts';
import { providerCredentialsOf } from '../projectSecrets.ts';
import type { ProviderCredentials, ProviderError, SendOutcome } from '../providers/provider.ts';
import type { WorkerDeps } from './index.ts';
import type { Job } from './loop.ts';
import type { SendRateGate } from './sendRate.ts';
import { recordStatusChanges } from './statusChanges.ts';

const BATCH = 100;
const SEND_CONCURRENCY = 32;
const LEASE_MARGIN_MS = 5000;
const JITTER = 0.1;

const NOT_CONFIGURED: ProviderError = {
  code: 'provider_not_configured',
  title: 'Provider credentials missing',
  message: 'The project has no provider credentials; save them to send.',
};

type Outcome = SendOutcome | { kind: 'deferred' };

const INTERNAL: ProviderError = {
  code: 'svc_submission_error',
  title: 'Submission failed',
  message: 'The message could not be submitted to the provider; it will be retried.',
};

async function mapConcurrently<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  });
  await Promise.all(runners);
  return results;
}

/**
 * The dispatcher: claims due QUEUED messages, paces them per phone number, submits them to the
 * provider, and records every outcome of the batch in one transaction — SENT (with its event and
 * webhook), the next attempt after a transient failure, or FAILED.
 */
export function createDispatchJob(deps: WorkerDeps, rateGate: SendRateGate): Job {
  const { database, provider, notifier, config, logger } = deps;
  const { db, dialect } = database;
  const schedule = config.sendRetryScheduleMs;
  // Longer than a whole batch of submissions may take, so a live worker never loses its claim,
  // and no longer, so a crashed worker's claims are taken over soon.
  const leaseMs = provider.submissionTimeoutMs * Math.ceil(BATCH / SEND_CONCURRENCY) + LEASE_MARGIN_MS;

  async function credentialsByProject(messages: MessageRow[]): Promise<Map<string, ProviderCredentials>> {
    const ids = [...new Set(messages.map((message) => message.project_id))];
    const projects = await db
      .selectFrom('projects')
      .select(['id', 'provider_phone_number_id', 'provider_access_token_enc'])
      .where('id', 'in', ids)
      .execute();
    const credentials = new Map<string, ProviderCredentials>();
    for (const project of projects) {
      const found = providerCredentialsOf(project, deps.encryptionKey);
      if (found) credentials.set(project.id, found);
    }
    return credentials;
  }

  async function submit(message: MessageRow, credentials: ProviderCredentials | undefined): Promise<SendOutcome> {
    if (!credentials) return { kind: 'transient', error: NOT_CONFIGURED };
    try {
      return await provider.sendMessage({
        messageId: message.id,
        projectId: message.project_id,
        to: message.recipient,
        templateName: message.template_name,
        language: message.language,
        bodyParameters: orderedValues(JSON.parse(message.variables)),
        headerParameters: orderedValues(message.header_variables ? JSON.parse(message.header_variables) : undefined),
        credentials,
      });
    } catch (error) {
      logger.warn({ err: error, messageId: message.id }, 'provider submission threw');
      return { kind: 'transient', error: INTERNAL };
    }
  }

  return {
    name: 'dispatch',
    async runOnce(now) {
      const claimed = await claimDue(db, dialect, 'messages', { now, limit: BATCH, leaseMs });
      if (claimed.length === 0) return { handled: 0, nextDueAt: await nextDueAt(db, 'messages') };
      const credentials = await credentialsByProject(claimed);

      // Pace per sending number: what exceeds this second's budget waits for the next.
      const byNumber = new Map<string, MessageRow[]>();
      for (const message of claimed) {
        const number = credentials.get(message.project_id)?.phoneNumberId ?? '';
        byNumber.set(number, [...(byNumber.get(number) ?? []), message]);
      }
      const toSend: { message: MessageRow; sendBy: number }[] = [];
      const deferred: { ids: string[]; until: number }[] = [];
      for (const [number, messages] of byNumber) {
        if (number === '') {
          toSend.push(...messages.map((message) => ({ message, sendBy: Number.POSITIVE_INFINITY })));
          continue;
        }
        const { granted, windowEnd } = await rateGate.reserve(number, messages.length, Date.now());
        toSend.push(...messages.slice(0, granted).map((message) => ({ message, sendBy: windowEnd })));
        if (granted < messages.length) {
          deferred.push({ ids: messages.slice(granted).map((message) => message.id), until: windowEnd });
        }
      }

      const outcomes = await mapConcurrently(toSend, SEND_CONCURRENCY, async ({ message, sendBy }): Promise<Outcome> => {
        // A reservation is good for its window only: past it, the send waits for the next one.
        if (Date.now() >= sendBy) return { kind: 'deferred' };
        return submit(message, credentials.get(message.project_id));
      });

      const recordedAt = Date.now();
      const webhooks = await db.transaction().execute(async (trx) => {
        let enqueued = false;
        for (const { ids, until } of deferred) {
          await trx
            .updateTable('messages')
            .set({ due_at: until, lease_expires_at: null })
            .where('id', 'in', ids)
            .where('status', '=', 'QUEUED')
            .execute();
        }
        // Re-read: a provider report may have moved a message while it was being submitted.
        const current = await lockMessages(
          trx,
          dialect,
          toSend.map(({ message }) => message.id),
        );
        for (const [index, { message: sent }] of toSend.entries()) {
          const outcome = outcomes[index]!;
          const message = current.get(sent.id);
          if (!message) continue;
          if (outcome.kind === 'deferred') {
            if (message.status === 'QUEUED') {
              await updateMessage(trx, message.id, { due_at: recordedAt, lease_expires_at: null });
            }
            continue;
          }
          const attempts = message.attempts + 1;
          if (outcome.kind === 'accepted') {
            const transitions = transitionsFor(message.status, 'SENT');
            if (transitions.length > 0) {
              enqueued =
                (await recordStatusChanges(
                  trx,
                  dialect,
                  notifier,
                  {
                    message,
                    transitions,
                    occurredAt: recordedAt,
                    providerMessageId: outcome.providerMessageId,
                    alsoSet: { attempts },
                  },
                  recordedAt,
                )) || enqueued;
            } else {
              await updateMessage(trx, message.id, {
                attempts,
                provider_message_id: message.provider_message_id ?? outcome.providerMessageId,
              });
            }
            continue;
          }
          if (message.status !== 'QUEUED') continue;
          const retriesLeft = attempts <= schedule.length;
          if (outcome.kind === 'transient' && retriesLeft) {
            const wait = Math.max(withJitter(schedule[attempts - 1]!, JITTER), outcome.retryAfterMs ?? 0);
            await updateMessage(trx, message.id, {
              attempts,
              due_at: recordedAt + wait,
              lease_expires_at: null,
              updated_at: recordedAt,
            });
            continue;
          }
          enqueued =
            (await recordStatusChanges(
              trx,
              dialect,
              notifier,
              { message, transitions: ['FAILED'], occurredAt: recordedAt, error: outcome.error, alsoSet: { attempts } },
              recordedAt,
            )) || enqueued;
        }
        return enqueued;
      });
      if (webhooks) notifier.wakeLocal('webhooks');
      return { handled: claimed.length };
    },
  };
}
