import { basename } from 'node:path';
import { type CsvRow, csvRows } from '../domain/csv.ts';
import { cardCategory, RateCard, RateCardError, type RateCardEntry } from '../domain/rateCard.ts';

// Rate card files as the operator has them: svc's own layout (one rate per line,
// domain/rateCard.ts) or Meta's as published on its Pricing page ("Rate cards and volume tiers",
// one pair of CSV files per currency), told apart by their header row:
//
// - Meta's rates: a few lines of title and notes ("Cost per message in EUR, effective …"), then
//     Market,Currency,Marketing,Utility,Authentication,"Authentication-
//     International",Service
//   and a row per market (a country, a region such as "Rest of Africa", or "Other") with its
//   list rate per category; `n/a` (or empty) where the category has no rate there. The currency
//   is an ISO code or Meta's symbol ($US).
// - Meta's volume tiers: the title lines, then a header with Market, Currency (optional),
//   Category and a column per tier, named by its monthly volume band ("0 - 1,000,000",
//   "1,000,001+", or svc's "1000001:MAX"); a row per market and category (Utility,
//   Authentication) with each tier's rate, empty where the market has no such tier. A market's
//   tier rates replace its list rate of the same category, currency and date.
//
// Meta's files do not say the date their rates take effect in a column: it is read from the
// title lines ("effective October 1, 2026", or 2026-10-01) or else from the file's name
// (rates-eur-2026-10-01.csv).

/** Meta's currency symbols in older cards, beside ISO codes. */
const SYMBOLS: Readonly<Record<string, string>> = { $US: 'USD', US$: 'USD', '€': 'EUR', '£': 'GBP', '₹': 'INR', $AU: 'AUD', A$: 'AUD', Rp: 'IDR', R$: 'BRL' };
const CATEGORY_COLUMNS = ['marketing', 'utility', 'authentication', 'authentication_international', 'service', 'marketing_lite'];
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

type Layout = 'svc' | 'meta_rates' | 'meta_tiers';

/** A column name as compared: lower case, words joined by _ ("Authentication-\nInternational" → authentication_international). */
function columnName(name: string): string {
  return name
    .toLowerCase()
    .replace(/-\s+/g, '-')
    .replace(/[\s-]+/g, '_');
}

/** A volume band from a column name: "0 - 1,000,000" → 0:1000000, "1,000,001+" → 1000001:MAX, "1000001:MAX" as it is. */
function bandOf(name: string): string | undefined {
  const text = name.replaceAll(',', '').toUpperCase();
  const range = /(\d+)\s*(?:-|–|:|TO)\s*(\d+|MAX)/.exec(text);
  if (range) return `${Number(range[1])}:${range[2] === 'MAX' ? 'MAX' : Number(range[2])}`;
  const open = /(\d+)\s*\+/.exec(text);
  return open ? `${Number(open[1])}:MAX` : undefined;
}

function layoutOf(header: string[]): Layout | undefined {
  const names = header.map(columnName);
  if (names.includes('effective_date') && names.includes('rate')) return 'svc';
  if (names[0] !== 'market') return undefined;
  if (names.includes('category') && header.some((name) => bandOf(name) !== undefined)) return 'meta_tiers';
  if (names.some((name) => CATEGORY_COLUMNS.includes(name))) return 'meta_rates';
  return undefined;
}

/** The effective date named in Meta's title lines or in the file's name (YYYY-MM-DD). */
function effectiveDateOf(titles: string, path: string): string | undefined {
  const iso = /(\d{4})-(\d{2})-(\d{2})/.exec(titles) ?? /(\d{4})-(\d{2})-(\d{2})/.exec(basename(path));
  if (iso) return `${iso[1]}-${iso[2]}-${iso[3]}`;
  const words = /effective\s+([a-z]+)\s+(\d{1,2}),?\s+(\d{4})/i.exec(titles);
  const month = words ? MONTHS.indexOf(words[1]!.toLowerCase()) : -1;
  if (!words || month === -1) return undefined;
  return `${words[3]}-${String(month + 1).padStart(2, '0')}-${words[2]!.padStart(2, '0')}`;
}

function currencyOf(value: string): string {
  const trimmed = value.trim();
  return SYMBOLS[trimmed] ?? trimmed.toUpperCase();
}

