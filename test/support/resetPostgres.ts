// Before a test run: drops the schemas that earlier runs left in SVC_TEST_POSTGRES_URL's database.
// Only those created over an hour ago (the name starts with its creation time), so a run going on
// beside this one on the same server keeps its schemas.
import pg from 'pg';

const maxAgeSeconds = 3600;
const url = process.env.SVC_TEST_POSTGRES_URL;
if (url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      "select nspname as name from pg_namespace where nspname ~ '^t_([0-9a-f]{12}|[0-9a-f]{16})$'",
    );
    const now = Date.now() / 1000;
    const stale = rows.filter(({ name }) => {
      if (name.length === 14) return true; // the older naming, without a creation time
      return now - Number.parseInt(name.slice(2, 10), 16) > maxAgeSeconds;
    });
    for (const { name } of stale) await client.query(`drop schema if exists ${name} cascade`);
    if (stale.length > 0) console.log(`dropped ${stale.length} test schemas left by earlier runs`);
  } finally {
    await client.end();
  }
}
