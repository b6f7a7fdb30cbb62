/**
 * Whether `text` matches `pattern` whole, each `*` of the pattern standing for any text (none
 * included), without regard to case: the Service's `Regexp.escape(pattern).gsub('\*', '.*')`
 * anchored and case-insensitive (broadcast messages' target_path, sign-up's domain lists).
 * Matched without a regular expression, so no pattern an administrator types can make it slow:
 * one backtrack point (the last `*`), at most |pattern| × |text| steps.
 */
export function wildcardMatches(pattern: string, text: string): boolean {
  const p = pattern.toLowerCase();
  const t = text.toLowerCase();
  let i = 0;
  let j = 0;
  let star = -1;
  let mark = 0;
  while (j < t.length) {
    if (i < p.length && p[i] !== '*' && p[i] === t[j]) {
      i += 1;
      j += 1;
    } else if (i < p.length && p[i] === '*') {
      star = i;
      i += 1;
      mark = j;
    } else if (star >= 0) {
      i = star + 1;
      mark += 1;
      j = mark;
    } else {
      return false;
    }
  }
  while (i < p.length && p[i] === '*') i += 1;
  return i === p.length;
}
