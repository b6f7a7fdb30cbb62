/**
 * A schedule's cron line (lib/gitlab/ci/cron_parser.rb): the syntax is checked in UTC, the time
 * zone with `* * * * *`, each on its own (cron_validator.rb, cron_timezone_validator.rb), and the
 * next run is the first cron time after a moment, read as wall-clock time in the schedule's zone
 * (so `0 9 * * *` in Asia/Tokyo is 00:00 UTC, and a zone's daylight saving time moves it).
 *
 * Parsing uses cron-parser: five fields (minute to day of week) or six with seconds first, ranges,
 * steps, lists, names and the @daily-style shorthands, as the Service's parser takes them.
 */
import { CronExpressionParser } from 'cron-parser';
import { ianaZone } from './time-zones.ts';

/** Longer lines are no cron line (the Service stores `cron` as a varchar(255)). */
export const MAX_CRON = 255;

function parse(cron: string, zone: string, from: Date) {
  if (cron.length > MAX_CRON || cron.trim() === '') return null;
  const fields = cron.trim().split(/\s+/);
  if (!fields[0].startsWith('@') && fields.length !== 5 && fields.length !== 6) return null;
  try {
    return CronExpressionParser.parse(cron.trim(), { tz: zone, currentDate: from });
  } catch {
    return null;
  }
}

export function cronValid(cron: string): boolean {
  const expr = parse(cron, 'UTC', new Date());
  if (!expr) return false;
  try {
    expr.next();
    return true;
  } catch {
    return false;
  }
}

export function cronTimezoneValid(zone: string): boolean {
  return ianaZone(zone) !== null;
}

/** The first cron time strictly after `from` in the schedule's zone, or null for a line that never fires. */
export function nextCronTime(cron: string, timezone: string, from: Date): Date | null {
  const zone = ianaZone(timezone);
  if (zone === null) return null;
  const expr = parse(cron, zone, from);
  if (!expr) return null;
  try {
    return expr.next().toDate();
  } catch {
    return null;
  }
}
