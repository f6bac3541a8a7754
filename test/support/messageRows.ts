import type { Insertable } from 'kysely';
import { DAY_MS } from '../../src/db/retention.ts';
import type { MessageStatus, Tables } from '../../src/db/tables.ts';

/**
 * A messages row accepted at `at`, as tests that write rows directly need one: READ unless told,
 * a QUEUED one due a year later, last changed a second after `at` unless told.
 */
export function messageRowAt(
  id: string,
  projectId: string,
  at: number,
  options: { status?: MessageStatus; updatedAt?: number; batchId?: string } = {},
): Insertable<Tables['messages']> {
  const status = options.status ?? 'READ';
  return {
    id,
    project_id: projectId,
    recipient: '+5511987654321',
    template_id: 'tpl_1',
    template_name: 'order_update',
    language: 'en_US',
    category: 'UTILITY',
    variables: '{}',
    header_variables: null,
    rendered: '{"body":"hi"}',
    status,
    attempts: 1,
    due_at: status === 'QUEUED' ? at + 365 * DAY_MS : null,
    lease_expires_at: null,
    provider_message_id: null,
    error: null,
    queued_at: at,
    sent_at: null,
    delivered_at: null,
    read_at: null,
    failed_at: null,
    updated_at: options.updatedAt ?? at + 1000,
    scheduled_for: null,
    canceled_at: null,
    batch_id: options.batchId ?? null,
  };
}
