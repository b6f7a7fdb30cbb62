/**
 * The name filter of branch and tag lists (the Service's BranchesFinder / TagsFinder
 * `filter_by_name`): case-insensitive; `^term` matches the start, `term$` the end, both an exact
 * name; otherwise any part.
 */

/** No ref name is longer (ref-names.ts MAX_REF_NAME), so a longer search finds nothing. */
export const MAX_REF_SEARCH = 1026;

export function matchesRefSearch(name: string, search: string): boolean {
  const n = name.toLowerCase();
  let s = search.toLowerCase();
  const start = s.startsWith('^');
  const end = s.endsWith('$') && s.length > (start ? 1 : 0);
  if (start) s = s.slice(1);
  if (end) s = s.slice(0, -1);
  if (start && end) return n === s;
  if (start) return n.startsWith(s);
  if (end) return n.endsWith(s);
  return n.includes(s);
}
