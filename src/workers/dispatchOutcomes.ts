import { type CostPricing, chargeUpdate } from '../costs/charges.ts';
import { pricingAccountOfProjectAt } from '../db/volumeTiers.ts';
import type { Database, Db } from '../db/database.ts';
import { addCosts, type CostDelta } from '../db/messageCosts.ts';
import { GroupCommitter } from '../db/groupCommit.ts';
import { lockMessages, type MessageRow } from '../db/messages.ts';
import { withJitter } from '../domain/durations.ts';
import { transitionsFor } from '../domain/messageStatus.ts';
import type { SendOutcome } from '../providers/provider.ts';
import { type MessageUpdate, recordStatusChanges, type StatusChange, type StatusRecording } from './statusChanges.ts';

const JITTER = 0.1;

interface Submitted {
  message: MessageRow;
  outcome: SendOutcome;
}

/**
 * Records what the provider answered to each submission as soon as it answers, committed with
 * the other answers that arrive meanwhile (group commit: one transaction and one fsync for many):
 * SENT with its event and webhook, the next attempt after a transient failure, or FAILED.
 */
export class OutcomeRecorder {
  readonly #recording: StatusRecording;
  readonly #retryScheduleMs: readonly number[];
  readonly #committer: GroupCommitter<Submitted, boolean>;
  readonly #costs: CostPricing | undefined;

  constructor(database: Database, recording: StatusRecording, retryScheduleMs: readonly number[], costs?: CostPricing) {
    this.#recording = recording;
    this.#costs = costs;
    this.#retryScheduleMs = retryScheduleMs;
    // Synced: an outcome lost with the machine would be a message sent twice to a person, and the
    // duplicate window must stay "between the provider's acceptance and our commit".
    this.#committer = new GroupCommitter(database, (trx, items) => this.#commit(trx, items), { maxBatch: 500 });
  }

  async record(message: MessageRow, outcome: SendOutcome): Promise<void> {
    const webhooks = await this.#committer.submit({ message, outcome });
    if (webhooks) this.#recording.notifier.wakeLocal('webhooks');
  }

  async #commit(trx: Db, items: Submitted[]): Promise<boolean[]> {
    const now = Date.now();
    // Re-read: a provider report may have moved a message while it was being submitted.
    const current = await lockMessages(
      trx,
      items.map((item) => item.message.id),
    );
    const changes: StatusChange[] = [];
    const updates: MessageUpdate[] = [];
    const costs: CostDelta[] = [];
    for (const { message: submitted, outcome } of items) {
      const message = current.get(submitted.id);
      if (!message) continue;
      const attempts = message.attempts + 1;
      const pricing = outcome.kind === 'accepted' && outcome.pricing ? { pricing: JSON.stringify(outcome.pricing) } : {};
      const route = outcome.kind === 'accepted' && outcome.route ? { send_route: outcome.route } : {};
      if (outcome.kind === 'accepted' && outcome.held && message.status === 'QUEUED') {
        // Taken but held back by the provider: QUEUED (not sent yet) until its report releases or
        // drops it; never the dispatcher's to send again.
        updates.push({
          id: message.id,
          changes: {
            attempts,
            provider_message_id: outcome.providerMessageId,
            held_at: now,
            ...pricing,
            ...route,
            due_at: null,
            lease_expires_at: null,
            updated_at: now,
          },
        });
        this.#recording.counters?.held.inc({ event: 'held' });
        continue;
      }
      if (outcome.kind === 'accepted') {
        const transitions = transitionsFor(message.status, 'SENT');
        if (transitions.length > 0) {
          changes.push({
            message,
            transitions,
            occurredAt: now,
            providerMessageId: outcome.providerMessageId,
            alsoSet: { attempts, ...pricing, ...route },
          });
        } else {
          // Its delivery was reported first (the sandbox's report can overtake this commit): the
          // pricing that comes now makes it charged (costs/charges.ts, whichever comes last).
          const account =
            this.#costs && pricing.pricing !== undefined && message.delivered_at !== null
              ? await pricingAccountOfProjectAt(trx, message.project_id, message.delivered_at)
              : undefined;
          const charge =
            this.#costs && pricing.pricing !== undefined
              ? chargeUpdate(this.#costs, message, { pricing: pricing.pricing, deliveredAt: message.delivered_at, ...account })
              : undefined;
          if (charge) costs.push(...charge.deltas);
          updates.push({
            id: message.id,
            changes: {
              attempts,
              provider_message_id: message.provider_message_id ?? outcome.providerMessageId,
              ...pricing,
              ...route,
              ...(charge?.cost !== undefined && { cost: charge.cost }),
            },
          });
        }
        continue;
      }
      if (message.status !== 'QUEUED') continue;
      if (outcome.kind === 'transient' && attempts <= this.#retryScheduleMs.length) {
        const wait = Math.max(withJitter(this.#retryScheduleMs[attempts - 1]!, JITTER), outcome.retryAfterMs ?? 0);
        updates.push({
          id: message.id,
          changes: { attempts, due_at: now + wait, lease_expires_at: null, updated_at: now },
        });
        continue;
      }
      changes.push({ message, transitions: ['FAILED'], occurredAt: now, error: outcome.error, alsoSet: { attempts } });
    }
    const webhooks = await recordStatusChanges(trx, this.#recording, changes, now, updates);
    await addCosts(trx, costs);
    return items.map(() => webhooks);
  }
}
