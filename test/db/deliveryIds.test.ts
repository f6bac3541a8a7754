import assert from 'node:assert/strict';
import { it } from 'node:test';
import { SqliteAdapter } from 'kysely';
import { newId } from '../../src/domain/ids.ts';
import { newUuid7, uuid7LowerBound } from '../../src/domain/uuid7.ts';
import * as c from '../../src/db/deliveryIds.ts';

// Migration 0027: ids stored as 16 bytes on SQLite round-trip, keep their order, and a text bound
// (a cursor, a time's UUIDv7 prefix) selects the same canonical ids as bytes as it did as text.
it('delivery, message and event ids round-trip as bytes, in their text order, with text bounds', () => {
  const db: any = { getExecutor: () => ({ adapter: new SqliteAdapter() }) };
  const cmp = (a: any, b: any) => Buffer.compare(Buffer.from(a), Buffer.from(b));
  let n = 0;
  const msgs: string[] = [], uu: string[] = [];
  for (let i = 0; i < 20000; i++) {
    const t = Date.now() + Math.floor(Math.random() * 1e12) * (i % 3);
    const m = newId('msg', t); const e = newId('evt', t); const u = newUuid7(t);
    if (c.messageIdOf(c.storedMessageId(db, m)) !== m) throw new Error('msg ' + m);
    if (c.eventIdOf(c.storedEventId(db, e)) !== e) throw new Error('evt ' + e);
    if (c.deliveryIdOf(c.storedDeliveryId(db, u)) !== u) throw new Error('uuid ' + u);
    if (!(c.storedMessageId(db, m) instanceof Uint8Array) || !(c.storedDeliveryId(db, u) instanceof Uint8Array)) throw new Error('not bytes');
    msgs.push(m); uu.push(u);
  }
  for (let i = 1; i < msgs.length; i++) {
    const a = msgs[i-1]!, b = msgs[i]!;
    if (Math.sign(cmp(c.storedMessageId(db, a), c.storedMessageId(db, b))) !== Math.sign(a < b ? -1 : a > b ? 1 : 0)) throw new Error('order msg');
    const x = uu[i-1]!, y = uu[i]!;
    if (Math.sign(cmp(c.storedDeliveryId(db, x), c.storedDeliveryId(db, y))) !== Math.sign(x < y ? -1 : x > y ? 1 : 0)) throw new Error('order uuid');
  }
  // bounds
  const texts = ['', 'msg_abc', uuid7LowerBound(Date.now()), '01a225fa-dbea', 'zzz', '~', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 'ffffffff-ffff-ffff-ffff-ffffffffffff0', '01a225fa-dbeaX', '01a225fa/', '01a225fa-dbea-70e5-b370-33edd9dd0b2b', '01A2', '01a225fag', '01a225fa-dbea-70e5-b370-33edd9dd0b2bz', ...uu.slice(0, 50).map((u) => u.slice(0, Math.floor(Math.random()*37)) + (Math.random() < 0.5 ? '' : String.fromCharCode(32 + Math.floor(Math.random()*95))))];
  const sample = [...uu, '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '01a225fa-dbea-0000-0000-000000000000', '01a225fa-dbea-70e5-b370-33edd9dd0b2b'];
  for (const t of texts) {
    const { bound, exact } = c.deliveryIdBound(db, t);
    if (exact !== /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(t)) throw new Error('exact ' + t);
    for (const u of sample) {
      const s = c.storedDeliveryId(db, u);
      if ((u < t) !== (cmp(s, bound) < 0)) throw new Error(`lt ${u} ${t}`);
      if ((u > t) !== (exact ? cmp(s, bound) > 0 : cmp(s, bound) >= 0)) throw new Error(`gt ${u} ${t}`);
    }
    n++;
  }
  assert.equal(n, texts.length);
    assert.equal(c.storedMessageId(db, 'MSG_x'), 'MSG_x');
    assert.equal(c.storedEventId(db, 'tse_01m8jznpza0gz2k4845nzcyan0'), 'tse_01m8jznpza0gz2k4845nzcyan0');
    assert.equal(c.storedDeliveryId(db, '01A225FA-DBEA-70E5-B370-33EDD9DD0B2B'), '01A225FA-DBEA-70E5-B370-33EDD9DD0B2B');
});

it('a delivery row round-trips: ids as bytes, created_at left to its id when the id carries it', () => {
  const db = { getExecutor: () => ({ adapter: new SqliteAdapter() }) } as never;
  const now = 4_102_444_800_000; // after every id the test above made (UUIDv7s made here only go forward)
  const row = {
    id: newUuid7(now), project_id: 'proj_01m8jznnj11mbhm8p9vrewf8z6', event_id: newId('evt', now), message_id: newId('msg', now),
    event: 'message.sent', url: 'https://hooks.example.com/svc', endpoint_id: null, template_id: null, payload: '', status: 'pending' as const,
    attempt_count: 0, due_at: now, lease_expires_at: null, created_at: now, updated_at: now,
  };
  const stored = c.storedDelivery(db, row);
  assert.ok(stored.id as unknown instanceof Uint8Array);
  assert.equal(stored.created_at, null);
  assert.deepEqual(c.deliveryOf(stored), row);
  const older = { ...row, created_at: now - 1, message_id: null, event_id: 'tse_01m8jznpza0gz2k4845nzcyan0' };
  assert.equal(c.storedDelivery(db, older).created_at, now - 1);
  assert.deepEqual(c.deliveryOf(c.storedDelivery(db, older)), older);
  const odd = { ...row, id: 'whd_a1' };
  assert.deepEqual(c.storedDelivery(db, odd).created_at, now);
  assert.deepEqual(c.deliveryOf(c.storedDelivery(db, odd)), odd);
});

// Every cursor the delivery log lets through (decodeCursor: 36 characters of hex and dashes, or a
// prefixed id), with the dashes anywhere and ids between and beside stored ones: as bytes, the ids
// below it are those below it as text (a seeded walk, the same every run).
it('a cursor of any shape the log accepts bounds the ids as bytes as it did as text', () => {
  const db = { getExecutor: () => ({ adapter: new SqliteAdapter() }) } as never;
  let seed = 19;
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
  const pick = (chars: string) => chars[Math.floor(random() * chars.length)]!;
  const HEX = '0123456789abcdef';
  // Ids close to each other, their hex digits mostly 0, e and f: bounds fall between them, on the
  // boundaries where a carry goes wrong.
  const uuid = () => Array.from({ length: 36 }, (_, i) => ([8, 13, 18, 23].includes(i) ? '-' : pick(random() < 0.6 ? '0ef' : HEX))).join('');
  const near = (base: string) => [...base].map((char) => (char !== '-' && random() < 0.1 ? pick('0ef') : char)).join('');
  let checked = 0;
  for (let round = 0; round < 1_000; round++) {
    const base = uuid();
    const ids = Array.from({ length: 24 }, () => near(base));
    for (let k = 0; k < 12; k++) {
      const id = ids[Math.floor(random() * ids.length)]!;
      const shape = random();
      const cursor =
        shape < 0.4 ? [...id].map((char) => (random() < 0.08 ? pick(random() < 0.5 ? '0ef-' : HEX) : char)).join('')
        : shape < 0.6 ? Array.from({ length: 36 }, () => pick(`${HEX}--`)).join('')
        : shape < 0.7 ? `${'msgevtzz'.slice(0, 1 + Math.floor(random() * 4))}_${Array.from({ length: 26 }, () => pick('0123456789abcdefghjkmnpqrstvwxyz')).join('')}`
        : id;
      const { bound } = c.deliveryIdBound(db, cursor);
      for (const u of ids) {
        const below = Buffer.compare(Buffer.from(c.storedDeliveryId(db, u) as Uint8Array), Buffer.from(bound as Uint8Array)) < 0;
        assert.equal(below, u < cursor, `${u} before ${cursor}`);
        checked++;
      }
    }
  }
  assert.equal(checked, 1_000 * 12 * 24);
});
