/**
 * The GraphQL request timeout (the Service's 30 seconds): a query still running then is answered
 * 503 with the Service's message; one that finishes in time is answered as it is.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Refusal, REQUEST_TIMEOUT_MS, withTimeout } from '../../src/graphql/request.ts';

describe('GraphQL request timeout', () => {
  it('is the Service\'s 30 seconds', () => {
    assert.equal(REQUEST_TIMEOUT_MS, 30_000);
  });

  it('refuses work still running at the timeout with 503 and the Service message', async () => {
    const never = new Promise<never>(() => undefined);
    await assert.rejects(withTimeout(never, 20), (err: unknown) => {
      assert.ok(err instanceof Refusal);
      assert.equal(err.statusCode, 503);
      assert.equal(err.message, 'Request timed out. Please try a less complex query or a smaller set of records.');
      return true;
    });
  });

  it('passes on what finishes in time, and failures as they are', async () => {
    assert.equal(await withTimeout(Promise.resolve(42), 1_000), 42);
    await assert.rejects(withTimeout(Promise.reject(new Error('boom')), 1_000), /boom/);
  });
});
