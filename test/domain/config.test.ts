/**
 * Configuration (CONTRACT §2): defaults, every variable's parse errors gathered into one readable
 * list, and what `npm start` does with it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/load.ts';
import { VARIABLES } from '../../src/config/schema.ts';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems;
  }
  assert.fail('expected a ConfigError');
}

describe('loadConfig', () => {
  it('fills every default of CONTRACT §2 from an empty environment', () => {
    const c = loadConfig({});
    assert.equal(c.port, 3000);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.externalUrl, 'http://localhost:3000');
    assert.equal(c.dataDir, path.resolve('data'));
    assert.equal(c.databaseUrl, null);
    assert.deepEqual(c.storages, [{ name: 'default', path: path.resolve('data', 'repositories') }]);
    assert.equal(c.rootPassword, null);
    assert.equal(c.rootToken, null);
    assert.equal(c.runnerRegistrationToken, null);
    assert.equal(c.redisUrl, null);
    assert.equal(c.logLevel, 'info');
    assert.equal(c.rateLimitPerIp, 3600);
    assert.equal(c.rateLimitPerUser, 7200);
    assert.equal(c.maxQueryStringBytes, 8192);
    assert.equal(c.impersonationEnabled, true);
    assert.ok(Object.isFrozen(c));
  });

  it('derives defaults from other variables and treats empty strings as unset', () => {
    const c = loadConfig({ PORT: '4000', KILN_DATA_DIR: '/srv/kiln', HOST: '', LOG_LEVEL: '' });
    assert.equal(c.externalUrl, 'http://localhost:4000');
    assert.deepEqual(c.storages, [{ name: 'default', path: '/srv/kiln/repositories' }]);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.logLevel, 'info');
  });

  it('reads every variable', () => {
    const c = loadConfig({
      PORT: '8080', HOST: '0.0.0.0', KILN_EXTERNAL_URL: 'https://git.example.com/kiln/', KILN_DATA_DIR: '/var/kiln',
      DATABASE_URL: 'postgres://u@db/kiln', KILN_STORAGES: 'default=/a, fast = /b', KILN_ROOT_PASSWORD: 'password123',
      KILN_ROOT_TOKEN: 'token-value-1', KILN_RUNNER_REGISTRATION_TOKEN: 'runner-token', KILN_REDIS_URL: 'redis://cache:6379',
      LOG_LEVEL: 'warn', KILN_RATE_LIMIT_PER_IP: '0', KILN_RATE_LIMIT_PER_USER: '10', KILN_MAX_QUERY_STRING: '256',
      KILN_IMPERSONATION_ENABLED: 'off',
    });
    assert.equal(c.port, 8080);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.externalUrl, 'https://git.example.com/kiln', 'without the trailing slash');
    assert.equal(c.dataDir, '/var/kiln');
    assert.equal(c.databaseUrl, 'postgres://u@db/kiln');
    assert.deepEqual(c.storages, [{ name: 'default', path: '/a' }, { name: 'fast', path: '/b' }]);
    assert.equal(c.rootPassword, 'password123');
    assert.equal(c.rootToken, 'token-value-1');
    assert.equal(c.runnerRegistrationToken, 'runner-token');
    assert.equal(c.redisUrl, 'redis://cache:6379');
    assert.equal(c.logLevel, 'warn');
    assert.equal(c.rateLimitPerIp, 0);
    assert.equal(c.rateLimitPerUser, 10);
    assert.equal(c.maxQueryStringBytes, 256);
    assert.equal(c.impersonationEnabled, false);
    for (const word of ['true', '1', 'YES', 'on']) assert.equal(loadConfig({ KILN_IMPERSONATION_ENABLED: word }).impersonationEnabled, true, word);
  });

  it('names each bad value, gathering every problem into one ConfigError', () => {
    const problems = problemsOf({
      PORT: 'abc', KILN_EXTERNAL_URL: 'ftp://x', KILN_DATA_DIR: '/tmp/ok', DATABASE_URL: 'mysql://db', KILN_STORAGES: 'nameless',
      KILN_ROOT_PASSWORD: 'short', KILN_ROOT_TOKEN: 'tiny', KILN_RUNNER_REGISTRATION_TOKEN: 'x', KILN_REDIS_URL: 'not a url',
      LOG_LEVEL: 'loud', KILN_RATE_LIMIT_PER_IP: '-1', KILN_RATE_LIMIT_PER_USER: '1.5', KILN_MAX_QUERY_STRING: '100',
      KILN_IMPERSONATION_ENABLED: 'maybe',
    });
    const doc = (name: string) => VARIABLES.find((v) => v.name === name)!.doc;
    assert.deepEqual(problems, [
      `PORT must be a whole number, got "abc" (${doc('PORT')})`,
      `KILN_EXTERNAL_URL must use http: or https:, got "ftp:" (${doc('KILN_EXTERNAL_URL')})`,
      `DATABASE_URL must use postgres: or postgresql:, got "mysql:" (${doc('DATABASE_URL')})`,
      `KILN_STORAGES each shard must be written name=path, got "nameless" (${doc('KILN_STORAGES')})`,
      `KILN_ROOT_PASSWORD must be at least 8 characters (${doc('KILN_ROOT_PASSWORD')})`,
      `KILN_ROOT_TOKEN must be at least 8 characters (${doc('KILN_ROOT_TOKEN')})`,
      `KILN_RUNNER_REGISTRATION_TOKEN must be at least 8 characters (${doc('KILN_RUNNER_REGISTRATION_TOKEN')})`,
      `KILN_REDIS_URL is not a URL: "not a url" (${doc('KILN_REDIS_URL')})`,
      `LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (${doc('LOG_LEVEL')})`,
      `KILN_RATE_LIMIT_PER_IP must be a whole number, got "-1" (${doc('KILN_RATE_LIMIT_PER_IP')})`,
      `KILN_RATE_LIMIT_PER_USER must be a whole number, got "1.5" (${doc('KILN_RATE_LIMIT_PER_USER')})`,
      `KILN_MAX_QUERY_STRING must be between 256 and 1048576, got 100 (${doc('KILN_MAX_QUERY_STRING')})`,
      `KILN_IMPERSONATION_ENABLED must be true or false, got "maybe" (${doc('KILN_IMPERSONATION_ENABLED')})`,
    ]);
  });

  it('checks ranges and the shape of the storage list', () => {
    assert.deepEqual(problemsOf({ PORT: '70000' }), [`PORT must be between 0 and 65535, got 70000 (${VARIABLES[0].doc})`]);
    assert.match(problemsOf({ KILN_STORAGES: 'fast=/b' })[0], /^KILN_STORAGES must include a shard named "default"/);
    assert.match(problemsOf({ KILN_STORAGES: 'default=/a,default=/b' })[0], /^KILN_STORAGES names shard "default" twice/);
    assert.match(problemsOf({ KILN_STORAGES: ',' })[0], /^KILN_STORAGES must name at least one shard/);
    assert.match(problemsOf({ KILN_EXTERNAL_URL: 'localhost:3000' })[0], /^KILN_EXTERNAL_URL must use http: or https:/);
  });

  it('writes a readable message listing every problem', () => {
    try {
      loadConfig({ PORT: 'abc', LOG_LEVEL: 'loud' });
      assert.fail('expected a ConfigError');
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.message, 'kiln cannot start; the configuration has 2 problem(s):\n' +
        `  - PORT must be a whole number, got "abc" (HTTP port)\n` +
        '  - LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (pino log level)');
    }
  });
});
