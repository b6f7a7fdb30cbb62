/**
 * CI lint's merged_yaml as Ruby's `to_yaml` writes it (src/domain/ci-config/psych-dump.ts). Each
 * case of test/fixtures/psych-dump.json has the output real Psych printed beside its input
 * (scripts/psych-fixtures.rb wrote them; the file names the Ruby, Psych and libyaml versions).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { psychDump, rubyFloat } from '../../src/domain/ci-config/psych-dump.ts';

interface Fixture { generator: string; cases: { name: string; input: unknown; psych: string }[] }

const table = JSON.parse(readFileSync(new URL('../fixtures/psych-dump.json', import.meta.url), 'utf8')) as Fixture;

test('the fixtures were written by Psych', () => {
  assert.match(table.generator, /^ruby [\d.]+, psych [\d.]+, libyaml [\d.]+$/);
  assert.ok(table.cases.length >= 10);
});

for (const c of table.cases) {
  test(`psychDump writes as Psych: ${c.name}`, () => {
    assert.equal(psychDump(c.input), c.psych);
  });
}

test('Float#to_s: shortest digits, a decimal point always, exponent past 16 digits or under 1e-4', () => {
  const cases: [number, string][] = [
    [0.5, '0.5'], [-2.75, '-2.75'], [0.0001, '0.0001'], [0.00001, '1.0e-05'], [1.5e16, '1.5e+16'], [1.25e15, '1250000000000000.0'],
    [123.456, '123.456'], [1e100, '1.0e+100'], [-1.5e-300, '-1.5e-300'], [Infinity, '.inf'], [-Infinity, '-.inf'], [NaN, '.nan'],
  ];
  for (const [x, expected] of cases) assert.equal(rubyFloat(x), expected, String(x));
});
