import { Command, Option } from 'commander';
import { createApp } from './app.ts';
import { ConfigError, loadConfig, type Role } from './config.ts';
import { openDatabase } from './db/database.ts';
import { migrateToLatest, SchemaError } from './db/migrate.ts';

function fail(error: unknown): never {
  if (error instanceof ConfigError) console.error(`svc: configuration: ${error.message}`);
  else if (error instanceof SchemaError) console.error(`svc: ${error.message}`);
  else console.error('svc: failed to start:', error);
  process.exit(1);
}

async function serve(role: Role): Promise<void> {
  const config = loadConfig();
  const app = await createApp(config, { role });
  const url = await app.start();
  app.logger.info({ role, url, provider: config.provider }, 'svc started');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      app.logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs + 1500);
    deadline.unref();
    try {
      await app.stop();
      process.exit(0);
    } catch (error) {
      app.logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

async function migrate(): Promise<void> {
  const config = loadConfig();
  const database = openDatabase(config.databaseUrl, { poolSize: 1 });
  try {
    const applied = await migrateToLatest(database.db, database.dialect);
    console.log(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'the schema is up to date');
  } finally {
    await database.close();
  }
}

const program = new Command('svc').description('Outbound business-messaging service');
program
  .command('serve')
  .description('run the service: the HTTP API, the workers, or both')
  .addOption(
    new Option('--role <role>', 'what this process runs').choices(['api', 'worker', 'all']).default('all'),
  )
  .action((options: { role: Role }) => serve(options.role).catch(fail));
program
  .command('migrate')
  .description('bring the database schema up to date and exit')
  .action(() => migrate().catch(fail));

await program.parseAsync(process.argv);
