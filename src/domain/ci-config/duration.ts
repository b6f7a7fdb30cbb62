/**
 * Durations as the Service writes them in `.gitlab-ci.yml` and runner parameters (`expire_in`,
 * `timeout`): "3600", "1 hour", "2 days 3h", "1 week", "30 mins", "never" (ChronicDuration).
 * Returns seconds, `null` for "never", or `undefined` when the text is not a duration.
 */
const UNITS: [RegExp, number][] = [
  [/^(s|sec|secs|second|seconds)$/, 1],
  [/^(m|min|mins|minute|minutes)$/, 60],
  [/^(h|hr|hrs|hour|hours)$/, 3600],
  [/^(d|day|days)$/, 86_400],
  [/^(w|wk|wks|week|weeks)$/, 604_800],
  [/^(mo|mos|month|months)$/, 2_592_000],
  [/^(y|yr|yrs|year|years)$/, 31_557_600],
];

export function parseDuration(text: string | number): number | null | undefined {
  if (typeof text === 'number') return Number.isFinite(text) && text >= 0 ? Math.floor(text) : undefined;
  const s = text.trim().toLowerCase();
  if (s === 'never') return null;
  if (/^\d+$/.test(s)) return Number(s);
  // "1 day 2 hours", "1d2h", "1 day, 2 hours and 3 mins"
  const parts = s.replace(/,|\band\b/g, ' ').match(/\d+(?:\.\d+)?\s*[a-z]+/g);
  if (!parts || parts.join('').replace(/\s/g, '') !== s.replace(/,|\band\b/g, '').replace(/\s/g, '')) return undefined;
  let total = 0;
  for (const part of parts) {
    const m = /^(\d+(?:\.\d+)?)\s*([a-z]+)$/.exec(part)!;
    const unit = UNITS.find(([re]) => re.test(m[2]));
    if (!unit) return undefined;
    total += Number(m[1]) * unit[1];
  }
  return Math.floor(total);
}
