/**
 * Scoped labels: a title containing `::` is a scoped label whose scope ("key") is everything before
 * the LAST `::` ("workflow::ready" → "workflow", "a::b::c" → "a::b"). An issue carries at most one
 * label per scope; the issues area applies that rule with this function.
 *
 * The Service: ee/app/models/ee/label.rb (SCOPED_LABEL_PATTERN = /^.*::/, greedy, and
 * scoped_label_key strips the trailing separator from the match).
 */
export const SCOPED_LABEL_SEPARATOR = '::';

/** The scope of a scoped label's title, or null for an ordinary label. */
export function scopeOf(title: string): string | null {
  const at = title.lastIndexOf(SCOPED_LABEL_SEPARATOR);
  return at < 0 ? null : title.slice(0, at);
}

/**
 * The labels an issue keeps when `labels` are applied in this order: of several labels of one
 * scope the last wins, so adding `workflow::done` to an issue labelled `workflow::doing` replaces
 * it (EE::IssuableBaseService's scoped label handling, which issue 29 asks of kiln's Free tier too).
 * Ordinary labels are all kept, in their first order.
 */
export function onePerScope<L extends { title: string }>(labels: readonly L[]): L[] {
  const lastOfScope = new Map<string, number>();
  labels.forEach((l, i) => {
    const scope = scopeOf(l.title);
    if (scope !== null) lastOfScope.set(scope, i);
  });
  return labels.filter((l, i) => {
    const scope = scopeOf(l.title);
    return scope === null || lastOfScope.get(scope) === i;
  });
}
