import { Counter } from 'prom-client';

// Messages the provider held for quality assessment (Meta's business portfolio pacing): taken,
// but sent only when Meta releases them in batches, or dropped (FAILED, 132015) when feedback on
// the first batches looks bad. A burst of drops means the portfolio is under review and cannot
// send templates meanwhile: worth an operator's alert.

export const heldMessagesCounter = new Counter({
  name: 'svc_provider_held_messages_total',
  help: 'Messages the provider held for quality assessment (held), then released (sent) or dropped (failed, 132015).',
  labelNames: ['event'] as const,
  registers: [],
});
