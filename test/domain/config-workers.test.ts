/** KILN_WORKERS (README, Configuration): how many server processes share the port. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import { ConfigError, loadConfig } from '../../src/config/load.ts';

describe('KILN_WORKERS', () => {
  it('is one process unless set', () => {
    assert.equal(loadConfig({}).workers, 1);
  });

  it('takes a count, or "auto" for one per core', () => {
    assert.equal(loadConfig({ KILN_WORKERS: '3' }).workers, 3);
    assert.equal(loadConfig({ KILN_WORKERS: 'auto' }).workers, os.availableParallelism());
  });

  for (const bad of ['0', '-1', '1.5', 'all', '257']) {
    it(`refuses ${JSON.stringify(bad)} with the variable's name`, () => {
      assert.throws(() => loadConfig({ KILN_WORKERS: bad }), (err: unknown) => err instanceof ConfigError
        && err.problems.length === 1 && err.problems[0].startsWith('KILN_WORKERS must be'));
    });
  }
});
