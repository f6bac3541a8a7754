// Before a test run: drops the schemas that earlier runs left in SVC_TEST_POSTGRES_URL's database,
// the databases they left on its server, and templates of older migrations.
// Only those created over an hour ago (the name starts with its creation time), so a run going on
// beside this one on the same server keeps its schemas.
import pg from 'pg';
import { dropStaleTemplates } from './migratedTemplates.ts';

const maxAgeSeconds = 3600;
const url = process.env.SVC_TEST_POSTGRES_URL;
if (url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const now = Date.now() / 1000;
    const isStale = (name: string) =>
      name.length === 14 /* the older naming, without a creation time */ ||
      now - Number.parseInt(name.slice(2, 10), 16) > maxAgeSeconds;
    const testNames = "~ '^t_([0-9a-f]{12}|[0-9a-f]{16})$'";
    const schemas = (await client.query<{ name: string }>(`select nspname as name from pg_namespace where nspname ${testNames}`))
      .rows.map(({ name }) => name).filter(isStale);
    for (const name of schemas) await client.query(`drop schema if exists ${name} cascade`);
    // A test's migrated database is a database of its own (test/support/migratedTemplates.ts).
    const databases = (await client.query<{ name: string }>(`select datname as name from pg_database where datname ${testNames}`))
      .rows.map(({ name }) => name).filter(isStale);
    for (const name of databases) await client.query(`drop database if exists ${name} with (force)`);
    const templates = await dropStaleTemplates(client);
    if (schemas.length + databases.length + templates > 0) {
      console.log(`dropped ${schemas.length} test schemas, ${databases.length} test databases and ${templates} templates left by earlier runs`);
    }
  } finally {
    await client.end();
  }
}
