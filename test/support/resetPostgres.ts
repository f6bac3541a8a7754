// Before a test run: drops the schemas earlier runs left in SVC_TEST_POSTGRES_URL's database.
import pg from 'pg';

const url = process.env.SVC_TEST_POSTGRES_URL;
if (url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      "select nspname as name from pg_namespace where nspname ~ '^t_[0-9a-f]{12}$'",
    );
    for (const { name } of rows) await client.query(`drop schema if exists ${name} cascade`);
    if (rows.length > 0) console.log(`dropped ${rows.length} test schemas left by earlier runs`);
  } finally {
    await client.end();
  }
}
