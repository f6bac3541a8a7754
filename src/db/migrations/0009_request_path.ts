import { type Kysely, sql } from 'kysely';

// The leased rows of the two queues whose workers ask when their next row falls due (nextDueAt in
// db/claims.ts): with these, that question is two index seeks instead of a scan of the table,
// which ran after every sandbox batch and grew with the reports waiting (two per message sent).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('sandbox_reports_leased')
    .on('sandbox_reports')
    .column('lease_expires_at')
    .where(sql.ref('lease_expires_at'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('templates_review_leased')
    .on('templates')
    .column('lease_expires_at')
    .where(sql.ref('lease_expires_at'), 'is not', null)
    .execute();
}
