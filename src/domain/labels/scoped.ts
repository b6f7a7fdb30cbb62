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
