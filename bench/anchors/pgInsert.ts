// Anchor: Fastify + one PostgreSQL row per request through a pg Pool (its default size, 10), no
// batching: each request is its own commit (PostgreSQL groups concurrent WAL flushes itself).
// Usage: node bench/anchors/pgInsert.ts <connection string>
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { serveMessages } from './messageRoute.ts';

const pool = new pg.Pool({ connectionString: process.argv[2]! });
await pool.query('create table if not exists messages (id text primary key, body text not null, status text not null, created_at bigint not null)');
await serveMessages(async (body) => {
  await pool.query('insert into messages (id, body, status, created_at) values ($1, $2, $3, $4)', [
    randomUUID(),
    JSON.stringify(body),
    'QUEUED',
    Date.now(),
  ]);
});
