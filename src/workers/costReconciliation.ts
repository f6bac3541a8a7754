import { randomUUID } from 'node:crypto';
import { Counter } from 'prom-client';
import { compareCosts } from '../costs/reconcile.ts';
import { accountsToReconcile, saveReconciliation } from '../db/costReconciliations.ts';
import { finishJobLease, jobNextRunAt, takeJobLease } from '../db/jobLeases.ts';
import { DAY_MS, readCosts } from '../db/messageCosts.ts';
import { findProject } from '../db/projects.ts';
import { fromMicros } from '../domain/rateCard.ts';
import { providerCredentialsOf } from '../projectSecrets.ts';
import type { WorkerDeps } from './deps.ts';
import type { Job } from './loop.ts';

// Compares, every SVC_COST_RECONCILE_INTERVAL, each WhatsApp Business Account's last three whole
// UTC days of costs as svc counted them with Meta's pricing_analytics, and records the outcome
// per day (GET /v1/analytics/cost/reconciliation), counts it (svc_cost_reconciliation_days_total)
// and logs each day that differs. One worker process runs it per interval, whichever takes the
// lease (job_leases) when it falls due; a process that dies mid-run leaves it to another once
// its lease runs out (two runs of the same day write the same row).

/** Days looked back: Meta's analytics settle within a day or two. */
const DAYS = 3;
const PAGE = 50;
const JOB = 'cost_reconciliation';
/** Long enough for a run over every account (one Meta call each); a dead holder's run is taken over after it. */
const LEASE_MS = 30 * 60_000;
/** A process that did not get the run looks again no sooner than this. */
const RECHECK_MS = 60_000;

export function createCostReconciliationJob(
  deps: Pick<WorkerDeps, 'config' | 'database' | 'provider' | 'encryptionKey' | 'logger' | 'metrics'>,
): Job | undefined {
  const { provider, config } = deps;
  const intervalMs = config.cost.reconcileIntervalMs;
  if (provider.pricingAnalytics === undefined || intervalMs === 0) return undefined;
  const fetchMeta = provider.pricingAnalytics.bind(provider);
  const { db } = deps.database;
  const days = new Counter({
    name: 'svc_cost_reconciliation_days_total',
    help: 'Days of a WABA compared with Meta’s pricing_analytics, by result (match, differ, unavailable)',
    labelNames: ['result'],
    registers: [deps.metrics],
  });
  const holder = randomUUID();
  let checkAt = 0;

  async function reconcile(projectId: string, businessAccountId: string, accountCurrency: string | null, now: number): Promise<number> {
    const project = await findProject(db, projectId);
    const credentials = project ? providerCredentialsOf(project, deps.encryptionKey) : undefined;
    if (!credentials) return 0;
    const to = now - (now % DAY_MS);
    const from = to - DAYS * DAY_MS;
    const meta = await fetchMeta({ credentials, businessAccountId, from, to });
    if (meta.kind !== 'ok') {
      days.inc({ result: 'unavailable' });
      deps.logger.warn({ projectId, error: meta.error }, 'Meta’s pricing_analytics could not be read; costs not reconciled');
      return 0;
    }
    const svc = await readCosts(db, projectId, { from, to, by: ['day', 'category', 'country'] });
    // Meta's cost is in the WABA's currency; svc's counters of that currency are compared with it.
    const currency = accountCurrency ?? config.cost.currency;
    for (const day of compareCosts({ from, to }, meta.points, svc, currency)) {
      await saveReconciliation(db, {
        project_id: projectId,
        day: day.day,
        checked_at: now,
        currency,
        meta_messages: day.metaMessages,
        meta_amount_micros: day.metaAmountMicros,
        svc_messages: day.svcMessages,
        svc_amount_micros: day.svcAmountMicros,
        differences: JSON.stringify(day.differences),
      });
      days.inc({ result: day.differences.length === 0 ? 'match' : 'differ' });
      if (day.differences.length > 0) {
        deps.logger.warn(
          {
            projectId,
            day: new Date(day.day).toISOString().slice(0, 10),
            meta: { messages: day.metaMessages, amount: fromMicros(day.metaAmountMicros) },
            svc: { messages: day.svcMessages, amount: fromMicros(day.svcAmountMicros) },
            differences: day.differences.length,
          },
          'svc’s cost totals differ from Meta’s pricing_analytics',
        );
      }
    }
    return DAYS;
  }

  return {
    name: 'cost-reconciliation',
    async runOnce(now) {
      if (now < checkAt) return { handled: 0, nextDueAt: checkAt };
      if (!(await takeJobLease(db, JOB, holder, now, LEASE_MS))) {
        checkAt = Math.max(now + RECHECK_MS, (await jobNextRunAt(db, JOB)) ?? now + intervalMs);
        return { handled: 0, nextDueAt: checkAt };
      }
      let handled = 0;
      try {
        for (let after = ''; ; ) {
          const accounts = await accountsToReconcile(db, after, PAGE);
          for (const account of accounts) {
            try {
              handled += await reconcile(account.project_id, account.business_account_id, account.currency, now);
            } catch (error) {
              deps.logger.warn({ err: error, projectId: account.project_id }, 'cost reconciliation failed; will retry next run');
            }
          }
          if (accounts.length < PAGE) break;
          after = accounts.at(-1)!.project_id;
        }
      } finally {
        await finishJobLease(db, JOB, holder, now + intervalMs);
      }
      checkAt = now + intervalMs;
      deps.logger.debug({ days: handled }, 'costs reconciled with Meta’s pricing_analytics');
      // Nothing is claimed: the loop sleeps until the next run.
      return { handled: 0, nextDueAt: checkAt };
    },
  };
}
