import { Counter } from 'prom-client';
import { compareCosts } from '../costs/reconcile.ts';
import { accountsToReconcile, saveReconciliation } from '../db/costReconciliations.ts';
import { DAY_MS, readCosts } from '../db/messageCosts.ts';
import { findProject } from '../db/projects.ts';
import { fromMicros } from '../domain/rateCard.ts';
import { providerCredentialsOf } from '../projectSecrets.ts';
import type { WorkerDeps } from './deps.ts';
import type { Job } from './loop.ts';

// Compares, every SVC_COST_RECONCILE_INTERVAL, each WhatsApp Business Account's last three whole
// UTC days of costs as svc counted them with Meta's pricing_analytics, and records the outcome
// per day (GET /v1/analytics/cost/reconciliation), counts it (svc_cost_reconciliation_days_total)
// and logs each day that differs. Every worker process runs it; two runs of the same day write
// the same row.

/** Days looked back: Meta's analytics settle within a day or two. */
const DAYS = 3;
const PAGE = 50;

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
  let nextRunAt = 0;

  async function reconcile(projectId: string, businessAccountId: string, now: number): Promise<number> {
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
    const currency = config.cost.currency;
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
      if (now < nextRunAt) return { handled: 0, nextDueAt: nextRunAt };
      let handled = 0;
      for (let after = ''; ; ) {
        const accounts = await accountsToReconcile(db, after, PAGE);
        for (const account of accounts) {
          try {
            handled += await reconcile(account.project_id, account.business_account_id, now);
          } catch (error) {
            deps.logger.warn({ err: error, projectId: account.project_id }, 'cost reconciliation failed; will retry next run');
          }
        }
        if (accounts.length < PAGE) break;
        after = accounts.at(-1)!.project_id;
      }
      nextRunAt = now + intervalMs;
      deps.logger.debug({ days: handled }, 'costs reconciled with Meta’s pricing_analytics');
      // Nothing is claimed: the loop sleeps until the next run.
      return { handled: 0, nextDueAt: nextRunAt };
    },
  };
}
