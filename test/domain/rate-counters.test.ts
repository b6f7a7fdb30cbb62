/**
 * The rate-limit counters a KILN_WORKERS primary keeps for its processes without Redis
 * (src/cluster/rate-limit-store.ts): fixed windows per key, as @fastify/rate-limit's own store.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RateCounters } from '../../src/cluster/rate-limit-store.ts';

const ask = (op: 'incr' | 'read', key: string, id = 1) => ({ kiln: 'rate' as const, id, op, key, timeWindow: 60_000 });

describe('RateCounters', () => {
  it('counts each key in its window and says how long the window has left', () => {
    const c = new RateCounters();
    assert.deepEqual(c.answer(ask('incr', 'user:1', 7), 1_000), { kiln: 'rate-reply', id: 7, current: 1, ttl: 60_000 });
    assert.deepEqual(c.answer(ask('incr', 'user:1'), 11_000), { kiln: 'rate-reply', id: 1, current: 2, ttl: 50_000 });
    assert.equal(c.answer(ask('incr', 'user:2'), 11_000).current, 1);
  });

  it('reads without counting', () => {
    const c = new RateCounters();
    c.answer(ask('incr', 'ip:a'), 0);
    assert.equal(c.answer(ask('read', 'ip:a'), 10).current, 1);
    assert.equal(c.answer(ask('read', 'ip:a'), 20).current, 1);
    assert.equal(c.answer(ask('read', 'ip:unknown'), 20).current, 0);
  });

  it('starts a new window once the last one ended', () => {
    const c = new RateCounters();
    for (let i = 0; i < 5; i++) c.answer(ask('incr', 'user:1'), 0);
    assert.deepEqual(c.answer(ask('incr', 'user:1'), 60_000), { kiln: 'rate-reply', id: 1, current: 1, ttl: 60_000 });
  });
});
