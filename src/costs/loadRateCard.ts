import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, type CostConfig } from '../config.ts';
import { RateCard, RateCardError } from '../domain/rateCard.ts';
import { combinedRateCard, rateCardEntries } from './metaRateCard.ts';

/** The card svc carries as an example (clearly not Meta's prices); used when SVC_RATE_CARD is unset. */
export const EXAMPLE_RATE_CARD_PATH = fileURLToPath(new URL('./rate-card.example.csv', import.meta.url));

function readable(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`SVC_RATE_CARD: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/** The files SVC_RATE_CARD names: comma-separated paths, a directory standing for its .csv files (in name order). */
function cardFiles(setting: string): string[] {
  const files: string[] = [];
  for (const path of setting.split(',').map((part) => part.trim()).filter(Boolean)) {
    let directory = false;
    try {
      directory = statSync(path).isDirectory();
    } catch {
      // Not there: reading it says so.
    }
    if (!directory) files.push(path);
    else {
      const csv = readdirSync(path).filter((name) => name.toLowerCase().endsWith('.csv')).sort();
      if (csv.length === 0) throw new ConfigError(`SVC_RATE_CARD: the directory ${path} has no .csv file`);
      files.push(...csv.map((name) => join(path, name)));
    }
  }
  if (files.length === 0) throw new ConfigError('SVC_RATE_CARD: names no file');
  return files;
}

/**
 * Reads and checks the operator's rate card at start — one file or several (svc's layout or
 * Meta's, costs/metaRateCard.ts): a mistake in any stops the service, naming the file and line.
 */
export function loadRateCard(config: CostConfig): { card: RateCard; example: boolean } {
  try {
    if (config.rateCardPath === undefined) return { card: RateCard.parse(readable(EXAMPLE_RATE_CARD_PATH), EXAMPLE_RATE_CARD_PATH), example: true };
    const files = cardFiles(config.rateCardPath);
    const card = combinedRateCard(
      files.map((path) => rateCardEntries(readable(path), path)),
      files.join(', '),
    );
    return { card, example: false };
  } catch (error) {
    if (error instanceof RateCardError) throw new ConfigError(`SVC_RATE_CARD: ${error.message}`);
    throw error;
  }
}
