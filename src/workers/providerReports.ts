import type { Logger } from 'pino';
import type { CostPricing } from '../costs/charges.ts';
import type { Database } from '../db/database.ts';
import type { ProviderInbound } from '../providers/provider.ts';
import type { Notifier } from './notifier.ts';
import { applyTemplateCategory, applyTemplateReview } from './templateReview.ts';
import { createMessageReports } from './messageReports.ts';

export interface ReportDeps {
  database: Database;
  notifier: Notifier;
  logger: Logger;
  /** Prices delivered messages by the rate card; absent: costs are not recorded. */
  costs?: CostPricing;
}

/** Every provider report — template reviews and category changes, message statuses — enters svc here. */
export function createProviderInbound(deps: ReportDeps): ProviderInbound {
  const applyMessageReport = createMessageReports(deps);
  return (report) => {
    switch (report.kind) {
      case 'template':
        return applyTemplateReview(deps, report);
      case 'template_category':
        return applyTemplateCategory(deps, report);
      case 'message':
        return applyMessageReport(report);
    }
  };
}
