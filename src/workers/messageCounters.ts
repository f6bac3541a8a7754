import { Counter, type Registry } from 'prom-client';

// The message counters of one app: built by the composition root (app.ts) in that app's metrics
// registry and passed down, so two apps in one process (tests, a library user) never add to each
// other's figures.

export interface MessageCounters {
  /** Status changes recorded, by new status (counted as recorded, in their transaction). */
  readonly statusChanges: Counter<'status'>;
  /** Messages the provider held for quality assessment, then released or dropped. */
  readonly held: Counter<'event'>;
  /** Held messages the provider dropped (heldMessages.ts). */
  readonly dropped: Counter;
  /** Bursts of drops on one sending number (an operator alert was logged for each). */
  readonly dropBursts: Counter;
}

/** The counters, registered in `registry` (none: counted, shown nowhere — parts built without an app). */
export function createMessageCounters(registry?: Registry): MessageCounters {
  const registers = registry === undefined ? [] : [registry];
  return {
    statusChanges: new Counter({
      name: 'svc_message_status_changes_total',
      help: 'Message status changes recorded, by the new status.',
      labelNames: ['status'] as const,
      registers,
    }),
    held: new Counter({
      name: 'svc_provider_held_messages_total',
      help: 'Messages the provider held for quality assessment (held), then released (sent) or dropped (failed, 132015).',
      labelNames: ['event'] as const,
      registers,
    }),
    dropped: new Counter({
      name: 'svc_provider_dropped_messages_total',
      help: 'Messages the provider failed with 132015 (WhatsApp: held messages dropped by portfolio pacing, or a paused template).',
      registers,
    }),
    dropBursts: new Counter({
      name: 'svc_provider_drop_bursts_total',
      help: 'Bursts of 132015 failures on one sending number (an operator alert was logged for each).',
      registers,
    }),
  };
}
