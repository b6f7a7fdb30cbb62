/** Time as kiln stores it: ISO-8601 UTC timestamps and "YYYY-MM-DD" dates (db/database.ts). */

export function nowIso(now: Date = new Date()): string {
  return now.toISOString();
}

export function todayDate(now: Date = new Date()): string {
  return now.toISOString().slice(0, 10);
}

export function addDays(date: Date, days: number): Date {
  return new Date(date.getTime() + days * 86_400_000);
}
