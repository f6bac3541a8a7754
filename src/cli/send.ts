import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Message, Problem } from '#sdk';
import { type Session, signedIn } from './api.ts';
import { collect, leaf, runs } from './command.ts';
import {
  type BatchItem,
  type BatchSettings,
  type BatchState,
  type CsvRow,
  rowIdentity,
  runKeyOf,
  chunkKey,
  chunksOf,
  fingerprintOf,
  loadState,
  MAX_CHUNK,
  type RejectedRow,
  rowsOf,
  bareButtonColumns,
  type ButtonField,
  saveState,
  statePathFor,
} from './csvBatch.ts';
import { CliError, EXIT, usageError } from './exitCodes.ts';
import { FINAL_STATUSES, routeLabel, statusLine, timelineOf } from './messageView.ts';
import type { Output } from './output.ts';
import { onInterrupt, parseDuration, pollUntil, sleep } from './waiting.ts';

// svc send: one message (and --follow it to a final status), or a batch from a CSV file.

interface SendOptions {
  json?: boolean;
  to?: string;
  template: string;
  language: string;
  var?: string[];
  headerVar?: string[];
  sendAt?: string;
  idempotencyKey?: string;
  follow?: boolean;
  timeout?: string;
  csv?: string;
  chunkSize?: string;
  state?: string;
}

/** `1=Ana` options as { "1": "Ana" } (the value may hold `=`). */
export function variablesOf(pairs: string[] | undefined, option: string): Record<string, string> | undefined {
  if (!pairs || pairs.length === 0) return undefined;
  const variables: Record<string, string> = {};
  for (const pair of pairs) {
    const match = /^([1-9][0-9]*)=(.*)$/s.exec(pair);
    if (!match) throw usageError(`${option} takes N=value (N a placeholder number, e.g. 1=Ana), not "${pair}"`);
    if (match[1]! in variables) throw usageError(`${option} ${match[1]} is given twice`);
    variables[match[1]!] = match[2]!;
  }
  return variables;
}

async function sendOne(out: Output, options: SendOptions): Promise<void> {
  if (!options.to) throw usageError('give --to (one recipient) or --csv (a file of them)');
  const timeoutMs = options.timeout === undefined ? undefined : parseDuration(options.timeout);
  const variables = variablesOf(options.var, '--var');
  const headerVariables = variablesOf(options.headerVar, '--header-var');
  const api = signedIn();
  const message = await api.call(
    api.svc.POST('/v1/messages', {
      body: {
        to: options.to,
        template: options.template,
        language: options.language,
        ...(variables && { variables }),
        ...(headerVariables && { headerVariables }),
        ...(options.sendAt !== undefined && { sendAt: options.sendAt }),
      },
      // Without one, the SDK makes a key for this call (its own retries reuse it).
      ...(options.idempotencyKey !== undefined && { headers: { 'idempotency-key': options.idempotencyKey } }),
    }),
  );
  const scheduled = message.scheduledFor ? `, scheduled for ${message.scheduledFor}` : '';
  if (!options.follow) {
    out.result(message, () => `Queued ${message.id} to ${message.to} (${message.template}, ${message.language})${scheduled}.`);
    return;
  }
  out.line(`${message.id} to ${message.to} (${message.template}, ${message.language})${scheduled}`);
  const final = await follow(out, api, message, timeoutMs);
  if (out.json) out.result(final, () => '');
  if (final.status !== 'READ') process.exitCode = EXIT.unfavourable;
}

/** Prints each status the message reaches until a final one (READ, FAILED, CANCELED); returns it then. */
async function follow(out: Output, api: Session, first: Message, timeoutMs: number | undefined): Promise<Message> {
  const printed = new Set<string>();
  const show = (message: Message) => {
    for (const step of timelineOf(message)) {
      if (printed.has(step.status)) continue;
      printed.add(step.status);
      out.line(statusLine(step.status, step.at, message));
    }
    // Which provider API took it, once it did (Cloud API, or the Marketing Messages API).
    if (message.route && !printed.has('route')) {
      printed.add('route');
      out.line(`  via ${routeLabel(message.route)}`);
    }
  };
  show(first);
  const spinner = out.spinner(`${first.status}…`);
  const stopOnInterrupt = onInterrupt(() => spinner.stop());
  try {
    return await pollUntil(
      async () => {
        const shown = await api.call(api.svc.GET('/v1/messages/{id}', { params: { path: { id: first.id } } }));
        spinner.clear();
        show(shown);
        if (FINAL_STATUSES.has(shown.status)) return shown;
        spinner.update(`${shown.status}…`);
        return undefined;
      },
      { intervalMs: 500, ...(timeoutMs !== undefined && { timeoutMs }), what: `message ${first.id} to reach READ, FAILED or CANCELED` },
    );
  } finally {
    spinner.stop();
    stopOnInterrupt();
  }
}

/**
 * What each button of the template takes at a send, by index (a `button.N` column's value): the
 * template is looked up by name and language through the API.
 */
