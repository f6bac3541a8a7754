// The providers svc is built with (SVC_PROVIDER's values); the registry (registry.ts) has one
// entry for each, and the type system holds the two to each other.
export const PROVIDER_NAMES = ['sandbox', 'whatsapp'] as const;

export type ProviderName = (typeof PROVIDER_NAMES)[number];
