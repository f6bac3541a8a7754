import type { Db } from './database.ts';
import { dialectOf } from './prepared.ts';
import type { WebhookDeliveriesTable } from './tables.ts';

// Bytes per message (issue 19, migration 0027_delivery_ids_as_bytes): on SQLite a webhook
// delivery's own id (a UUID), its message id (msg_…) and its event id (evt_…) are stored as 16
// bytes each instead of 36, 30 and 30 characters — in the delivery row, in its index by message
// and in webhook_attempts.delivery_id. Public ids are unchanged: values are encoded here on their
// way in (rows written, values compared) and decoded on their way out (rows read), in src/db only.
//
// - A value is stored as bytes only in its canonical form (a lowercase UUID; the prefix, then 26
//   lowercase Crockford base32 characters whose first is 0–7, as domain/ids.ts makes them until
//   the year 10889); any other value is stored, and compared, as the text it is. The encoding is
//   a function of the value, so equality answers what it answered on text: an id in capitals,
//   or of another kind (a template event's tse_…), matches what it matched before.
// - Bytes compare as the big-endian numbers the canonical texts spell, so among canonical ids of
//   one kind they sort as their texts did: the log's newest-first pages, its time bounds and the
//   claim's order of a message's events are unchanged. A range bound given as text (a cursor, a
//   time's UUIDv7 prefix) becomes the bytes of the smallest canonical UUID at or after it
//   (deliveryIdBound). SQLite sorts all text before all bytes: only a delivery id that was never
//   canonical (none is: svc makes UUIDv7s in lowercase) would sort apart from today. A cursor that
//   is a stored row's own id (retention's walk) is compared as stored, so a walk sees every row.
// - created_at is left out (null) when the delivery's id, a UUIDv7, carries that millisecond.
// - PostgreSQL stores text as before: every function here returns its input there.

export type StoredId = string | Uint8Array;

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const DIGIT = new Map([...ALPHABET].map((char, value) => [char, value]));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PREFIXED = /^[a-z]+_[0-7][0-9a-hjkmnp-tv-z]{25}$/;

function uuidBytes(id: string): Uint8Array | undefined {
  return UUID.test(id) ? Buffer.from(id.replaceAll('-', ''), 'hex') : undefined;
}

function uuidText(bytes: Uint8Array): string {
  const hex = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** prefix_ + 26 characters (130 bits, the top two zero) → 16 bytes; undefined if not canonical. */
function prefixedBytes(prefix: string, id: string): Uint8Array | undefined {
  if (!id.startsWith(prefix) || id.length !== prefix.length + 26 || !PREFIXED.test(id)) return undefined;
  const out = new Uint8Array(16);
  let acc = DIGIT.get(id[prefix.length]!)!;
  let bits = 3;
  let at = 0;
  for (let i = prefix.length + 1; i < id.length; i++) {
    acc = (acc << 5) | DIGIT.get(id[i]!)!;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (acc >> bits) & 0xff;
      acc &= (1 << bits) - 1;
    }
  }
  return out;
}

function prefixedText(prefix: string, bytes: Uint8Array): string {
  let out = prefix + ALPHABET[bytes[0]! >> 5];
  let acc = bytes[0]! & 0x1f;
  let bits = 5;
  for (let i = 1; i <= bytes.length; i++) {
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(acc >> bits) & 0x1f];
      acc &= (1 << bits) - 1;
    }
    if (i < bytes.length) {
      acc = (acc << 8) | bytes[i]!;
      bits += 8;
    }
  }
  return out;
}

const MESSAGE = 'msg_';
const EVENT = 'evt_';

const sqlite = (db: Db) => dialectOf(db) === 'sqlite';

/** A delivery id as it is stored and compared (webhook_deliveries.id, webhook_attempts.delivery_id). */
export function storedDeliveryId(db: Db, id: string): StoredId {
  return (sqlite(db) && uuidBytes(id)) || id;
}

export function storedMessageId(db: Db, id: string): StoredId {
  return (sqlite(db) && prefixedBytes(MESSAGE, id)) || id;
}

export function storedEventId(db: Db, id: string): StoredId {
  return (sqlite(db) && prefixedBytes(EVENT, id)) || id;
}

/** The stored bytes (or text) back to the id they stand for. */
export function deliveryIdOf(stored: StoredId): string {
  return typeof stored === 'string' ? stored : uuidText(stored);
}

export function messageIdOf(stored: StoredId): string {
  return typeof stored === 'string' ? stored : prefixedText(MESSAGE, stored);
}

