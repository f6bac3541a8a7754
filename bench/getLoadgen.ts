// The load generator of the reads scenario, in its own process: autocannon GETs one URL for a
// fixed duration and prints its result as one JSON line (the fields of loadgen.ts).
// Usage: node bench/getLoadgen.ts '{"url":…,"connections":64,"durationS":10,"key":…}'
import autocannon from 'autocannon';

const options = JSON.parse(process.argv[2]!) as { url: string; connections: number; durationS: number; key?: string };
const result = await autocannon({
  url: options.url,
  connections: options.connections,
  duration: options.durationS,
  timeout: 30,
  headers: options.key ? { authorization: `Bearer ${options.key}` } : {},
});
const statuses: Record<string, number> = {};
for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = (stats as { count: number }).count;
console.log(
  'RESULT ' +
    JSON.stringify({
      durationS: result.duration,
      sent: result.requests.sent,
      answered: Object.values(statuses).reduce((sum, n) => sum + n, 0),
      ok2xx: result['2xx'],
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      statuses,
      latencyP50: result.latency.p50,
      latencyP99: result.latency.p99,
      latencyMax: result.latency.max,
    }),
);
