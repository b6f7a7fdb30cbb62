/**
 * Branch and tag names as `git check-ref-format` accepts them (git-check-ref-format(1), rules 1
 * and 3–10; one-level names allowed), checked before a name reaches a git command line: a name
 * git would refuse, or read as an option (`-x`) or a revision expression (`a..b`, `x@{1}`, `x^`),
 * names no branch. Bounded to 255 characters, the Service's ref columns.
 */
const REF_MAX = 255;

export function isValidRefName(name: string): boolean {
  if (name === '' || name.length > REF_MAX || name === '@' || name.startsWith('-')) return false;
  // Rules 3, 4, 5, 8 and 10: `..`, controls and space, ~ ^ : ? * [, `@{`, backslash.
  if (name.includes('..') || name.includes('@{') || /[\u0000-\u0020\u007f~^:?*[\\]/.test(name)) return false;
  // Rules 6 and 7: no leading, trailing or doubled slash; no trailing dot.
  if (name.startsWith('/') || name.endsWith('/') || name.includes('//') || name.endsWith('.')) return false;
  // Rule 1: no component starts with `.` or ends with `.lock`.
  return name.split('/').every((part) => !part.startsWith('.') && !part.endsWith('.lock'));
}
