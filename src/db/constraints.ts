// Recognises constraint violations from either driver, so a repository can turn a lost race
// into an answer (409) instead of a crash (500).

/** SQLite's extended result code for a UNIQUE constraint (a PRIMARY KEY is 1555). */
const SQLITE_CONSTRAINT_UNIQUE = 2067;
/** PostgreSQL's SQLSTATE unique_violation. */
const PG_UNIQUE_VIOLATION = '23505';

/**
 * Whether `error` is the violation of one unique constraint: named `constraint` on PostgreSQL; on
 * SQLite, which names columns instead, the one over exactly `columns` of `table`.
 */
export function isUniqueViolation(
  error: unknown,
  target: { constraint: string; table: string; columns: readonly string[] },
): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, constraint, errcode, message } = error as Record<string, unknown>;
  if (code === PG_UNIQUE_VIOLATION) return constraint === target.constraint;
  if (errcode === SQLITE_CONSTRAINT_UNIQUE && typeof message === 'string') {
    const columns = target.columns.map((column) => `${target.table}.${column}`).join(', ');
    return message === `UNIQUE constraint failed: ${columns}`;
  }
  return false;
}
