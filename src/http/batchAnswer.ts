import type { BatchOutcome } from '../sending/sendMessages.ts';
import { problemOf } from './errors.ts';
import { acceptedMessageJson } from './messageView.ts';

/**
 * The 202 body of POST /v1/messages/batch, written as bytes (also stored for idempotent replays):
 * each item in request order, its accepted message or its own problem.
 */
export function batchAnswerJson(outcome: BatchOutcome, requestId: string): string {
  const items = outcome.items.map((item) =>
    'message' in item
      ? `{"index":${item.index},"status":202,"message":${acceptedMessageJson(item.message)}}`
      : `{"index":${item.index},"status":${item.error.status},"error":${JSON.stringify(problemOf(item.error, requestId))}}`,
  );
  return (
    `{"batchId":"${outcome.batchId}","acceptedCount":${outcome.acceptedCount},"rejectedCount":${outcome.rejectedCount},` +
    `"items":[${items.join(',')}]}`
  );
}
