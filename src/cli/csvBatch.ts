import { createHash } from 'node:crypto';
import { accessSync, constants, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { configDir } from './configStore.ts';
import { CsvError, parseCsv } from './csv.ts';
import { usageError } from './exitCodes.ts';

// A CSV file as batch sends (POST /v1/messages/batch): its rows as items, cut into chunks of at
// most 1,000, each chunk with an Idempotency-Key derived from the file's bytes, the send's
// settings and the chunk's index, so a re-run sends the same requests and the API replays those
// it already took. A state file records each chunk's answer, so a re-run skips them outright.
// It also records each accepted row's identity (recipient, template, language): after the file
// is edited (say, its rejected rows fixed), a re-run sends only the rows not accepted before.

export const MAX_CHUNK = 1000;

export interface BatchItem {
  to: string;
  variables?: Record<string, string>;
  headerVariables?: Record<string, string>;
  headerMedia?: { link: string; filename?: string };
  headerLocation?: { latitude: number; longitude: number; name?: string; address?: string };
  buttons?: Record<string, { text?: string; payload?: string; couponCode?: string }>;
  sendAt?: string;
}

/** The value a template's button takes at a send, by its index: what a `button.N` column fills. */
export type ButtonField = 'text' | 'payload' | 'couponCode';

export interface CsvRow {
  /** The row's number as a spreadsheet shows it (the header is row 1). */
  row: number;
  item: BatchItem;
}

export interface BatchSettings {
  template: string;
  language: string;
  sendAt?: string;
  chunkSize: number;
}

export interface RejectedRow {
  row: number;
  to: string;
  status: number;
  code: string;
  detail: string;
}

export interface ChunkResult {
  batchId: string;
  acceptedCount: number;
  rejectedCount: number;
  rejected: RejectedRow[];
}

export interface BatchState {
  version: 2;
  /** sha256 of the file's bytes and the settings: a state of other content or settings is not resumed. */
  fingerprint: string;
  template: string;
  language: string;
  total: number;
  chunks: Record<string, ChunkResult>;
  /**
   * The identities (rowIdentity) accepted by runs over earlier contents of the file: these rows
   * are left out of this content's chunks. Fixed when this content's run starts, so that a resumed
   * run cuts the same chunks (and sends the same keys).
   */
  carried: string[];
  /** Every identity accepted so far: carried, plus this content's accepted rows. */
  accepted: string[];
}

/** A row's identity across edits of its file: who gets which template. */
export function rowIdentity(template: string, language: string, item: BatchItem): string {
  const to = item.to.replace(/[^\d+]/g, '');
  return createHash('sha256').update(JSON.stringify([template, language, to])).digest('hex').slice(0, 32);
}

// Body and header variables by number or (NAMED templates) by name; a media header's link and file
// name; a LOCATION header's place; button values by the button's index (`button.0`, its field
// found from the template, or spelt out: `button.0.payload`).
const COLUMN =
  /^(?:to|send_?at|[1-9][0-9]{0,2}|(?![0-9]+$)[a-z0-9_]{1,100}|header\.(?:[1-9][0-9]{0,2}|(?![0-9]+$)[a-z0-9_]{1,100})|button\.(?:0|[1-9][0-9]?)(?:\.(?:text|payload|couponcode))?)$/i;

/** The `button.N` columns that need the template to say which value they are (no field spelt out). */
export function bareButtonColumns(text: string): number[] {
  const header = text.split(/\r?\n/, 1)[0] ?? '';
  return header
    .replace(/^\uFEFF/, '')
    .split(',')
    .map((name) => /^button\.(0|[1-9][0-9]?)$/i.exec(name.trim().replace(/^"|"$/g, ''))?.[1])
    .filter((index): index is string => index !== undefined)
    .map(Number);
}

function numberOf(value: string, column: string, row: number): number {
  const number = Number(value);
  if (value === '' || !Number.isFinite(number)) throw usageError(`CSV row ${row}: ${column} must be a number, got "${value}"`);
  return number;
}

/** One cell into its place in the item (the cell is not empty). */
function fill(item: BatchItem, name: string, value: string, row: number, buttonFields: ReadonlyMap<number, ButtonField>): void {
  if (name === 'sendat' || name === 'send_at') item.sendAt = value;
  else if (name === 'header.media') (item.headerMedia ??= { link: '' }).link = value;
  else if (name === 'header.filename') (item.headerMedia ??= { link: '' }).filename = value;
  else if (name === 'header.latitude') (item.headerLocation ??= { latitude: 0, longitude: 0 }).latitude = numberOf(value, name, row);
  else if (name === 'header.longitude') (item.headerLocation ??= { latitude: 0, longitude: 0 }).longitude = numberOf(value, name, row);
  else if (name === 'header.name' || name === 'header.address') {
    (item.headerLocation ??= { latitude: 0, longitude: 0 })[name === 'header.name' ? 'name' : 'address'] = value;
  } else if (name.startsWith('button.')) {
    const [, index, spelt] = name.split('.');
    const field: ButtonField | undefined =
      spelt === undefined ? buttonFields.get(Number(index)) : spelt === 'couponcode' ? 'couponCode' : (spelt as ButtonField);
    if (field === undefined) throw usageError(`the template has no button ${index} that takes a value (column button.${index})`);
    ((item.buttons ??= {})[index!] ??= {})[field] = value;
  } else if (name.startsWith('header.')) (item.headerVariables ??= {})[name.slice('header.'.length)] = value;
  else (item.variables ??= {})[name] = value;
}

/**
 * The CSV's rows as batch items: a `to` column; `1`, `2`, … (or names) for the body; `header.1`
 * (or `header.<name>`) for a TEXT header; `header.media` and `header.filename` for a media header;
 * `header.latitude`, `header.longitude`, `header.name`, `header.address` for a LOCATION header;
 * `button.0`, `button.1`… for button values (`buttonFields`: what each button of the template
 * takes); optional `sendAt`.
 */
export function rowsOf(text: string, buttonFields: ReadonlyMap<number, ButtonField> = new Map()): CsvRow[] {
  let records: string[][];
  try {
    records = parseCsv(text);
  } catch (error) {
    if (error instanceof CsvError) throw usageError(`the CSV cannot be read: ${error.message}`);
    throw error;
  }
  const [header, ...data] = records;
  if (!header) throw usageError('the CSV is empty: it needs a header row with a "to" column');
  const columns = header.map((name) => name.trim());
  const unknown = columns.filter((name) => !COLUMN.test(name));
  if (unknown.length > 0) {
    throw usageError(
      `unknown CSV columns: ${unknown.join(', ')} (use to, 1, 2, … or names, header.1, header.media, header.filename, ` +
        'header.latitude, header.longitude, header.name, header.address, button.0, …, sendAt)',
    );
  }
  if (!columns.some((name) => name.toLowerCase() === 'to')) throw usageError(`the CSV needs a "to" column (it has ${columns.join(', ')})`);

  if (new Set(columns.map((name) => name.toLowerCase())).size !== columns.length) throw usageError('the CSV repeats a column');
  if (data.length === 0) throw usageError('the CSV has a header but no rows');
  return data.map((cells, index) => {
    if (cells.length !== columns.length) {
      throw usageError(`CSV row ${index + 2} has ${cells.length} fields; the header has ${columns.length}`);
    }
    const item: BatchItem = { to: '' };
    columns.forEach((column, position) => {
      const value = cells[position]!.trim();
      const name = column.toLowerCase();
      if (name === 'to') item.to = value;
      else if (value !== '') fill(item, name, value, index + 2, buttonFields);
    });
    return { row: index + 2, item };
  });
}

export function fingerprintOf(content: Buffer, settings: BatchSettings): string {
  return createHash('sha256')
    .update(content)
    .update(JSON.stringify([settings.template, settings.language, settings.sendAt ?? null, settings.chunkSize]))
    .digest('hex');
}

/** What names one run's chunks: the content, and the rows left out as accepted before (if any). */
export function runKeyOf(fingerprint: string, carried: readonly string[]): string {
  if (carried.length === 0) return fingerprint;
  return createHash('sha256').update(fingerprint).update([...carried].sort().join('\n')).digest('hex');
}

/** The Idempotency-Key of one chunk: the same on every run over the same file and settings. */
export function chunkKey(fingerprint: string, index: number): string {
  return `svc-csv-${fingerprint.slice(0, 40)}-${index}`;
}

export function chunksOf<T>(rows: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < rows.length; start += size) chunks.push(rows.slice(start, start + size));
  return chunks;
}

