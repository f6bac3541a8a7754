// Exits non-zero, loudly, when SVC_TEST_POSTGRES_URL is unset or PostgreSQL does not answer.
import pg from 'pg';

const url = process.env.SVC_TEST_POSTGRES_URL;
if (!url) {
  console.error('SVC_TEST_POSTGRES_URL is not set: the PostgreSQL tests would be skipped.');
  process.exit(1);
}
const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
try {
  await client.connect();
  const { rows } = await client.query('select version() as version');
  console.log(`PostgreSQL reachable: ${rows[0].version.split(' ').slice(0, 2).join(' ')}`);
} catch (error) {
  console.error(`PostgreSQL at ${url} is unreachable: ${(error as Error).message}`);
  process.exit(1);
} finally {
  await client.end().catch(() => {});
}
