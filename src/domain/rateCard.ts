import { type CsvRow, csvRows } from './csv.ts';
import type { MessagePricing } from './pricing.ts';
import { countryOfRecipient, marketCandidates } from './pricingMarkets.ts';

// The operator's rate card: what Meta charges per delivered message, by currency, market,
// pricing category, volume tier and effective date — Meta's rate card and volume-tier CSVs
// flattened to one rate per line (svc's own layout; Meta's files as published are read into the
// same lines by costs/metaRateCard.ts):
//
//   effective_date,currency,market,category,tier,rate
//   2026-10-01,USD,India,marketing,0:MAX,0.0118
//
// `tier` is written as Meta writes it in pricing_analytics and the account_update webhook
// (`LOWER:UPPER` messages a month, upper inclusive or MAX; empty: 0:MAX). A rate applies from
// its effective date (00:00 UTC) until a later line for the same currency, market, category and
// tier. Amounts are kept in millionths of the currency unit, so sums are exact.

export const MICROS = 1_000_000;

/** Meta's pricing categories as the card names them (`authentication-international` → `authentication_international`). */
export function cardCategory(category: string): string {
  return category.trim().toLowerCase().replaceAll('-', '_');
}

interface TierRate {
  lower: number;
  tier: string;
  micros: number;
}

interface Version {
  from: number;
  tiers: TierRate[];
}

export interface RateCardLine {
  effectiveDate: string;
  currency: string;
  market: string;
  category: string;
  tier: string;
  rate: string;
}

/** A rate and where it was read (file and line), to name it in an error. */
export interface RateCardEntry {
  line: RateCardLine;
  at: string;
}

export class RateCardError extends Error {
  override name = 'RateCardError';
}

const COLUMNS = ['effective_date', 'currency', 'market', 'category', 'tier', 'rate'] as const;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const CURRENCY = /^[A-Z]{3}$/;
const TIER = /^(\d{1,12}):(\d{1,12}|MAX)$/;
const RATE = /^\d{1,9}(\.\d{1,6})?$/;
const CATEGORY = /^[a-z_]{1,40}$/;

function checkLine(line: RateCardLine, at: string): void {
  if (!DATE.test(line.effectiveDate) || Number.isNaN(Date.parse(line.effectiveDate))) {
    throw new RateCardError(`${at}: effective_date must be a date YYYY-MM-DD, got "${line.effectiveDate}"`);
  }
  if (!CURRENCY.test(line.currency)) throw new RateCardError(`${at}: currency must be an ISO 4217 code (USD), got "${line.currency}"`);
  if (line.market === '' || line.market.length > 64) throw new RateCardError(`${at}: market must be a name of 1 to 64 characters`);
  if (!CATEGORY.test(line.category)) throw new RateCardError(`${at}: category must be a pricing category (marketing, utility, …), got "${line.category}"`);
  const tier = TIER.exec(line.tier);
  if (!tier || (tier[2] !== 'MAX' && Number(tier[2]) < Number(tier[1]))) {
    throw new RateCardError(`${at}: tier must be LOWER:UPPER (0:MAX, 0:750000), got "${line.tier}"`);
  }
  if (!RATE.test(line.rate)) throw new RateCardError(`${at}: rate must be a non-negative decimal with at most 6 places, got "${line.rate}"`);
}

/** What one message costs by the card, or why it costs nothing / cannot be priced. */
export type Charge =
  | { kind: 'charged'; micros: number; currency: string; market: string; country: string; category: string; tier: string }
  | { kind: 'free'; currency: string; market: string; country: string; category: string }
  | { kind: 'unpriced'; currency: string; market: string; country: string; category: string };

export class RateCard {
  /** `currency|market|category` → versions, newest first. */
  readonly #rates = new Map<string, Version[]>();
  /** `currency|market` of every line: the markets the card prices in each currency. */
  readonly #markets = new Set<string>();
  /** A short description for logs and the README (the file and its versions). */
  readonly source: string;
  readonly lines: number;

  private constructor(source: string, lines: RateCardLine[]) {
    this.source = source;
    this.lines = lines.length;
    for (const line of lines) {
      const key = `${line.currency}|${line.market}|${line.category}`;
      this.#markets.add(`${line.currency}|${line.market}`);
      const from = Date.parse(`${line.effectiveDate}T00:00:00.000Z`);
      const match = TIER.exec(line.tier)!;
      const rate: TierRate = { lower: Number(match[1]), tier: line.tier, micros: toMicros(line.rate) };
      const versions = this.#rates.get(key) ?? [];
      let version = versions.find((v) => v.from === from);
      if (!version) {
        version = { from, tiers: [] };
        versions.push(version);
        versions.sort((a, b) => b.from - a.from);
      }
      version.tiers.push(rate);
      version.tiers.sort((a, b) => a.lower - b.lower);
      this.#rates.set(key, versions);
    }
  }

  /** Parses a card in svc's layout (one rate per line); throws RateCardError naming the line of the first mistake. */
  static parse(text: string, source = 'rate card'): RateCard {
    return RateCard.fromLines(RateCard.entriesOf(csvRows(text), source), source);
  }

