import type { Config } from './config.ts';
import { openDatabase } from './db/database.ts';
import { isSchemaCurrent, SchemaError } from './db/migrate.ts';
import { setProjectDisabled } from './db/projects.ts';

export class UnknownProjectError extends Error {
  override name = 'UnknownProjectError';
}

/**
 * The operator's switch (`svc projects disable|enable ID`): a disabled project's keys answer 401
 * in every API process from their next request (the key lookup reads the flag); enabling it
 * gives them back. Returns what was done, for the operator.
 */
export async function switchProject(config: Config, projectId: string, disabled: boolean): Promise<string> {
  const database = openDatabase(config.databaseUrl, { poolSize: 1 });
  try {
    if (!(await isSchemaCurrent(database.db))) {
      throw new SchemaError('the database schema is not current; run `svc migrate` first');
    }
    if (!(await setProjectDisabled(database.db, projectId, disabled ? Date.now() : null))) {
      throw new UnknownProjectError(`no project has the id ${JSON.stringify(projectId)}`);
    }
    return disabled
      ? `project ${projectId} disabled: its API keys answer 401 until \`svc projects enable ${projectId}\``
      : `project ${projectId} enabled: its API keys work again`;
  } finally {
    await database.close();
  }
}
