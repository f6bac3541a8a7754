import type { ProviderInbound } from '../providers/provider.ts';
import type { ReportDeps } from './deps.ts';
import { applyTemplateCategory, applyTemplateReview } from './templateReview.ts';
import { createMessageReports } from './messageReports.ts';
import { applyVolumeTier } from '../costs/volumeTiers.ts';

/** Every provider report — template reviews and category changes, volume tiers, message statuses — enters svc here. */
export function createProviderInbound(deps: ReportDeps): ProviderInbound {
  const applyMessageReport = createMessageReports(deps);
  return (report) => {
    switch (report.kind) {
      case 'template':
        return applyTemplateReview(deps, report);
      case 'template_category':
        return applyTemplateCategory(deps, report);
      case 'volume_tier':
        return applyVolumeTier(deps, report);
      case 'message':
        return applyMessageReport(report);
    }
  };
}
