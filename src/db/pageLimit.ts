import { type RawBuilder, sql } from 'kysely';

// A page's LIMIT as PostgreSQL is given it: a scalar subquery, a value its planner cannot read.
//
// Told `limit 51`, PostgreSQL weighs walking the page's index in order (stopping after 51 rows)
// against reading every row the filters match, through a bitmap, and sorting them, by how many
// rows it expects to match. That estimate multiplies the project's share of the table by the id
// range's share as if they were independent, and a tenant's ids are not independent of time: a
// small old tenant's rows below a cursor (all of them old) were estimated at 12 where there were
// 1,899, and it read them all to sort them, O(the tenant's rows) where a page is O(page). Not told
// the limit, the planner assumes a tenth of the matching rows are wanted: the ordered walk, whose
// first rows come at once, then costs a tenth of reading them all, whatever their estimated number.

/** The LIMIT of a page's statement on PostgreSQL, for one `?` placeholder. */
export const POSTGRES_PAGE_LIMIT = '(select ?::int)';

/** The LIMIT of a page's statement on PostgreSQL, for Kysely's query builder. */
export function postgresPageLimit(limit: number): RawBuilder<number> {
  return sql<number>`(select ${limit}::int)`;
}
