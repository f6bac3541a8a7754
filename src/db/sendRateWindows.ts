import { sql } from 'kysely';
import type { Db } from './database.ts';
import { dialectOf } from './prepared.ts';

// The send rate's shared counters (workers/sendRate.ts): one row per (sending number, 100 ms
// window), kept a minute (deleteSendRateWindowsBefore), so the table stays a few rows per number.

/** Whether several processes send through this database (PostgreSQL), so the rate is counted in it; SQLite: one process. */
export function sendRateShared(db: Db): boolean {
  return dialectOf(db) === 'postgres';
}

export interface WindowReservation {
  phoneNumberId: string;
  windowStart: number;
  wanted: number;
  budget: number;
}

/**
 * Takes what it can of each reservation from its window's budget, in one upsert; returns what was
 * granted by `${phoneNumberId}\n${windowStart}`. A (number, window) may appear once. Rows are locked
 * in number order: every process takes them in the same order, or two of them deadlock.
 */
export async function reserveSendRateWindows(db: Db, reservations: readonly WindowReservation[]): Promise<Map<string, number>> {
  const items = reservations.toSorted((a, b) => (a.phoneNumberId < b.phoneNumberId ? -1 : a.phoneNumberId > b.phoneNumberId ? 1 : 0));
  const result = await sql<{ phone_number_id: string; window_start: number; granted: number }>`
    insert into send_rate_windows as w (phone_number_id, window_start, count, budget, granted)
    select r.n, r.s, least(r.want, r.budget), r.budget, least(r.want, r.budget)
    from unnest(${items.map((item) => item.phoneNumberId)}::text[], ${items.map((item) => item.windowStart)}::bigint[],
                ${items.map((item) => Math.max(0, item.wanted))}::int[], ${items.map((item) => item.budget)}::int[])
      as r(n, s, want, budget)
    order by r.n
    on conflict (phone_number_id, window_start) do update set
      granted = greatest(0, least(excluded.count, excluded.budget - w.count)),
      count = w.count + greatest(0, least(excluded.count, excluded.budget - w.count)),
      budget = excluded.budget
    returning phone_number_id, window_start, granted`.execute(db);
  return new Map(result.rows.map((row) => [`${row.phone_number_id}\n${row.window_start}`, Number(row.granted)]));
}

/** Deletes the windows that started before `before`. */
export async function deleteSendRateWindowsBefore(db: Db, before: number): Promise<void> {
  await db.deleteFrom('send_rate_windows').where('window_start', '<', before).execute();
}
