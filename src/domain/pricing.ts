// What Meta says a message costs: the `pricing` object of its status webhooks (per-message
// pricing since 1 Jul 2025). svc keeps it as Meta gives it, under camelCase names.

export interface MessagePricing {
  /** Meta's `billable` (to be deprecated: `type` and `category` together say the same). */
  billable: boolean;
  /** `PMP` (per-message pricing); `CBP` before 1 Jul 2025. */
  pricingModel: string;
  /** The rate applied: marketing, marketing_lite, utility, authentication, authentication-international, service, referral_conversion. */
  category: string;
  /** regular (charged), free_customer_service, free_entry_point. */
  type: string;
}

const VALUE = /^[A-Za-z0-9_-]{1,64}$/;

function value(raw: unknown): string | undefined {
  return typeof raw === 'string' && VALUE.test(raw) ? raw : undefined;
}

/**
 * Meta's `pricing` object, or undefined when it is absent or unreadable. `type` came after the
 * others: without it, a billable message is `regular`, any other free of charge.
 */
export function pricingOf(raw: unknown): MessagePricing | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const object = raw as Record<string, unknown>;
  const category = value(object.category);
  const pricingModel = value(object.pricing_model);
  if (category === undefined || pricingModel === undefined) return undefined;
  const type = value(object.type);
  const billable = typeof object.billable === 'boolean' ? object.billable : type === undefined ? true : type === 'regular';
  return { billable, pricingModel, category, type: type ?? (billable ? 'regular' : 'free_customer_service') };
}

/**
 * What Meta would say of a template message the sandbox sends outside any customer-service
 * window: charged at its category's rate, per message.
 */
export function templatePricing(category: string): MessagePricing {
  return { billable: true, pricingModel: 'PMP', category: category.toLowerCase(), type: 'regular' };
}