/** "n/a", "-" or empty: no rate here. A rate may carry its currency's symbol or thousands separators. */
function rateOf(cell: string | undefined): string | undefined {
  const value = (cell ?? '').trim();
  if (value === '' || /^(n\/a|na|-|–)$/i.test(value)) return undefined;
  return value.replace(/^[^\d]+/, '').replaceAll(',', '');
}

/**
 * The rates of one file, in whichever layout it has; throws RateCardError naming the file and
 * line of a mistake (an unknown layout, an effective date or currency it cannot tell).
 */
export function rateCardEntries(text: string, path: string): { layout: Layout; entries: RateCardEntry[] } {
  const rows = csvRows(text);
  const headerAt = rows.findIndex((row) => layoutOf(row.fields) !== undefined);
  if (headerAt === -1) {
    throw new RateCardError(
      `${path}: not a rate card svc can read: no header line of svc's layout (effective_date,currency,market,category,tier,rate) ` +
        'or of Meta’s rate card (Market,Currency,Marketing,Utility,…) or volume tiers (Market,Currency,Category,<a column per tier>)',
    );
  }
  const header = rows[headerAt]!;
  const layout = layoutOf(header.fields)!;
  if (layout === 'svc') return { layout, entries: RateCard.entriesOf(rows.slice(headerAt), path) };
  const titles = rows
    .slice(0, headerAt)
    .map((row) => row.fields.join(' '))
    .join('\n');
  const effectiveDate = effectiveDateOf(titles, path);
  if (effectiveDate === undefined) {
    throw new RateCardError(
      `${path}: the date these rates take effect is neither in the file's title lines ("effective October 1, 2026") nor in its name: ` +
        'name the file with the date, e.g. rates-eur-2026-10-01.csv',
    );
  }
  const titleCurrency = /\bin ([A-Z]{3})\b/.exec(titles)?.[1];
  const names = header.fields.map(columnName);
  const at = (row: CsvRow) => `${path}, line ${row.line}`;
  const currencyIn = (row: CsvRow) => {
    const position = names.indexOf('currency');
    const value = position === -1 ? undefined : row.fields[position];
    const currency = value === undefined || value === '' ? titleCurrency : currencyOf(value);
    if (currency === undefined) throw new RateCardError(`${at(row)}: no currency (a Currency column, or "in EUR" in the title lines)`);
    return currency;
  };
  const entries: RateCardEntry[] = [];
  for (const row of rows.slice(headerAt + 1)) {
    const market = row.fields[0] ?? '';
    if (row.fields.slice(1).every((value) => value === '')) continue; // a note or a section title
    const currency = currencyIn(row);
    if (layout === 'meta_rates') {
      for (const [position, name] of names.entries()) {
        if (!CATEGORY_COLUMNS.includes(name)) continue;
        const rate = rateOf(row.fields[position]);
        if (rate !== undefined) entries.push({ at: at(row), line: { effectiveDate, currency, market, category: name, tier: '0:MAX', rate } });
      }
    } else {
      const category = cardCategory(row.fields[names.indexOf('category')] ?? '').replace(/\s+/g, '_');
      for (const [position, name] of header.fields.entries()) {
        const tier = position === 0 ? undefined : bandOf(name);
        const rate = tier === undefined ? undefined : rateOf(row.fields[position]);
        if (tier !== undefined && rate !== undefined) entries.push({ at: at(row), line: { effectiveDate, currency, market, category, tier, rate } });
      }
    }
  }
  return { layout, entries };
}

/**
 * One card of several files: a market's volume tiers (Meta's tier file) replace its list rate
 * (Meta's rates file) for the same date, currency and category; otherwise every rate is kept as
 * it is, and the same rate given twice is a mistake.
 */
export function combinedRateCard(files: readonly { layout: Layout; entries: RateCardEntry[] }[], source: string): RateCard {
  const key = (entry: RateCardEntry) => [entry.line.effectiveDate, entry.line.currency, entry.line.market, entry.line.category].join('|');
  const tiered = new Set(files.filter((file) => file.layout === 'meta_tiers').flatMap((file) => file.entries.map(key)));
  const entries = files.flatMap((file) => (file.layout === 'meta_rates' ? file.entries.filter((entry) => !tiered.has(key(entry))) : file.entries));
  return RateCard.fromLines(entries, source);
}
