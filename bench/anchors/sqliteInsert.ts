// Anchor: Fastify + one SQLite row per request (node:sqlite, WAL, synchronous=FULL), answered
// after its commit. Without --group-commit each request commits alone (one fsync each); with it,
// requests that arrive while a commit runs are committed together in the next transaction.
// Usage: node bench/anchors/sqliteInsert.ts <file> [--group-commit]
import { DatabaseSync } from 'node:sqlite';
import { randomUUID } from 'node:crypto';
import { serveMessages } from './messageRoute.ts';

const db = new DatabaseSync(process.argv[2]!);
db.exec('PRAGMA journal_mode = WAL');
db.exec('PRAGMA synchronous = FULL');
db.exec('create table if not exists messages (id text primary key, body text not null, status text not null, created_at integer not null)');
const insert = db.prepare('insert into messages (id, body, status, created_at) values (?, ?, ?, ?)');
const row = (body: unknown) => [randomUUID(), JSON.stringify(body), 'QUEUED', Date.now()] as const;

if (!process.argv.includes('--group-commit')) {
  await serveMessages((body) => {
    insert.run(...row(body));
  });
} else {
  let pending: { body: unknown; done: () => void; failed: (error: unknown) => void }[] = [];
  let scheduled = false;
  // node:sqlite is synchronous: while a commit runs, new requests wait in the sockets; they are
  // parsed in the next turn of the event loop and joined into the next transaction here.
  const flush = () => {
    scheduled = false;
    const batch = pending;
    pending = [];
    try {
      db.exec('BEGIN');
      for (const item of batch) insert.run(...row(item.body));
      db.exec('COMMIT');
      for (const item of batch) item.done();
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      for (const item of batch) item.failed(error);
    }
  };
  await serveMessages(
    (body) =>
      new Promise<void>((done, failed) => {
        pending.push({ body, done, failed });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      }),
  );
}