async function buttonFieldsOf(api: Session, name: string, language: string): Promise<Map<number, ButtonField>> {
  for await (const template of api.paginate('/v1/templates', { limit: 200 })) {
    if (template.name !== name || template.language !== language) continue;
    const buttons = template.components.find((component) => component.type === 'BUTTONS')?.buttons ?? [];
    const fields = new Map<number, ButtonField>();
    buttons.forEach((button, index) => {
      if (button.type === 'URL' && button.url?.endsWith('{{1}}')) fields.set(index, 'text');
      if (button.type === 'QUICK_REPLY') fields.set(index, 'payload');
      if (button.type === 'COPY_CODE') fields.set(index, 'couponCode');
    });
    return fields;
  }
  throw usageError(`no template '${name}' (${language}) in this project: its buttons say what the button.N columns fill`);
}

/** POSTs one chunk with its key; an answer still being made under the same key (409) is waited for. */
async function sendChunk(api: Session, settings: BatchSettings, items: BatchItem[], key: string) {
  const body = {
    template: settings.template,
    language: settings.language,
    items: items.map((item) => ({ ...item, ...(settings.sendAt !== undefined && item.sendAt === undefined && { sendAt: settings.sendAt }) })),
  };
  for (let attempt = 1; ; attempt++) {
    try {
      return await api.call(api.svc.POST('/v1/messages/batch', { body, headers: { 'idempotency-key': key } }));
    } catch (error) {
      const inProgress = (error as CliError).problem as Problem | undefined;
      if (attempt >= 10 || inProgress?.code !== 'idempotency_request_in_progress') throw error;
      await sleep(1000);
    }
  }
}

async function sendCsv(out: Output, options: SendOptions): Promise<void> {
  const chunkSize = options.chunkSize === undefined ? MAX_CHUNK : Number(options.chunkSize);
  if (!Number.isInteger(chunkSize) || chunkSize < 1 || chunkSize > MAX_CHUNK) {
    throw usageError(`--chunk-size must be a whole number from 1 to ${MAX_CHUNK}`);
  }
  let content: Buffer;
  try {
    content = readFileSync(options.csv!);
  } catch (error) {
    throw usageError(`cannot read ${options.csv}: ${(error as Error).message}`);
  }
  const text = content.toString('utf8');
  // `button.N` columns: the template says which value each fills (a lookup only then).
  const buttonFields = bareButtonColumns(text).length > 0 ? await buttonFieldsOf(signedIn(), options.template, options.language) : new Map();
  const rows = rowsOf(text, buttonFields);
  const settings: BatchSettings = {
    template: options.template,
    language: options.language,
    chunkSize,
    ...(options.sendAt !== undefined && { sendAt: options.sendAt }),
  };
  const fingerprint = fingerprintOf(content, settings);
  const statePath = statePathFor(options.csv!, options.state);
  const fresh: BatchState = { version: 2, fingerprint, template: settings.template, language: settings.language, total: rows.length, chunks: {}, carried: [], accepted: [] };
  const { state, resumed } = loadState(statePath, fresh);
  // Rows accepted by a run over an earlier content of this file (same recipient, template and
  // language) are not sent again: fixing the rejected rows and re-running sends those only.
  const identity = (row: CsvRow) => rowIdentity(settings.template, settings.language, row.item);
  const carried = new Set(state.carried);
  const skipped = rows.filter((row) => carried.has(identity(row)));
  const toSend = rows.filter((row) => !carried.has(identity(row)));
  if (skipped.length > 0) {
    out.note(`${skipped.length} of ${rows.length} rows were accepted by an earlier run over this file (same recipient, template and language): not sent again.`);
  }
  const chunks = chunksOf(toSend, chunkSize);
  // The chunks' keys name the content and the rows left out: the same on a resumed run, new when
  // what is sent differs (the same key with another body would be refused by svc).
  const runKey = runKeyOf(fingerprint, state.carried);
  const api = signedIn();

  const doneBefore = Object.keys(state.chunks).length;
  if (resumed && doneBefore > 0) out.note(`Resuming: ${doneBefore} of ${chunks.length} chunks were sent before (${statePath}).`);
  const rowsDone = () => chunks.reduce((sum, chunk, index) => sum + (state.chunks[index] ? chunk.length : 0), 0);
  const bar = out.progress(toSend.length, `${options.template} (${options.language})`);
  bar.set(rowsDone());
  const stopOnInterrupt = onInterrupt(() => bar.stop());
  try {
    for (const [index, chunk] of chunks.entries()) {
      if (state.chunks[index]) continue;
      let answer: Awaited<ReturnType<typeof sendChunk>>;
      try {
        answer = await sendChunk(api, settings, chunk.map((row) => row.item), chunkKey(runKey, index));
      } catch (error) {
        if (error instanceof CliError) {
          throw new CliError(`chunk ${index + 1} of ${chunks.length} (rows ${chunk[0]!.row}–${chunk.at(-1)!.row}): ${error.message}`, error.exitCode, {
            details: [...error.details, `  run the same command again to resume: nothing already sent is sent twice`],
            problem: error.problem,
          });
        }
        throw error;
      }
      const rejected: RejectedRow[] = answer.items.flatMap((item) =>
        'error' in item
          ? [{ row: chunk[item.index]!.row, to: chunk[item.index]!.item.to, status: item.status, code: item.error.code, detail: item.error.detail }]
          : [],
      );
      state.chunks[index] = { batchId: answer.batchId, acceptedCount: answer.acceptedCount, rejectedCount: answer.rejectedCount, rejected };
      const accepted = new Set(state.accepted);
      for (const item of answer.items) if (!('error' in item)) accepted.add(identity(chunk[item.index]!));
      state.accepted = [...accepted];
      saveState(statePath, state);
      bar.set(rowsDone());
    }
  } finally {
    bar.stop();
    stopOnInterrupt();
  }

  const results = chunks.map((_, index) => state.chunks[index]!);
  const summary = {
    file: options.csv,
    template: settings.template,
    language: settings.language,
    total: rows.length,
    skippedCount: skipped.length,
    skipped: skipped.map((row) => ({ row: row.row, to: row.item.to })),
    acceptedCount: results.reduce((sum, chunk) => sum + chunk.acceptedCount, 0),
    rejectedCount: results.reduce((sum, chunk) => sum + chunk.rejectedCount, 0),
    batches: results.map((chunk, index) => ({ index, batchId: chunk.batchId, acceptedCount: chunk.acceptedCount, rejectedCount: chunk.rejectedCount })),
    rejected: results.flatMap((chunk) => chunk.rejected),
    statePath,
  };
  out.result(summary, () =>
    [
      `${summary.total} rows of ${summary.file}, ${settings.template} (${settings.language}), ${toSend.length} sent in ${results.length} batch${results.length === 1 ? '' : 'es'}:`,
      `  accepted ${summary.acceptedCount}, rejected ${summary.rejectedCount}` +
        (summary.skippedCount > 0 ? `, skipped ${summary.skippedCount} accepted by an earlier run (not sent again)` : ''),
      ...summary.rejected.slice(0, 20).map((row) => `  row ${row.row} (${row.to || 'no number'}): ${row.status} ${row.code}: ${row.detail}`),
      ...(summary.rejected.length > 20 ? [`  … and ${summary.rejected.length - 20} more (--json lists them all)`] : []),
      `Batches: ${summary.batches.map((batch) => batch.batchId).join(', ')}  (svc messages list --batch ID)`,
      `State: ${statePath} (a re-run sends nothing twice, even after edits: only rows not yet accepted; delete it to start afresh)`,
    ].join('\n'),
  );
  if (summary.rejectedCount > 0) process.exitCode = EXIT.unfavourable;
}

