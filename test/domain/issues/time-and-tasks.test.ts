/** Durations as the Service's time tracking formats and parses them, and task list counting (issue 29). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration, parseDuration } from '../../../src/domain/issues/time-tracking.ts';
import { taskCompletion } from '../../../src/domain/issues/task-list.ts';

describe('time tracking durations', () => {
  it('formats working days of 8 hours and weeks of 5 days, largest unit first', () => {
    assert.equal(formatDuration(0), null);
    assert.equal(formatDuration(1800), '30m');
    assert.equal(formatDuration(3 * 3600 + 1800), '3h 30m');
    assert.equal(formatDuration(8 * 3600), '1d');
    assert.equal(formatDuration(40 * 3600 + 2 * 8 * 3600 + 60), '1w 2d 1m');
    assert.equal(formatDuration(-3600), '-1h');
  });
  it('parses the short and long forms, a bare number as hours, and refuses anything else', () => {
    assert.equal(parseDuration('3h30m'), 3 * 3600 + 1800);
    assert.equal(parseDuration('1w 2d'), 56 * 3600);
    assert.equal(parseDuration('-30m'), -1800);
    assert.equal(parseDuration('2'), 7200);
    assert.equal(parseDuration('1mo'), 160 * 3600);
    assert.equal(parseDuration('2 hours'), 7200);
    assert.equal(parseDuration('abc'), null);
    assert.equal(parseDuration('3h foo'), null);
    assert.equal(parseDuration(''), null);
    assert.equal(parseDuration('1'.repeat(200)), null);
  });
});

describe('task lists', () => {
  it('counts items of bullet and ordered lists, done ones apart, and nothing inside code fences', () => {
    const text = ['- [ ] one', '* [x] two', '1. [X] three', '- [~] not applicable', '```', '- [ ] in code', '```', '-[ ] no space', 'text'].join('\n');
    assert.deepEqual(taskCompletion(text), { count: 3, completed: 2 });
    assert.deepEqual(taskCompletion(''), { count: 0, completed: 0 });
  });
});
