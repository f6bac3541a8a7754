// What the receivers process (bench/receivers.ts) has counted, read from its control URL.

/** Distinct webhooks received, per receiver name. */
export async function receiverCounts(control: string): Promise<Record<string, number>> {
  return (await (await fetch(`${control}/_counts`, { signal: AbortSignal.timeout(60_000) })).json()) as Record<string, number>;
}

/** Distinct webhooks received by all receivers together. */
export async function receivedTotal(control: string): Promise<number> {
  return Object.values(await receiverCounts(control)).reduce((sum, n) => sum + n, 0);
}
