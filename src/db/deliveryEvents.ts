// The delivery log's event filter. Sent, delivered and read are each about a third of a project's
// deliveries: a page of one of them reads about three index entries per row through the project's
// own index. Every other event type is rare (a failure, a cancel, a template or test event), and
// is read through a partial index of the rare ones (migration 0014_keyed_by_project), which a query uses only when
// it states the index's condition word for word: this list is the migration's (the plan test
// test/db/queryPlans.test.ts fails if the two part).

export const COMMON_DELIVERY_EVENTS = ['message.sent', 'message.delivered', 'message.read'] as const;

export const COMMON_DELIVERY_EVENTS_SQL = COMMON_DELIVERY_EVENTS.map((event) => `'${event}'`).join(', ');

export function isCommonDeliveryEvent(event: string): boolean {
  return (COMMON_DELIVERY_EVENTS as readonly string[]).includes(event);
}
