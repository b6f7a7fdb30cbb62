/**
 * NUL bytes in string parameters: PostgreSQL text cannot hold them (a query carrying one fails
 * with an encoding error) and git would cut a message at one, so such values answer 400 in
 * Grape's shape before they reach either.
 */
import { invalidParams } from '../errors.ts';

/**
 * Strings longer than `max` characters answer 400 `<name> is too long`: values that go into a
 * child process's environment (a commit's author) must stay far below the system's limit.
 */
export function rejectLongStrings(input: Record<string, unknown>, names: string[], max: number): void {
  const bad = names.filter((n) => typeof input[n] === 'string' && (input[n] as string).length > max);
  if (bad.length > 0) throw invalidParams(bad.map((n) => `${n} is too long`));
}

export function rejectNulBytes(input: Record<string, unknown>, names: string[]): void {
  const bad = names.filter((n) => typeof input[n] === 'string' && (input[n] as string).includes('\0'));
  if (bad.length > 0) throw invalidParams(bad.map((n) => `${n} is invalid`));
}

/** git's "crud" (ident.c): what it strips from both ends of an author's name or email. */
const GIT_IDENT_CRUD = /^[\u0000-\u0020.,:;<>"\\']+|[\u0000-\u0020.,:;<>"\\']+$/g;

/**
 * A commit author git would refuse: a name or email that is nothing but the characters git strips
 * from its ends (`.`, `..`, `<>`…) fails commit-tree with "name consists only of disallowed
 * characters". Such a value answers 400 `<name> is invalid` before git runs. An empty value
 * stands for the committer's own and passes.
 */
export function rejectUnusableGitIdentity(input: Record<string, unknown>, names: string[]): void {
  const bad = names.filter(
    (n) => typeof input[n] === 'string' && input[n] !== '' && (input[n] as string).replace(GIT_IDENT_CRUD, '') === '',
  );
  if (bad.length > 0) throw invalidParams(bad.map((n) => `${n} is invalid`));
}
