import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import { claimDue, nextDueAt } from '../../db/claims.ts';
import type { Database, Db } from '../../db/database.ts';
import { GroupCommitter } from '../../db/groupCommit.ts';
import { countSandboxSubmissions, deleteSandboxReports, insertSandboxRecords, type SandboxRecord } from '../../db/sandboxRecords.ts';
import type { MessageStatus, SandboxReportsTable } from '../../db/tables.ts';
import { newId } from '../../domain/ids.ts';
import { isBusinessScopedUserId } from '../../domain/messageRequest.ts';
import { templatePricing } from '../../domain/pricing.ts';
import { WorkerLoop } from '../../workers/loop.ts';
import type { Notifier } from '../../workers/notifier.ts';
import type {
  AccountCheck,
  AccountQuery,
  MessageSubmission,
  Provider,
  ProviderError,
  ProviderInbound,
  SendOutcome,
  TemplateCheck,
  TemplateDeletion,
  TemplateSubmission,
} from '../provider.ts';
import { AUTHENTICATION_TO_BSUID, MAGIC, TEMPORARILY_UNAVAILABLE, UNDELIVERABLE } from './magicRecipients.ts';
import { sandboxReview } from './reviewRules.ts';
import { whatsappParameterRule } from '../whatsapp/parameterRule.ts';
import { whatsappErrorClass } from '../whatsapp/errorClasses.ts';

const REPORT_BATCH = 200;
// Provider message ids: a random prefix per process and a counter, unique without a random draw
// per message (that draw was 6 % of a busy process's CPU).
const PROVIDER_ID_PREFIX = `wamid.sandbox.${randomBytes(8).toString('hex')}`;
let providerIdCounter = 0;
// Making a report takes milliseconds; a short lease lets a restarted process take over quickly.
const REPORT_LEASE_MS = 5_000;

interface PlannedReport {
  status: Exclude<MessageStatus, 'QUEUED' | 'SENT'>;
  afterMs: number;
  error?: ProviderError;
}

/**
 * A simulated messaging network that reaches no network. It keeps its own records in the
 * database — every submission it received and every status report it has yet to make — so its
 * behaviour survives a restart like a real provider's would.
 */
export class SandboxProvider implements Provider {
  readonly name = 'sandbox';
  /** A submission is a local database write, committed with others (group commit). */
  readonly parameterRule = whatsappParameterRule;
  readonly errorClassOf = whatsappErrorClass;
  readonly submissionTimeoutMs = 2000;
  readonly #settings: Config['sandbox'];
  readonly #database: Database;
  readonly #notifier: Notifier;
  readonly #logger: Logger;
  readonly #records: GroupCommitter<SandboxRecord, void>;
  #reports: WorkerLoop | undefined;

  constructor(settings: Config['sandbox'], database: Database, notifier: Notifier, logger: Logger) {
    this.#settings = settings;
    this.#database = database;
    this.#notifier = notifier;
    this.#logger = logger;
    // Not synced on their own (SQLite): the dispatcher's synced commit of the outcome follows, and
    // the WAL is flushed in order, so that sync puts these records on disk too.
    this.#records = new GroupCommitter(database, (trx, items) => this.#commitRecords(trx, items), { durable: false });
  }

  /**
   * Any credentials are accepted (CONTRACT §7); the account is described plausibly. Its throughput
   * is left unset, so SVC_PROVIDER_MAX_MPS paces the sandbox as before.
   */
  async checkAccount(query: AccountQuery): Promise<AccountCheck> {
    const phoneNumberId = query.credentials.sender;
    const digits = BigInt('0x' + createHash('sha256').update(phoneNumberId).digest('hex').slice(0, 12)).toString().padStart(15, '1');
    return {
      kind: 'checked',
      account: {
        businessAccountId: query.businessAccountId ?? digits.slice(0, 15),
        displayPhoneNumber: `+1 555-${digits.slice(-7, -4)}-${digits.slice(-4)}`,
        verifiedName: 'Sandbox Business',
        qualityRating: 'GREEN',
        messagesPerSecond: null,
        webhooksSubscribed: true,
        problem: null,
      },
    };
  }

  async deleteTemplate(_template: TemplateSubmission): Promise<TemplateDeletion> {
    return { kind: 'deleted' };
  }

