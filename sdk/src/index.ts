// @svc/sdk — the typed svc client. See sdk/README.md; everything exported here is its stable API.
export { createSvcClient, type SvcClient, type SvcClientOptions } from './client.ts';
export { SvcError, unwrap, type CallResult } from './errors.ts';
export { nextLink } from './pagination.ts';
export { retryAfterMs, type RetryOptions } from './retry.ts';
export {
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
  type SignWebhookOptions,
  type VerifyWebhookOptions,
  type WebhookHeaders,
} from './webhooks.ts';
export type * from './types.ts';
export type { components, paths, operations, webhooks } from './schema.ts';
