// The load generator, in its own process: autocannon POSTs a message body to one URL for a fixed
// duration, each request to a distinct recipient, and prints its result as one JSON line.
// Usage: node bench/loadgen.ts '{"url":…,"connections":64,"durationS":10,"key":…,"firstIndex":0}'
import autocannon from 'autocannon';
import { messageBody } from './svc.ts';

interface LoadOptions {
  url: string;
  connections: number;
  durationS: number;
  key?: string;
  firstIndex?: number;
}

const options = JSON.parse(process.argv[2]!) as LoadOptions;
let next = options.firstIndex ?? 0;

const result = await autocannon({
  url: options.url,
  connections: options.connections,
  duration: options.durationS,
  timeout: 30,
  requests: [
    {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(options.key && { authorization: `Bearer ${options.key}` }),
      },
      setupRequest: (request: any) => ({ ...request, body: JSON.stringify(messageBody(next++)) }),
    },
  ],
});

const statuses: Record<string, number> = {};
for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = (stats as { count: number }).count;
console.log(
  'RESULT ' +
    JSON.stringify({
      durationS: result.duration,
      sent: next - (options.firstIndex ?? 0),
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
