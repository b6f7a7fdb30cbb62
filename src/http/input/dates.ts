/**
 * Dates and times as the Service's parameters read them. Grape coerces `type: Date` with Ruby's
 * `Date.parse` and `type: DateTime` with `DateTime.parse` (dry-types' `params.date`/`params.date_time`),
 * which take far more than `YYYY-MM-DD`: a date-time's date part (`2026-12-26T00:00:00Z`, what
 * go-gitlab sends for `expires_at`), `2026/12/26`, `20261226`, `Sat, 26 Dec 2026 00:00:00 GMT`.
 *
 * Measured against Ruby's Date.parse (issue 35), kiln takes the forms clients send:
 * - a calendar date: `YYYY-MM-DD` (month and day may have one digit), `YYYY/MM/DD`, `YYYY.MM.DD`,
 *   `YYYYMMDD`; `D Mon YYYY`, `Mon D, YYYY` and `Mon D YYYY` with English month names, after an
 *   optional weekday (`Sat, 26 Dec 2026` of RFC 2822 and HTTP dates, `Sat Dec 26 2026` of
 *   JavaScript's Date#toString);
 * - then optionally a time, `T` or a space and `hh:mm[:ss[.fraction]]` (`hhmmss` after a basic
 *   date), and a zone: `Z`, `UTC`, `GMT`, `±hh[:mm]`, `GMT±hhmm`, and a parenthesised zone name.
 * A Date keeps the date as written, whatever the zone (Ruby's Date.parse ignores the time). A
 * string longer than 128 characters is refused, as Date.parse refuses it (`string length (129)
 * exceeds the limit 128`). What Ruby guesses from fragments (`26` is the 26th of this month,
 * `12-26` the 12th of this month of 2026, trailing words after a date) is refused here: the
 * answer of such a guess depends on the day it is sent, and `x is invalid` is kept for garbage.
 */

/** Date.parse's `limit:` (date 3.2.1, Ruby 2.7.5+): longer strings raise ArgumentError. */
export const DATE_PARSE_LIMIT = 128;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH = '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|' +
  'sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
const WEEKDAY = '(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\\.?,?\\s+)?';
const TIME = '(?:[T\\s]\\s*(\\d{2}):(\\d{2})(?::(\\d{2})(?:[.,](\\d{1,9}))?)?)?';
const BASIC_TIME = '(?:T(\\d{2})(\\d{2})(?:(\\d{2})(?:[.,](\\d{1,9}))?)?)?';
const ZONE = '(?:\\s*(Z|UTC|GMT|(?:GMT|UTC)?[+-]\\d{2}(?::?\\d{2})?)(?:\\s*\\([^()]{1,40}\\))?)?';

interface Form {
  re: RegExp;
  /** Indexes of year, month and day in the match; a month may be a name. */
  ymd: [number, number, number];
  /** Index of the hour; minute, second and fraction follow it, then the zone. */
  time: number;
}

const FORMS: Form[] = [
  { re: new RegExp(`^(\\d{4})([-/.])(\\d{1,2})\\2(\\d{1,2})${TIME}${ZONE}$`, 'i'), ymd: [1, 3, 4], time: 5 },
  { re: new RegExp(`^(\\d{4})(\\d{2})(\\d{2})${BASIC_TIME}${ZONE}$`, 'i'), ymd: [1, 2, 3], time: 4 },
  { re: new RegExp(`^${WEEKDAY}(\\d{1,2})(?:\\s+|-)${MONTH}\\.?(?:\\s+|-)(\\d{4})${TIME}${ZONE}$`, 'i'), ymd: [3, 2, 1], time: 4 },
  { re: new RegExp(`^${WEEKDAY}${MONTH}\\.?\\s+(\\d{1,2})(?:,\\s*|\\s+)(\\d{4})${TIME}${ZONE}$`, 'i'), ymd: [3, 1, 2], time: 4 },
];

export interface ParsedDate {
  /** `YYYY-MM-DD`. */
  date: string;
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
  /** Minutes east of UTC; 0 when no zone was given (DateTime.parse reads such a time as UTC). */
  offsetMinutes: number;
  /** Whether the time fields are within their ranges (Date.parse does not check them). */
  validTime: boolean;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

function monthNumber(text: string): number {
  return /^\d+$/.test(text) ? Number(text) : MONTHS.indexOf(text.slice(0, 3).toLowerCase()) + 1;
}

function dayExists(year: number, month: number, day: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const d = new Date(Date.UTC(2000, month - 1, day));
  d.setUTCFullYear(year);
  return d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

function zoneOffset(zone: string | undefined): number | null {
  if (!zone || /^(z|utc|gmt)$/i.test(zone)) return 0;
  const m = /([+-])(\d{2}):?(\d{2})?$/.exec(zone)!;
  const hours = Number(m[2]);
  const minutes = Number(m[3] ?? 0);
  if (hours > 23 || minutes > 59) return null;
  return (m[1] === '-' ? -1 : 1) * (hours * 60 + minutes);
}

/** One of the forms above, or null. */
export function parseServiceDate(input: string): ParsedDate | null {
  if (input.length > DATE_PARSE_LIMIT) return null;
  const text = input.trim();
  for (const form of FORMS) {
    const m = form.re.exec(text);
    if (!m) continue;
    const year = Number(m[form.ymd[0]]);
    const month = monthNumber(m[form.ymd[1]]);
    const day = Number(m[form.ymd[2]]);
    if (!dayExists(year, month, day)) return null;
    const [hour, minute, second] = [0, 1, 2].map((i) => Number(m[form.time + i] ?? 0));
    const fraction = m[form.time + 3] ?? '';
    const offset = zoneOffset(m[form.time + 4]);
    return {
      date: `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`,
      year, month, day, hour, minute, second,
      millisecond: Number(fraction.padEnd(3, '0').slice(0, 3)),
      offsetMinutes: offset ?? 0,
      validTime: offset !== null && hour <= 23 && minute <= 59 && second <= 59,
    };
  }
  return null;
}

/** Grape `type: Date`: the date, `YYYY-MM-DD`, or null. */
export function coerceDate(input: string): string | null {
  return parseServiceDate(input)?.date ?? null;
}

/** Grape `type: DateTime`: the instant, with a time that exists, or null. A bare date is midnight UTC. */
export function parseDateTime(input: string): Date | null {
  const p = parseServiceDate(input);
  if (!p || !p.validTime) return null;
  const ms = Date.UTC(2000, p.month - 1, p.day, p.hour, p.minute, p.second, p.millisecond);
  const d = new Date(ms);
  d.setUTCFullYear(p.year);
  return new Date(d.getTime() - p.offsetMinutes * 60_000);
}