export function registerSendCommand(program: Command): void {
  const send = leaf(program, 'send', 'send a templated message, or one to each row of a CSV file')
    .requiredOption('--template <name>', 'an APPROVED template’s name')
    .requiredOption('--language <code>', 'the language it was approved in, e.g. pt_BR')
    .option('--to <number>', 'the recipient, E.164 (+5511987654321)')
    .option('--var <N=value>', 'a BODY placeholder value, e.g. --var 1=Ana (repeat for each)', collect)
    .option('--header-var <N=value>', 'a HEADER placeholder value', collect)
    .option('--send-at <time>', 'send later: an ISO 8601 time within 35 days')
    .option('--idempotency-key <key>', 'make a retry of this command safe (default: a new key each run)')
    .option('--follow', 'print each status until READ, FAILED or CANCELED (exit 4 unless READ)')
    .option('--timeout <duration>', 'with --follow, give up after this long (exit 5), e.g. 2m')
    .option('--csv <file>', 'send to each row: a "to" column, then 1, 2, … (body) and header.1 (header) columns')
    .option('--chunk-size <n>', `with --csv, rows per batch request (at most ${MAX_CHUNK})`)
    .option('--state <file>', 'with --csv, where to keep the progress (default: next to the CSV)')
    .addHelpText(
      'after',
      `
A CSV batch is resumable: each chunk of rows is sent with an Idempotency-Key made from the
file's content, the template, language and --send-at, and the chunk's number, and each answer
is saved in the state file. Run the same command again after an interruption: chunks already
answered are skipped, and a chunk whose answer was lost is answered again by the API from its
key (within 24 hours) instead of being sent twice. The state also remembers every row svc
accepted (by recipient, template and language): after editing the file (fixing its rejected
rows, adding rows), a re-run sends only the rows not accepted before, and says how many it
skipped. Delete the state file (or pass another --state) to send to everyone again.`,
    );
  runs<SendOptions>(send, async (out, options) => {
    if (options.csv !== undefined) {
      const single = (['to', 'var', 'headerVar', 'follow', 'idempotencyKey'] as const).filter((name) => options[name] !== undefined);
      if (single.length > 0) throw usageError(`--csv takes its recipients and variables from the file; drop --${single.map(kebab).join(', --')}`);
      return sendCsv(out, options);
    }
    if (options.chunkSize !== undefined || options.state !== undefined) throw usageError('--chunk-size and --state go with --csv');
    return sendOne(out, options);
  });
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}
