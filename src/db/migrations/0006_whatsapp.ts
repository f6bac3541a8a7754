import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // What the provider says of each project's sending number and business account, refreshed
  // periodically (check_due_at). Projects that saved credentials before these checks existed
  // get a row due at once.
  await db.schema
    .createTable('provider_accounts')
    .addColumn('project_id', 'text', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('credentials_updated_at', 'bigint', (c) => c.notNull())
    .addColumn('business_account_id', 'text')
    .addColumn('display_phone_number', 'text')
    .addColumn('verified_name', 'text')
    .addColumn('quality_rating', 'text')
    .addColumn('webhooks_subscribed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('problem', 'text')
    .addColumn('checked_at', 'bigint')
    .addColumn('check_due_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('provider_accounts_due').on('provider_accounts').columns(['check_due_at']).execute();
  await db.schema.createIndex('provider_accounts_business_account').on('provider_accounts').columns(['business_account_id']).execute();
  await sql`
    insert into provider_accounts (project_id, credentials_updated_at, webhooks_subscribed, check_due_at)
    select id, coalesce(credentials_updated_at, updated_at), 0, 0 from projects
    where provider_phone_number_id is not null and provider_access_token_enc is not null`.execute(db);

  // Meta's finer template states, its reasons, and the category changes it makes.
  for (const [column, type] of [
    ['provider_status', 'text'],
    ['provider_status_reason', 'text'],
    ['provider_status_at', 'bigint'],
    ['category_history', 'text'],
    ['upcoming_category', 'text'],
  ] as const) {
    await db.schema.alterTable('templates').addColumn(column, type).execute();
  }
  // Inbound statuses name the sending number: finding its projects is one index seek.
  await db.schema.createIndex('projects_phone_number').on('projects').columns(['provider_phone_number_id']).execute();
}
