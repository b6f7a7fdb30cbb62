/**
 * What the database itself enforces, as the application needs to know it: unique-constraint
 * violations (the last word on a uniqueness rule when two requests race past the application's
 * own check) and the range of integer ids (a larger number given as an id matches no row; on
 * PostgreSQL it would be an out-of-range error instead).
 */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return true;
  // A uniqueness rule across tables, kept by a trigger on SQLite (migration 2026-11-24T1300).
  return code === 'SQLITE_CONSTRAINT_TRIGGER' && String((err as Error).message).startsWith('UNIQUE constraint failed');
}

/** Whether `n` can be the value of an integer id column on both engines. */
export function isStorableId(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 1 && n <= 2_147_483_647;
}

/**
 * The id ActiveRecord looks up for a path segment the Service declares as a String (or not at all):
 * Rails casts a string that starts with optional blanks, a sign and a digit as Ruby's `to_i` reads
 * it ("12abc" is 12, "1_2" is 12) and any other string to no id. Null when no storable id results.
 */
export function idFromText(text: string): number | null {
  const m = /^\s*([+-]?\d+(?:_\d+)*)/.exec(text);
  if (!m) return null;
  const n = Number(m[1].replace(/_/g, ''));
  return isStorableId(n) ? n : null;
}

/**
 * Text a database column can hold on both engines: no NUL (PostgreSQL refuses it in text:
 * `invalid byte sequence for encoding "UTF8"`) and no lone surrogate (not encodable as UTF-8).
 * With the u flag a lone surrogate is one code point of category Cs; proper pairs never match.
 */
export function isStorableText(s: string): boolean {
  return !UNSTORABLE_CHAR.test(s);
}
const UNSTORABLE_CHAR = /[\u0000\p{Cs}]/u;
