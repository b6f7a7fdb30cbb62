/**
 * What the database itself enforces, as the application needs to know it: unique-constraint
 * violations (the last word on a uniqueness rule when two requests race past the application's
 * own check) and the range of integer ids (a larger number given as an id matches no row; on
 * PostgreSQL it would be an out-of-range error instead).
 */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Whether `n` can be the value of an integer id column on both engines. */
export function isStorableId(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 1 && n <= 2_147_483_647;
}
