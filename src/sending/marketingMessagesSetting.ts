import type { Db } from '../db/database.ts';
import { findMarketingMessagesMode, saveMarketingMessagesMode } from '../db/marketingMessages.ts';
import type { MarketingMessagesMode } from '../domain/marketingMessages.ts';

// A project's Marketing Messages API setting (GET/PUT /v1/projects/me/marketing-messages): how its
// MARKETING templates are sent from the next dispatch on (messages already taken are not resent).

export interface MarketingMessagesSetting {
  mode: MarketingMessagesMode;
}

export async function readMarketingMessagesSetting(db: Db, projectId: string): Promise<MarketingMessagesSetting> {
  return { mode: (await findMarketingMessagesMode(db, projectId)) ?? 'off' };
}

/** In the caller's transaction. */
export async function changeMarketingMessagesSetting(
  trx: Db,
  projectId: string,
  change: MarketingMessagesSetting,
  now: number,
): Promise<MarketingMessagesSetting> {
  await saveMarketingMessagesMode(trx, projectId, change.mode, now);
  return { mode: change.mode };
}
