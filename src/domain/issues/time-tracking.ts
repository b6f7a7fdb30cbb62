/**
 * Durations as the Service's time tracking writes and reads them (Gitlab::TimeTrackingFormatter
 * over ChronicDuration): a working day is 8 hours, a week 5 days, a month 4 weeks, so "1w" is
 * 40 hours; output is the short form, largest unit first, zero parts left out ("1w 2d 3h 30m").
 */
const UNITS = [
  ['mo', 4 * 5 * 8 * 3600], ['w', 5 * 8 * 3600], ['d', 8 * 3600], ['h', 3600], ['m', 60], ['s', 1],
] as const;

/** "1w 2d 3h 30m" for a number of seconds; null for zero (the entity's human_* fields). */
export function formatDuration(seconds: number): string | null {
  if (!seconds) return null;
  const sign = seconds < 0 ? '-' : '';
  let rest = Math.abs(seconds);
  const parts: string[] = [];
  for (const [unit, size] of UNITS) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  return sign + parts.join(' ');
}

const UNIT_SECONDS: Record<string, number> = {
  mo: UNITS[0][1], month: UNITS[0][1], months: UNITS[0][1],
  w: UNITS[1][1], week: UNITS[1][1], weeks: UNITS[1][1],
  d: UNITS[2][1], day: UNITS[2][1], days: UNITS[2][1],
  h: 3600, hr: 3600, hrs: 3600, hour: 3600, hours: 3600,
  m: 60, min: 60, mins: 60, minute: 60, minutes: 60,
  s: 1, sec: 1, secs: 1, second: 1, seconds: 1,
};

/** The longest duration text parsed (an API parameter): far above any real "3w 2d 4h 30m". */
export const MAX_DURATION_TEXT = 100;

/**
 * Seconds in a duration text ("3h30m", "1w 2d", "-30m"); a bare number counts in `bareUnit`
 * (the time tracking parser's default unit is hours). Null when the text is not a duration.
 */
export function parseDuration(text: string, bareUnit: 'h' | 's' = 'h'): number | null {
  const t = text.trim().toLowerCase();
  if (t === '' || t.length > MAX_DURATION_TEXT) return null;
  const negative = t.startsWith('-');
  const body = negative ? t.slice(1).trim() : t;
  if (/^\d+$/.test(body)) {
    const n = Number(body) * (bareUnit === 'h' ? 3600 : 1);
    return negative ? -n : n;
  }
  let total = 0;
  let matched = '';
  for (const m of body.matchAll(/(\d+(?:\.\d+)?)\s*([a-z]+)\s*/g)) {
    const size = UNIT_SECONDS[m[2]];
    if (size === undefined) return null;
    total += Number(m[1]) * size;
    matched += m[0];
  }
  if (matched.replace(/\s/g, '') !== body.replace(/\s/g, '')) return null;
  total = Math.round(total);
  return negative ? -total : total;
}
