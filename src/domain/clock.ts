/** Time as kiln stores it: ISO-8601 UTC timestamps and "YYYY-MM-DD" dates (db/database.ts). */

export function nowIso(now: Date = new Date()): string {
  return now.toISOString();
}

// The current UTC day, recomputed only when a call falls outside it (every request asks).
let dayStart = 0;
let dayEnd = 0;
let dayText = '';

export function todayDate(now: Date = new Date()): string {
  const ms = now.getTime();
  if (ms < dayStart || ms >= dayEnd) {
    dayStart = ms - (ms % 86_400_000);
    dayEnd = dayStart + 86_400_000;
    dayText = new Date(dayStart).toISOString().slice(0, 10);
  }
  return dayText;
}

export function addDays(date: Date, days: number): Date {
  return new Date(date.getTime() + days * 86_400_000);
}
