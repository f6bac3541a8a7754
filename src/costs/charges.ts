import type { CostDelta } from '../db/messageCosts.ts';
import { DAY_MS } from '../db/messageCosts.ts';
import type { MessageRow } from '../db/messages.ts';
import type { MessagePricing } from '../domain/pricing.ts';
import { type Charge, fromMicros, MICROS, type RateCard } from '../domain/rateCard.ts';

// What a message's delivery costs, as the reports that record it are applied: Meta charges a
// template message when it is delivered, at the rate its `pricing` names, so a message is
// counted once it is both delivered and priced (whichever report comes last), under the UTC day
// of its delivery. A later report that changes its pricing takes the first count back.

/** The rate card, and the currency of a WABA whose own svc does not know (SVC_RATE_CARD_CURRENCY). */
export interface CostPricing {
  card: RateCard;
  currency: string;
}

/** The `cost` column of a charged message. */
export interface StoredCost {
  amount: number;
  currency: string;
}

export interface ChargeUpdate {
  /** The message's new `cost` column, when it changes. */
  cost?: string | null;
  deltas: CostDelta[];
}

function chargeAt(
  pricing: CostPricing,
  message: MessageRow,
  pricingJson: string,
  deliveredAt: number,
  currency: string,
  tiers?: ReadonlyMap<string, string>,
): Charge {
  return pricing.card.chargeOf({
    recipient: message.recipient,
    pricing: JSON.parse(pricingJson) as MessagePricing,
    at: deliveredAt,
    currency,
    ...(tiers && { tiers }),
  });
}

function deltaOf(charge: Charge, message: MessageRow, deliveredAt: number, sign: 1 | -1, micros?: number): CostDelta {
  return {
    project_id: message.project_id,
    day: deliveredAt - (deliveredAt % DAY_MS),
    template: message.template_name,
    category: charge.category,
    country: charge.country,
    market: charge.market,
    currency: charge.currency,
    charged: charge.kind === 'charged' ? sign : 0,
    amount_micros: charge.kind === 'charged' ? sign * (micros ?? charge.micros) : 0,
    free: charge.kind === 'free' ? sign : 0,
    unpriced: charge.kind === 'unpriced' ? sign : 0,
  };
}

/**
 * The cost column and counter changes for a message whose report leaves it with `after`
 * (its pricing JSON and delivery time, either possibly new). `currency` and `tiers`: its WABA's
 * currency and the volume tiers in force for it at its delivery (`market|category` → tier;
 * db/volumeTiers.ts), when known; an unknown currency is SVC_RATE_CARD_CURRENCY.
 */
export function chargeUpdate(
  pricing: CostPricing,
  message: MessageRow,
  after: { pricing: string | null; deliveredAt: number | null; currency?: string | null; tiers?: ReadonlyMap<string, string> },
): ChargeUpdate {
  const before = { pricing: message.pricing ?? null, deliveredAt: message.delivered_at };
  const wasCounted = before.pricing !== null && before.deliveredAt !== null;
  const isCounted = after.pricing !== null && after.deliveredAt !== null;
  if (wasCounted === isCounted && before.pricing === after.pricing && before.deliveredAt === after.deliveredAt) return { deltas: [] };
  const deltas: CostDelta[] = [];
  const currency = after.currency ?? pricing.currency;
  if (wasCounted) {
    // Taken back at the amount and in the currency it was counted with (the card may have
    // changed since; a free message's currency is its WABA's, which does not change).
    const stored = message.cost ? (JSON.parse(message.cost) as StoredCost) : undefined;
    const old = chargeAt(pricing, message, before.pricing!, before.deliveredAt!, stored?.currency ?? currency);
    deltas.push(deltaOf(old, message, before.deliveredAt!, -1, stored ? Math.round(stored.amount * MICROS) : 0));
  }
  let cost: string | null = null;
  if (isCounted) {
    const charge = chargeAt(pricing, message, after.pricing!, after.deliveredAt!, currency, after.tiers);
    deltas.push(deltaOf(charge, message, after.deliveredAt!, 1));
    if (charge.kind === 'charged') cost = JSON.stringify({ amount: fromMicros(charge.micros), currency: charge.currency } satisfies StoredCost);
  }
  return { deltas, ...(cost !== (message.cost ?? null) && { cost }) };
}
