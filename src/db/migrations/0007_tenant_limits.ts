import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Set by the operator (`svc projects disable`): every key of the project answers 401 meanwhile.
  await db.schema.alterTable('projects').addColumn('disabled_at', 'bigint').execute();
  // A project's active keys, newest first: the paged list, and the count the per-project cap
  // checks, without walking the revoked ones.
  await db.schema
    .createIndex('api_keys_active')
    .on('api_keys')
    .columns(['project_id', 'id'])
    .where(sql.ref('revoked_at'), 'is', null)
    .execute();
}