  /** The rates of rows in svc's layout, the first being the header (checked by fromLines). */
  static entriesOf(rows: readonly CsvRow[], source: string): RateCardEntry[] {
    const [first, ...rest] = rows;
    if (!first) throw new RateCardError(`${source}: empty (a header line and at least one rate are needed)`);
    const header = first.fields.map((name) => name.toLowerCase().replaceAll(' ', '_'));
    for (const column of COLUMNS) {
      if (column !== 'tier' && !header.includes(column)) throw new RateCardError(`${source}, line ${first.line}: the header lacks the column ${column}`);
    }
    return rest.map((row) => {
      const get = (column: (typeof COLUMNS)[number]) => {
        const position = header.indexOf(column);
        return position === -1 ? '' : (row.fields[position] ?? '');
      };
      return {
        at: `${source}, line ${row.line}`,
        line: {
          effectiveDate: get('effective_date'),
          currency: get('currency').toUpperCase(),
          market: get('market'),
          category: cardCategory(get('category')),
          tier: get('tier') === '' ? '0:MAX' : get('tier').toUpperCase(),
          rate: get('rate').replace(/^\$/, ''),
        },
      };
    });
  }

  /** A card of these rates, each checked; throws RateCardError naming where the first mistake is (`at`). */
  static fromLines(entries: readonly RateCardEntry[], source: string): RateCard {
    const seen = new Set<string>();
    for (const { at, line } of entries) {
      checkLine(line, at);
      const key = [line.effectiveDate, line.currency, line.market, line.category, line.tier].join('|');
      if (seen.has(key)) throw new RateCardError(`${at}: a second rate for ${key.replaceAll('|', ', ')}`);
      seen.add(key);
    }
    if (entries.length === 0) throw new RateCardError(`${source}: no rates`);
    return new RateCard(source, entries.map((entry) => entry.line));
  }

  /**
   * The rate at `at` for this currency, market and category: the newest version effective by
   * then, at `tier` when Meta named the tier in force, else its first tier (the list rate).
   */
  rate(query: { currency: string; market: string; category: string; at: number; tier?: string }): TierRate | undefined {
    const versions = this.#rates.get(`${query.currency}|${query.market}|${query.category}`);
    const version = versions?.find((v) => v.from <= query.at);
    if (!version) return undefined;
    return (query.tier === undefined ? undefined : version.tiers.find((t) => t.tier === query.tier)) ?? version.tiers[0];
  }

  /**
   * What a delivered message costs: Meta's `pricing` says whether it is charged and at which
   * category's rate; the recipient's number gives the market; the card, the rate in force when
   * it was delivered. marketing_lite (Marketing Messages API) is priced as marketing unless the
   * card has its own line. The WABA's volume tier for the market and category, when known,
   * picks the tier's rate; otherwise (or when the card has no line for that tier) the first tier.
   */
  chargeOf(message: {
    recipient: string;
    pricing: MessagePricing;
    at: number;
    currency: string;
    /** The volume tier in force for each `market|category` (Meta's account_update); absent: the first tier. */
    tiers?: ReadonlyMap<string, string>;
  }): Charge {
    const country = countryOfRecipient(message.recipient) ?? '';
    const category = cardCategory(message.pricing.category);
    const { currency, at } = message;
    const candidates = marketCandidates(country === '' ? undefined : country);
    // The market a message is reported under even when it costs nothing: the first the card prices.
    const market = candidates.find((name) => this.#markets.has(`${currency}|${name}`)) ?? candidates[0] ?? '';
    if (!message.pricing.billable) return { kind: 'free', currency, market, country, category };
    const categories = category === 'marketing_lite' ? [category, 'marketing'] : [category];
    for (const candidate of candidates) {
      for (const asCategory of categories) {
        const tier = message.tiers?.get(`${candidate}|${asCategory}`);
        const rate = this.rate({ currency, market: candidate, category: asCategory, at, ...(tier !== undefined && { tier }) });
        if (rate) return { kind: 'charged', micros: rate.micros, currency, market: candidate, country, category, tier: rate.tier };
      }
    }
    return { kind: 'unpriced', currency, market, country, category };
  }
}

/** The lower bound of a tier written as Meta writes it (`25000001:50000000`, `1000001:MAX`); undefined when malformed. */
export function tierLowerBound(tier: string): number | undefined {
  const match = TIER.exec(tier);
  if (!match || (match[2] !== 'MAX' && Number(match[2]) < Number(match[1]))) return undefined;
  return Number(match[1]);
}

/** "0.0118" → 11800 (exact: decimal digits, no floating point). */
export function toMicros(rate: string): number {
  const [whole = '0', fraction = ''] = rate.split('.');
  return Number(whole) * MICROS + Number(fraction.padEnd(6, '0'));
}

/** 11800 → 0.0118: a whole number of millionths as a decimal number. */
export function fromMicros(micros: number): number {
  return Number((micros / MICROS).toFixed(6));
}
