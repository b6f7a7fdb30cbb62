/**
 * A schedule's cron line in its time zone (domain/pipeline-schedules/cron.ts, time-zones.ts):
 * wall-clock times in the zone across daylight saving time, ActiveSupport names and IANA
 * identifiers (case-sensitive, as TZInfo), and what the validators refuse.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cronTimezoneValid, cronValid, nextCronTime } from '../../src/domain/pipeline-schedules/cron.ts';
import { ianaZone } from '../../src/domain/pipeline-schedules/time-zones.ts';

describe('pipeline schedule cron lines', () => {
  it('reads the cron line as wall-clock time in the schedule’s zone', () => {
    // 09:00 in Tokyo (UTC+9, no daylight saving) is midnight UTC.
    assert.equal(nextCronTime('0 9 * * *', 'Asia/Tokyo', new Date('2026-01-01T00:30:00Z'))?.toISOString(), '2026-01-02T00:00:00.000Z');
    assert.equal(nextCronTime('0 9 * * *', 'Tokyo', new Date('2026-01-01T23:59:00Z'))?.toISOString(), '2026-01-02T00:00:00.000Z');
    // New York moves from UTC-5 to UTC-4 on 8 March 2026: 09:00 there is 14:00, then 13:00 UTC.
    assert.equal(nextCronTime('0 9 * * *', 'Eastern Time (US & Canada)', new Date('2026-03-07T15:00:00Z'))?.toISOString(), '2026-03-08T13:00:00.000Z');
    assert.equal(nextCronTime('0 9 * * *', 'America/New_York', new Date('2026-03-06T15:00:00Z'))?.toISOString(), '2026-03-07T14:00:00.000Z');
    // Strictly after the moment given.
    assert.equal(nextCronTime('*/15 * * * *', 'UTC', new Date('2026-05-01T10:15:00Z'))?.toISOString(), '2026-05-01T10:30:00.000Z');
    assert.equal(nextCronTime('0 0 * * *', 'Mars/Base', new Date()), null);
  });

  it('checks the syntax and the zone as the Service’s validators do', () => {
    for (const ok of ['* * * * *', '0 1 * * 1-5', '*/5 0-6 1,15 jan-jun *', '@daily', '0 0 * * * *']) assert.ok(cronValid(ok), ok);
    for (const bad of ['', ' ', '60 * * * *', '* * * *', '* * * * * * *', 'every day', '0 0 31 2 *', 'x'.repeat(300)]) {
      assert.ok(!cronValid(bad), bad);
    }
    for (const ok of ['UTC', 'Etc/UTC', 'Asia/Tokyo', 'America/Argentina/Buenos_Aires', 'Pacific Time (US & Canada)', 'Etc/GMT+12']) {
      assert.ok(cronTimezoneValid(ok), ok);
    }
    for (const bad of ['', 'asia/tokyo', 'Mars/Olympus', 'Tokyo Time', '../etc/passwd', 'A'.repeat(100)]) assert.ok(!cronTimezoneValid(bad), bad);
    assert.equal(ianaZone('Bern'), 'Europe/Zurich');
  });
});
