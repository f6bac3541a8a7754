import type { CostGroup } from '../db/messageCosts.ts';
import { DAY_MS } from '../db/messageCosts.ts';
import { cardCategory, MICROS } from '../domain/rateCard.ts';
import type { PricingAnalyticsPoint } from '../providers/provider.ts';

// svc's cost counters beside Meta's pricing_analytics, day by day: charged messages (Meta's
// REGULAR points) and their cost, per pricing category and country. Meta's days begin at
// midnight in the WABA's time zone: each is filed under the UTC midnight nearest its start.

/** An amount difference smaller than this (a hundredth of the currency unit) is rounding. */
const AMOUNT_TOLERANCE_MICROS = 10_000;

export interface Difference {
  category: string;
  country: string;
  metaMessages: number;
  svcMessages: number;
  metaAmountMicros: number;
  svcAmountMicros: number;
}

export interface DayComparison {
  day: number;
  metaMessages: number;
  metaAmountMicros: number;
  svcMessages: number;
  svcAmountMicros: number;
  differences: Difference[];
}

interface Tally {
  messages: number;
  micros: number;
}

export function compareCosts(
  range: { from: number; to: number },
  meta: readonly PricingAnalyticsPoint[],
  svc: readonly CostGroup[],
  currency: string,
): DayComparison[] {
  const tallies = new Map<number, Map<string, { meta: Tally; svc: Tally }>>();
  const entry = (day: number, category: string, country: string) => {
    let ofDay = tallies.get(day);
    if (!ofDay) tallies.set(day, (ofDay = new Map()));
    const key = `${category}|${country}`;
    let both = ofDay.get(key);
    if (!both) ofDay.set(key, (both = { meta: { messages: 0, micros: 0 }, svc: { messages: 0, micros: 0 } }));
    return both;
  };
  for (const point of meta) {
    if (point.pricingType !== 'REGULAR') continue;
    const day = Math.round(point.start / DAY_MS) * DAY_MS;
    const both = entry(day, cardCategory(point.pricingCategory), point.country);
    both.meta.messages += point.volume;
    both.meta.micros += Math.round(point.cost * MICROS);
  }
  for (const group of svc) {
    if (group.currency !== currency) continue;
    const both = entry(Number(group.keys.day), String(group.keys.category), String(group.keys.country));
    both.svc.messages += group.charged + group.unpriced;
    both.svc.micros += group.amountMicros;
  }
  const days: DayComparison[] = [];
  for (let day = range.from; day < range.to; day += DAY_MS) {
    const comparison: DayComparison = { day, metaMessages: 0, metaAmountMicros: 0, svcMessages: 0, svcAmountMicros: 0, differences: [] };
    for (const [key, both] of [...(tallies.get(day) ?? new Map<string, { meta: Tally; svc: Tally }>()).entries()].sort()) {
      comparison.metaMessages += both.meta.messages;
      comparison.metaAmountMicros += both.meta.micros;
      comparison.svcMessages += both.svc.messages;
      comparison.svcAmountMicros += both.svc.micros;
      if (both.meta.messages !== both.svc.messages || Math.abs(both.meta.micros - both.svc.micros) >= AMOUNT_TOLERANCE_MICROS) {
        const [category = '', country = ''] = key.split('|');
        comparison.differences.push({
          category,
          country,
          metaMessages: both.meta.messages,
          svcMessages: both.svc.messages,
          metaAmountMicros: both.meta.micros,
          svcAmountMicros: both.svc.micros,
        });
      }
    }
    days.push(comparison);
  }
  return days;
}
