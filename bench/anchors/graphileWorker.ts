// Anchor: graphile-worker with its default settings, running no-op jobs from its own schema.
// The harness queues the jobs (queueGraphileJobs) before starting this process; it prints
// "worker ready" once the runner is up and runs until it is stopped.
// Usage: node bench/anchors/graphileWorker.ts <connection string> <schema>
import { Logger, makeWorkerUtils, run, runMigrations } from 'graphile-worker';

const silent = new Logger(() => () => {});

/** Creates the schema and adds `count` no-op jobs in one add_jobs call. */
export async function queueGraphileJobs(connectionString: string, schema: string, count: number): Promise<void> {
  await runMigrations({ connectionString, schema, logger: silent });
  const utils = await makeWorkerUtils({ connectionString, schema, logger: silent });
  try {
    await utils.addJobs(Array.from({ length: count }, (_, i) => ({ identifier: 'noop', payload: { i } })));
  } finally {
    await utils.release();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [connectionString, schema] = process.argv.slice(2);
  const runner = await run({
    connectionString,
    schema,
    logger: silent,
    noHandleSignals: true,
    taskList: { noop: async () => {} },
  });
  console.log('worker ready');
  const stop = () => void runner.stop().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
