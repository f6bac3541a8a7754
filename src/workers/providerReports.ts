import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import type { ProviderInbound } from '../providers/provider.ts';
import type { Notifier } from './notifier.ts';
import { applyTemplateReview } from './templateReview.ts';
import { applyMessageReport } from './messageReports.ts';

export interface ReportDeps {
  database: Database;
  notifier: Notifier;
  logger: Logger;
}

/** Every provider report — template reviews, message statuses — enters svc here. */
export function createProviderInbound(deps: ReportDeps): ProviderInbound {
  return (report) => (report.kind === 'template' ? applyTemplateReview(deps, report) : applyMessageReport(deps, report));
}
