/**
 * isoMillis (src/domain/clock.ts) reads kiln's stored timestamps without Date.parse, for the
 * durations of a page of jobs. It must agree with Date.parse on every text, stored or not.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isoMillis } from '../../src/domain/clock.ts';

describe('isoMillis', () => {
  it('agrees with Date.parse on timestamps as kiln stores them, across the years toISOString writes', () => {
    let seed = 17;
    // A fixed pseudo-random sequence: the same instants on every run.
    const next = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    for (let i = 0; i < 50_000; i++) {
      const text = new Date(Math.floor(next() * 2.6e14) - 6.2e13).toISOString();
      assert.equal(isoMillis(text), Date.parse(text), text);
    }
  });

  it('agrees with Date.parse on the edges and on text kiln does not write', () => {
    for (const text of [
      '2026-01-01T00:00:00.000Z', '2024-02-29T23:59:59.999Z', '2023-02-29T00:00:00.000Z', '2026-04-31T00:00:00.000Z', '2026-12-31T23:59:59.999Z',
      '1970-01-01T00:00:00.000Z', '0000-01-01T00:00:00.000Z', '0099-12-31T00:00:00.000Z', '0100-01-01T00:00:00.000Z', '+010000-01-01T00:00:00.000Z',
      '2026-13-01T00:00:00.000Z', '2026-00-01T00:00:00.000Z', '2026-01-00T00:00:00.000Z', '2026-01-32T00:00:00.000Z',
      '2026-01-01T24:00:00.000Z', '2026-01-01T00:60:00.000Z', '2026-01-01T00:00:60.000Z', '2026-1a-01T00:00:00.000Z', '2026-01-01T1/:00:00.000Z',
      '2026-01-01T00:00:00.000+', '2026-01-01 00:00:00.000Z', '2026-01-01T00:00:00Z', '2026-01-01', 'garbage', '', '\u0000'.repeat(24),
    ]) assert.ok(Object.is(isoMillis(text), Date.parse(text)), `${JSON.stringify(text)}: ${isoMillis(text)} against ${Date.parse(text)}`);
  });
});
