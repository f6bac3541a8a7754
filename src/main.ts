import { readFileSync } from 'node:fs';
import { enableCompileCache } from 'node:module';
import { Command, Option } from 'commander';
import type { Role } from './config.ts';
import { registerClientCommands } from './cli/index.ts';
import { stopWithParent } from './cli/parentWatch.ts';

// The service's own commands (serve, migrate, projects disable|enable) load the service's
// modules when they run, so the client commands (src/cli) start without them.

// Node keeps what it compiled of each module (the TypeScript stripped, the bytecode) on disk
// (os.tmpdir()/node-compile-cache, or NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it
// off), so the next start compiles only what changed (a third of the CPU to load the service,
// two thirds of a CLI command's). It covers what loads from here on, the service's modules
// included; bin/svc.js turns it on before this file.
enableCompileCache();

async function fail(error: unknown): Promise<never> {
  console.error(`svc: ${await startupErrorLine(error)}`);
  process.exit(1);
}

/** One line a person can act on, for the failures an operator meets at start-up. */
async function startupErrorLine(error: unknown): Promise<string> {
  const [{ ConfigError }, { SchemaError }, { isDatabaseUnavailable }] = await Promise.all([
    import('./config.ts'),
    import('./db/migrate.ts'),
    import('./db/unavailable.ts'),
  ]);
  if (error instanceof ConfigError) return `configuration: ${error.message}`;
  if (error instanceof SchemaError) return error.message;
  const { code, address, port, path, message } = error as NodeJS.ErrnoException & { address?: string; port?: number };
  if (code === 'EADDRINUSE') {
    return `cannot listen on ${address ?? 'the address'}:${port ?? '?'}: it is already in use (set PORT, or SVC_OPS_PORT for the operator port)`;
  }
  if (code === 'EACCES' && port !== undefined) return `cannot listen on port ${port}: permission denied (use a port above 1023)`;
  if (code === 'EADDRNOTAVAIL') return `cannot listen on ${address}: no such address on this machine (check HOST)`;
  if ((code === 'EACCES' || code === 'EROFS' || code === 'ENOENT') && path !== undefined) {
    return `cannot open ${path}: ${code} (check SVC_DATABASE_URL and the folder's permissions)`;
  }
  if (isDatabaseUnavailable(error)) {
    return `cannot reach the database at ${databaseLocation()}: ${code ?? message} (is it running? check SVC_DATABASE_URL)`;
  }
  return `failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
}

/** The database URL without its password, for messages. */
function databaseLocation(): string {
  const raw = process.env.SVC_DATABASE_URL ?? 'sqlite:./data/svc.db';
  if (!URL.canParse(raw) || raw.startsWith('sqlite:')) return raw;
  const url = new URL(raw);
  if (url.password) url.password = '***';
  return `${url.protocol}//${url.username ? `${url.username}@` : ''}${url.host}${url.pathname}`;
}

async function serve(role: Role): Promise<void> {
  const [{ loadConfig }, { createApp }] = await Promise.all([import('./config.ts'), import('./app.ts')]);
  const config = loadConfig(process.env, role);
  const app = await createApp(config, { role });
  const url = await app.start();
  app.logger.info({ role, url, opsUrl: app.opsUrl, provider: config.provider }, 'svc started');

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

async function migrate(options: { vacuum?: boolean }): Promise<void> {
  const [{ loadConfig }, { openDatabase }, { migrateToLatest }, { enableIncrementalVacuum }] = await Promise.all([
    import('./config.ts'),
    import('./db/database.ts'),
    import('./db/migrate.ts'),
    import('./db/retention.ts'),
  ]);
  const config = loadConfig();
  const database = openDatabase(config.databaseUrl, { poolSize: 1 });
  try {
    const applied = await migrateToLatest(database.db);
    console.log(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'the schema is up to date');
    const switched = options.vacuum ? await enableIncrementalVacuum(database.db) : undefined;
    if (switched !== undefined) console.log(switched ? 'vacuumed: the file now shrinks as data is purged' : 'incremental vacuum already on');
  } finally {
    await database.close();
  }
}

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
const program = new Command('svc')
  .description('Outbound business-messaging service')
  .version(version, '-V, --version', 'print svc\'s version');
stopWithParent();
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
  .option('--vacuum', 'SQLite: also rewrite a file made before svc shrank files (one-time VACUUM; stop the service first)')
  .action((options: { vacuum?: boolean }) => migrate(options).catch(fail));

async function projectSwitch(id: string, disabled: boolean): Promise<void> {
  const [{ loadConfig }, { switchProject, UnknownProjectError }] = await Promise.all([
    import('./config.ts'),
    import('./projectSwitch.ts'),
  ]);
  try {
    console.log(await switchProject(loadConfig(), id, disabled));
  } catch (error) {
    if (!(error instanceof UnknownProjectError)) return fail(error);
    console.error(`svc: ${error.message}`);
    process.exit(1);
  }
}

const projects = program.command('projects').description('operator commands for one project');
projects
  .command('disable <id>')
  .description('make every API key of the project answer 401, at once, in every API process')
  .action((id: string) => projectSwitch(id, true));
projects
  .command('enable <id>')
  .description('give a disabled project its API keys back')
  .action((id: string) => projectSwitch(id, false));

registerClientCommands(program, projects);

await program.parseAsync(process.argv);
