// The thread that owns svc's SQLite writer connection (see sqliteWriter.ts). It runs the
// statements the main thread sends it, one at a time in the order sent, and answers each on the
// reply port; the commits' fsyncs and SQLite's busy waits happen here, never on the event loop
// that answers requests.
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from './sqlite.ts';
import type { WriterReply, WriterRequest } from './sqliteWriterProtocol.ts';

const { path, replies, answered } = workerData as { path: string; replies: MessagePort; answered: SharedArrayBuffer };
const counter = new Int32Array(answered);

let writer: ReturnType<typeof openSqlite> | undefined;
let openError: unknown;
try {
  writer = openSqlite(path);
} catch (error) {
  openError = error;
}

function errorOf(error: unknown): WriterReply['error'] {
  const { message, code, errcode, errstr } = (error ?? {}) as Record<string, unknown>;
  return {
    message: typeof message === 'string' ? message : String(error),
    ...(typeof code === 'string' && { code }),
    ...(typeof errcode === 'number' && { errcode }),
    ...(typeof errstr === 'string' && { errstr }),
  };
}

function run(request: WriterRequest): Omit<WriterReply, 'id'> {
  if (writer === undefined) return { error: errorOf(openError) };
  switch (request.op) {
    case 'query': {
      const statement = writer.prepare(request.sql);
      if (statement.reader) return { rows: statement.all(request.parameters) as unknown[] };
      const { changes, lastInsertRowid } = statement.run(request.parameters);
      return { changes: changes === undefined ? undefined : Number(changes), lastInsertRowid };
    }
    case 'each': {
      const statement = writer.prepare(request.sql);
      let changes = 0;
      for (const parameters of request.parameterSets) changes += Number(statement.run(parameters).changes);
      return { changes };
    }
    case 'syncing':
      writer.setSyncing(request.syncing);
      return {};
    case 'close':
      writer.close();
      writer = undefined;
      openError = new Error('the SQLite writer is closed');
      return {};
  }
}

parentPort!.on('message', (request: WriterRequest) => {
  let reply: WriterReply;
  try {
    reply = { id: request.id, ...run(request) };
  } catch (error) {
    reply = { id: request.id, error: errorOf(error) };
  }
  replies.postMessage(reply);
  // After the reply is on the port: a main thread waiting on the counter then finds it there.
  Atomics.add(counter, 0, 1);
  Atomics.notify(counter, 0);
  if (request.op === 'close') parentPort!.close();
});
