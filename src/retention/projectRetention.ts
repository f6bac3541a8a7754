import type { RetentionConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { findProjectRetention, setProjectRetention } from '../db/retention.ts';
import { formatDuration, parseDuration } from '../domain/durations.ts';
import type { FieldError } from '../domain/fieldError.ts';

// A project's own retention (GET/PUT /v1/projects/me/retention): a tenant may keep its messages
// (and their deliveries) for less time than the operator does, never for longer.

type Kind = 'messages' | 'webhookDeliveries';

export interface RetentionSetting {
  /** How long the project's data of this kind is kept now. */
  retention: string;
  /** The project's own setting; null: the operator's. */
  projectSetting: string | null;
  /** The operator's retention: the most a project may set. */
  maximum: string;
}

export type ProjectRetentionView = Record<Kind, RetentionSetting>;

/** A change: a duration (1s…the maximum), null for the operator's, absent for unchanged. */
export type RetentionChange = Partial<Record<Kind, string | null>>;

const MIN_MS = 1000;

function view(
  own: { message_retention_ms: number | null; webhook_delivery_retention_ms: number | null },
  operator: RetentionConfig,
): ProjectRetentionView {
  const messages = own.message_retention_ms ?? operator.messagesMs;
  // A message's deliveries go with it: they are never kept longer than the message.
  const deliveries = Math.min(own.webhook_delivery_retention_ms ?? operator.webhookDeliveriesMs, messages);
  return {
    messages: {
      retention: formatDuration(messages),
      projectSetting: own.message_retention_ms === null ? null : formatDuration(own.message_retention_ms),
      maximum: formatDuration(operator.messagesMs),
    },
    webhookDeliveries: {
      retention: formatDuration(deliveries),
      projectSetting: own.webhook_delivery_retention_ms === null ? null : formatDuration(own.webhook_delivery_retention_ms),
      maximum: formatDuration(operator.webhookDeliveriesMs),
    },
  };
}

export async function readProjectRetention(
  db: Db,
  operator: RetentionConfig,
  projectId: string,
): Promise<ProjectRetentionView | undefined> {
  const own = await findProjectRetention(db, projectId);
  return own && view(own, operator);
}

/** Checks a change against the operator's maxima: the milliseconds to store, or what is wrong. */
export function checkRetentionChange(
  change: RetentionChange,
  operator: RetentionConfig,
): { ok: Partial<Record<Kind, number | null>> } | { errors: FieldError[] } {
  const maxima: Record<Kind, number> = { messages: operator.messagesMs, webhookDeliveries: operator.webhookDeliveriesMs };
  const ok: Partial<Record<Kind, number | null>> = {};
  const errors: FieldError[] = [];
  for (const kind of ['messages', 'webhookDeliveries'] as const) {
    const text = change[kind];
    if (text === undefined) continue;
    if (text === null) {
      ok[kind] = null;
      continue;
    }
    let ms: number;
    try {
      ms = parseDuration(text);
    } catch {
      errors.push({ field: `/${kind}`, code: 'invalid_duration', message: `${kind} must be a duration such as 30s, 15m, 12h or 90d.` });
      continue;
    }
    if (ms < MIN_MS) {
      errors.push({ field: `/${kind}`, code: 'too_short', message: `${kind} must be at least 1s.` });
    } else if (ms > maxima[kind]) {
      errors.push({
        field: `/${kind}`,
        code: 'above_maximum',
        message: `${kind} may be at most ${formatDuration(maxima[kind])} (the operator's retention); a project can only shorten it.`,
      });
    } else {
      ok[kind] = ms;
    }
  }
  return errors.length > 0 ? { errors } : { ok };
}

/** Applies a checked change; returns the project's retention as it now is. */
export async function changeProjectRetention(
  db: Db,
  operator: RetentionConfig,
  projectId: string,
  change: Partial<Record<Kind, number | null>>,
  now: number,
): Promise<ProjectRetentionView | undefined> {
  const own = await findProjectRetention(db, projectId);
  if (own === undefined) return undefined;
  const next = {
    message_retention_ms: change.messages === undefined ? own.message_retention_ms : change.messages,
    webhook_delivery_retention_ms: change.webhookDeliveries === undefined ? own.webhook_delivery_retention_ms : change.webhookDeliveries,
  };
  await setProjectRetention(db, projectId, next, now);
  return view(next, operator);
}