export function eventIdOf(stored: StoredId): string {
  return typeof stored === 'string' ? stored : prefixedText(EVENT, stored);
}

/** The millisecond a UUIDv7 was made at (its first 48 bits). */
function uuidTime(bytes: Uint8Array): number {
  return bytes[0]! * 2 ** 40 + bytes[1]! * 2 ** 32 + ((bytes[2]! << 24) >>> 0) + (bytes[3]! << 16) + (bytes[4]! << 8) + bytes[5]!;
}

/**
 * A delivery row as written: its ids encoded, and its created_at left out (null) when its id
 * carries it — a delivery's id is a UUIDv7 made at its creation time (webhooks/enqueue.ts), so
 * that column costs nothing but the byte that says it is null.
 */
export function storedDelivery(db: Db, row: WebhookDeliveriesTable): WebhookDeliveriesTable {
  if (!sqlite(db)) return row;
  const id = storedDeliveryId(db, row.id);
  return {
    ...row,
    id,
    event_id: storedEventId(db, row.event_id),
    message_id: row.message_id === null ? null : storedMessageId(db, row.message_id),
    created_at: typeof id !== 'string' && uuidTime(id) === Number(row.created_at) ? null : row.created_at,
  } as unknown as WebhookDeliveriesTable;
}

/** A delivery row as read (any of its columns selected): its ids decoded, its created_at restored. */
export function deliveryOf<T extends { id?: unknown; event_id?: unknown; message_id?: unknown; created_at?: unknown }>(row: T): T {
  if (!(row.id instanceof Uint8Array || row.event_id instanceof Uint8Array || row.message_id instanceof Uint8Array)) return row;
  const out = { ...row } as Record<string, unknown>;
  if (row.id instanceof Uint8Array) {
    out.id = uuidText(row.id);
    if (row.created_at === null) out.created_at = uuidTime(row.id);
  }
  if (row.event_id instanceof Uint8Array) out.event_id = prefixedText(EVENT, row.event_id);
  if (row.message_id instanceof Uint8Array) out.message_id = prefixedText(MESSAGE, row.message_id);
  return out as T;
}

/** An attempt row as read: its delivery id decoded. */
export function attemptOf<T extends { delivery_id: unknown }>(row: T): T {
  return row.delivery_id instanceof Uint8Array ? { ...row, delivery_id: uuidText(row.delivery_id) } : row;
}

const DASHES = new Set([8, 13, 18, 23]);
const HEX = '0123456789abcdef';

/** The canonical text of the given length-36 template filled after `prefix` with the smallest characters. */
function padded(prefix: string): string {
  let out = prefix;
  for (let i = prefix.length; i < 36; i++) out += DASHES.has(i) ? '-' : '0';
  return out;
}

/** The smallest canonical UUID text after every one that starts with `prefix` (a canonical prefix). */
function after(prefix: string): string | undefined {
  for (let i = prefix.length - 1; i >= 0; i--) {
    const at = HEX.indexOf(prefix[i]!);
    if (at >= 0 && at < 15) return padded(prefix.slice(0, i) + HEX[at + 1]);
  }
  return undefined;
}

/** The smallest canonical (lowercase) UUID text at or after `text` in text order, if any. */
function smallestUuidAtOrAfter(text: string): string | undefined {
  for (let i = 0; ; i++) {
    if (i === text.length) return padded(text);
    if (i === 36) return after(text.slice(0, 36));
    const char = text[i]!;
    if (DASHES.has(i)) {
      if (char === '-') continue;
      return char < '-' ? padded(text.slice(0, i)) : after(text.slice(0, i));
    }
    if (HEX.includes(char)) continue;
    const next = [...HEX].find((digit) => digit > char);
    return next === undefined ? after(text.slice(0, i)) : padded(text.slice(0, i) + next);
  }
}

/**
 * A bound on delivery ids given as text, as stored: for every canonical UUID u, `u < text` exactly
 * when `stored(u) < bound`, and `u >= text` exactly when `stored(u) >= bound`; `exact` when the
 * text is itself a canonical id (then `u > text` is `stored(u) > bound`, else `stored(u) >= bound`).
 */
export function deliveryIdBound(db: Db, text: string): { bound: StoredId; exact: boolean } {
  if (!sqlite(db)) return { bound: text, exact: true };
  const smallest = smallestUuidAtOrAfter(text);
  return {
    bound: smallest === undefined ? new Uint8Array(17).fill(0xff) : uuidBytes(smallest)!,
    exact: smallest === text,
  };
}