  async submitTemplate(_template: TemplateSubmission) {
    return { providerTemplateId: null, checkAfterMs: this.#settings.reviewDelayMs };
  }

  async checkTemplate(template: TemplateSubmission): Promise<TemplateCheck> {
    return sandboxReview(template);
  }

  async sendMessage(message: MessageSubmission): Promise<SendOutcome> {
    const now = Date.now();
    const earlier = message.to === MAGIC.flakyTwice ? await this.#submissionsOf(message.messageId) : 0;
    const outcome = this.#decide(message.to, earlier, message.category, message.productPolicy !== undefined);
    const providerMessageId = outcome.kind === 'accepted' ? outcome.providerMessageId : null;
    const planned = providerMessageId === null ? [] : this.#plan(message.to);
    // Like a real provider, the sandbox has taken the message once it answers: its records are
    // committed first (with the dispatcher's other submissions: one fsync for many).
    await this.#records.submit({
      submission: {
        id: newId('att', now),
        message_id: message.messageId,
        provider_message_id: providerMessageId,
        recipient: message.to,
        outcome: outcome.kind,
        submitted_at: now,
      },
      reports: planned.map((report) => ({
        id: newId('att', now),
        message_id: message.messageId,
        provider_message_id: providerMessageId!,
        status: report.status,
        error: report.error ? JSON.stringify(report.error) : null,
        due_at: now + report.afterMs,
        lease_expires_at: null,
      })),
    });
    if (planned.length > 0) this.#notifier.wakeLocal('sandbox');
    return outcome;
  }

  async #submissionsOf(messageId: string): Promise<number> {
    return countSandboxSubmissions(this.#database.db, messageId);
  }

  async #commitRecords(trx: Db, all: SandboxRecord[]): Promise<void[]> {
    await insertSandboxRecords(trx, all, await this.#notifier.databaseChannel('sandbox'));
    return all.map(() => undefined);
  }

  start(inbound: ProviderInbound): void {
    const { db } = this.#database;
    this.#reports = new WorkerLoop(
      {
        name: 'sandbox-reports',
        runOnce: async (now) => {
          const due = await claimDue(db, 'sandbox_reports', {
            now,
            limit: REPORT_BATCH,
            leaseMs: REPORT_LEASE_MS,
          });
          // Reports about different messages are applied side by side (a real provider's webhooks
          // arrive in parallel too); one message's reports in the order they fall due.
          const byMessage = new Map<string, SandboxReportsTable[]>();
          for (const report of due.toSorted((a, b) => a.due_at - b.due_at)) {
            byMessage.set(report.message_id, [...(byMessage.get(report.message_id) ?? []), report]);
          }
          // All at once: the inbound side group-commits reports that arrive together.
          await Promise.all(
            [...byMessage.values()].map(async (reports) => {
              for (const report of reports) {
                // Like WhatsApp's biz_opaque_callback_data, the report names our message id too.
                await inbound({
                  kind: 'message',
                  messageId: report.message_id,
                  providerMessageId: report.provider_message_id,
                  status: report.status as Exclude<MessageStatus, 'QUEUED'>,
                  occurredAt: report.due_at,
                  ...(report.error !== null && { error: JSON.parse(report.error) as ProviderError }),
                });
              }
            }),
          );
          // Made (or about a message that no longer exists): either way, done.
          if (due.length > 0) {
            await deleteSandboxReports(
              db,
              due.map((report) => report.id),
            );
          }
          return { handled: due.length, nextDueAt: await nextDueAt(db, 'sandbox_reports') };
        },
      },
      this.#logger,
    );
    this.#notifier.on('sandbox', () => this.#reports?.wake());
    this.#reports.start();
  }

  async stop(): Promise<void> {
    await this.#reports?.stop();
  }

  #decide(to: string, earlierSubmissions: number, category: string, marketingMessages: boolean): SendOutcome {
    if (to === MAGIC.alwaysTransient || (to === MAGIC.flakyTwice && earlierSubmissions < 2)) {
      return { kind: 'transient', error: TEMPORARILY_UNAVAILABLE };
    }
    // As Meta: authentication templates (one-tap, zero-tap, copy code) go to phone numbers only.
    if (category === 'AUTHENTICATION' && isBusinessScopedUserId(to)) return { kind: 'permanent', error: AUTHENTICATION_TO_BSUID };
    return {
      kind: 'accepted',
      providerMessageId: `${PROVIDER_ID_PREFIX}${(providerIdCounter++).toString(16).padStart(8, '0')}`,
      // As Meta's `sent` status says it: a template message outside a service window, at its category's
      // rate (the Marketing Messages API's own: marketing_lite, as if the business were onboarded).
      pricing: templatePricing(marketingMessages ? 'marketing_lite' : category),
      route: marketingMessages ? 'marketing_messages' : 'cloud_api',
    };
  }

  #plan(to: string): PlannedReport[] {
    const { deliveryDelayMs, readDelayMs } = this.#settings;
    if (to === MAGIC.undeliverable) return [{ status: 'FAILED', afterMs: deliveryDelayMs, error: UNDELIVERABLE }];
    if (to === MAGIC.neverRead) return [{ status: 'DELIVERED', afterMs: deliveryDelayMs }];
    return [
      { status: 'DELIVERED', afterMs: deliveryDelayMs },
      { status: 'READ', afterMs: deliveryDelayMs + readDelayMs },
    ];
  }
}