/**
 * Beside the CSV when its folder is writable, else in the config folder under the file's path:
 * one state per file, whatever its content, so that an edited file finds what was accepted.
 */
export function statePathFor(csvPath: string, chosen?: string): string {
  if (chosen !== undefined) return resolve(chosen);
  const beside = `${resolve(csvPath)}.svc-batch.json`;
  try {
    accessSync(dirname(beside), constants.W_OK);
    return beside;
  } catch {
    const place = createHash('sha256').update(resolve(csvPath)).digest('hex').slice(0, 16);
    return join(configDir(), 'batches', `${basename(csvPath)}-${place}.json`);
  }
}

/**
 * The saved state when it belongs to this content and these settings (resumed); else a fresh
 * one that carries the rows accepted over the file's earlier contents, same template and language.
 */
export function loadState(path: string, fresh: BatchState): { state: BatchState; resumed: boolean } {
  let saved: Omit<Partial<BatchState>, 'version'> & { version?: number };
  try {
    saved = JSON.parse(readFileSync(path, 'utf8')) as typeof saved;
  } catch {
    // No state yet, or unreadable: start over (the chunks' keys still prevent duplicates).
    return { state: fresh, resumed: false };
  }
  if (saved.fingerprint === fresh.fingerprint && (saved.version === 1 || saved.version === 2)) {
    return { state: { ...fresh, ...saved, version: 2, carried: saved.carried ?? [], accepted: saved.accepted ?? [] }, resumed: true };
  }
  if (saved.version === 2 && saved.template === fresh.template && saved.language === fresh.language && Array.isArray(saved.accepted)) {
    return { state: { ...fresh, carried: [...saved.accepted], accepted: [...saved.accepted] }, resumed: false };
  }
  return { state: fresh, resumed: false };
}

export function saveState(path: string, state: BatchState): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
  renameSync(temporary, path);
}
