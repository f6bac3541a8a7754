import type { Database } from '../db/database.ts';
import { projectsSendingFrom } from '../db/projects.ts';
import { makeBusinessAccountDue } from '../db/providerAccounts.ts';
import { findTemplatesForProviderReport } from '../db/templates.ts';
import type { ProviderInbound, ProviderInbox } from '../providers/provider.ts';
import type { Notifier } from '../workers/notifier.ts';
import { recordInboundMessage, recordMarketingPreference, recordUserIdChange } from './recordReply.ts';

// svc's side of a provider's inbound routes (providers/provider.ts ProviderInbox): the lookups
// and records a provider's webhook needs, so no provider touches svc's tables.

export function createProviderInbox(deps: { database: Database; notifier: Notifier; inbound: ProviderInbound }): ProviderInbox {
  const { db } = deps.database;
  const replies = { database: deps.database, notifier: deps.notifier };
  return {
    report: deps.inbound,
    async sendersHere(senders) {
      return new Set((await projectsSendingFrom(db, [...new Set(senders)])).keys());
    },
    async templatesNamed(providerTemplateId, businessAccountId) {
      return (await findTemplatesForProviderReport(db, providerTemplateId, businessAccountId)).map((template) => template.id);
    },
    async accountChanged(businessAccountIds) {
      // Checked again at once by whichever worker process listens; the dispatcher's pace follows.
      let due = 0;
      for (const businessAccountId of new Set(businessAccountIds)) due += await makeBusinessAccountDue(db, businessAccountId, Date.now());
      if (due > 0) {
        await deps.notifier.notifyInTransaction(db, 'accounts');
        deps.notifier.wakeLocal('accounts');
      }
    },
    inboundMessage: (message) => recordInboundMessage(replies, message),
    marketingPreference: (preference) => recordMarketingPreference(replies, preference),
    userIdChange: (change) => recordUserIdChange(replies, change),
  };
}
