/** What the request log line keeps of a URL (src/http/redact.ts). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { redactUrl } from '../../src/http/redact.ts';

describe('redactUrl', () => {
  it('leaves URLs without credentials alone', () => {
    for (const url of ['/api/v4/users', '/api/v4/users?per_page=5&search=token', '/api/v4/users?tokens=1&codes[]=2', '/a?', '/a?=x&&b']) {
      assert.equal(redactUrl(url), url);
    }
  });

  it('masks every credential parameter, whatever its case, position or Rails brackets', () => {
    assert.equal(redactUrl('/api/v4/user?private_token=abc&per_page=5'), '/api/v4/user?private_token=[FILTERED]&per_page=5');
    assert.equal(redactUrl('/x?a=1&ACCESS_TOKEN=abc'), '/x?a=1&ACCESS_TOKEN=[FILTERED]');
    assert.equal(redactUrl('/x?job_token=1&token=2&bearer_token=3&client_secret=4&code=5&refresh_token=6&password=7'),
      '/x?job_token=[FILTERED]&token=[FILTERED]&bearer_token=[FILTERED]&client_secret=[FILTERED]&code=[FILTERED]&refresh_token=[FILTERED]&password=[FILTERED]');
    assert.equal(redactUrl('/x?private_token[]=abc'), '/x?private_token[]=[FILTERED]');
  });

  it('masks percent-encoded names, which qs decodes into the same parameters', () => {
    assert.equal(redactUrl('/api/v4/user?private%5Ftoken=abc'), '/api/v4/user?private%5Ftoken=[FILTERED]');
    assert.equal(redactUrl('/api/v4/user?%70rivate_token=abc'), '/api/v4/user?%70rivate_token=[FILTERED]');
    assert.equal(redactUrl('/api/v4/user?access_token%5B%5D=abc'), '/api/v4/user?access_token%5B%5D=[FILTERED]');
    assert.equal(redactUrl('/x?bad%E0%A4%A=1&token=2'), '/x?bad%E0%A4%A=1&token=[FILTERED]');
  });
});
