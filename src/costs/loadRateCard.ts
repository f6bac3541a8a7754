import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError, type CostConfig } from '../config.ts';
import { RateCard, RateCardError } from '../domain/rateCard.ts';

/** The card svc carries as an example (clearly not Meta's prices); used when SVC_RATE_CARD is unset. */
export const EXAMPLE_RATE_CARD_PATH = fileURLToPath(new URL('./rate-card.example.csv', import.meta.url));

/** Reads and checks the operator's rate card at start: a mistake in it stops the service, naming the line. */
export function loadRateCard(config: CostConfig): { card: RateCard; example: boolean } {
  const path = config.rateCardPath ?? EXAMPLE_RATE_CARD_PATH;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`SVC_RATE_CARD: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  try {
    return { card: RateCard.parse(text, path), example: config.rateCardPath === undefined };
  } catch (error) {
    if (error instanceof RateCardError) throw new ConfigError(`SVC_RATE_CARD: ${error.message}`);
    throw error;
  }
}
