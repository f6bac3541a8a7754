/**
 * A figure that costs a query, for metrics: computed at most once per `everyMs` however often it
 * is scraped (a failed sample is retried at the next scrape).
 */
export function sampled<T>(compute: () => Promise<T>, everyMs = 10_000): () => Promise<T> {
  let sampledAt = 0;
  let sample: Promise<T> | undefined;
  return () => {
    const now = Date.now();
    if (!sample || now - sampledAt >= everyMs) {
      sampledAt = now;
      sample = compute();
      sample.catch(() => (sampledAt = 0));
    }
    return sample;
  };
}
