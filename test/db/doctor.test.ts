/**
 * `kiln doctor` (issue 34, item 6) as an operator runs it: against a migrated instance it finds
 * nothing to fix and exits 0; an edited migration, a storage kiln cannot create, an unreachable
 * Redis or database each fail with what to do, and exit 1. It writes nothing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const run = promisify(execFile);

describe('kiln doctor', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  async function doctor(extra: Record<string, string> = {}): Promise<{ code: number; out: string }> {
    const env = {
      PATH: process.env.PATH, KILN_DATA_DIR: t.dataDir, KILN_SSH_PORT: '0', LOG_LEVEL: 'silent',
      ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}), ...extra,
    };
    try {
      const { stdout } = await run(process.execPath, ['src/main.ts', 'doctor'], { env });
      return { code: 0, out: stdout };
    } catch (err) {
      const e = err as { code: number; stdout: string };
      return { code: e.code, out: e.stdout };
    }
  }
  const line = (out: string, check: string) => out.split('\n').find((l) => l.slice(6).startsWith(check.padEnd(20))) ?? '';

  it('finds nothing to fix on a migrated instance, and leaves no file behind', async () => {
    await fs.mkdir(t.config.storages[0].path, { recursive: true });
    const before = (await fs.readdir(t.dataDir)).sort();
    const { code, out } = await doctor();
    assert.equal(code, 0, out);
    assert.match(line(out, 'database'), /^ok +database +(SQLite|PostgreSQL).* answers/);
    assert.match(line(out, 'schema'), /^ok +schema +up to date \(\d+ migrations, checksums match\)/);
    assert.match(line(out, 'git'), /^ok +git +git 2\.\d+/);
    assert.match(line(out, 'storage default'), /writable, .* free/);
    assert.match(out, /no problem/);
    assert.deepEqual((await fs.readdir(t.dataDir)).sort(), before);
  });

  it('fails on an edited migration, a storage it cannot create and an unreachable Redis', async () => {
    const first = await t.db.selectFrom('kiln_migration_checksums' as never).select('name' as never).orderBy('name' as never)
      .executeTakeFirstOrThrow() as { name: string };
    await t.db.updateTable('kiln_migration_checksums' as never).set({ sha256: '0'.repeat(64) } as never)
      .where('name' as never, '=', first.name as never).execute();
    const file = path.join(t.dataDir, 'not-a-directory');
    await fs.writeFile(file, 'x');
    const { code, out } = await doctor({ KILN_STORAGES: `default=${file}/repositories`, KILN_REDIS_URL: 'redis://127.0.0.1:1' });
    assert.equal(code, 1, out);
    assert.match(line(out, 'schema'), new RegExp(`^FAIL +schema +migration ${first.name} was edited after it was applied`));
    assert.match(line(out, 'storage default'), /^FAIL .* does not exist and .*not-a-directory is not writable/);
    assert.match(line(out, 'redis'), /^FAIL +redis +redis:\/\/127\.0\.0\.1:1\/? is not reachable/);
    assert.match(out, /→ start Redis or correct KILN_REDIS_URL/);
    assert.match(out, /3 problem\(s\) to fix/);
  });

  it('fails when the database does not answer', async () => {
    const { code, out } = await doctor({ DATABASE_URL: 'postgres://kiln:secret@127.0.0.1:1/kiln' });
    assert.equal(code, 1, out);
    assert.match(line(out, 'database'), /^FAIL +database +PostgreSQL at postgres:\/\/kiln:\*\*\*\*@127\.0\.0\.1:1\/kiln/);
    assert.doesNotMatch(out, /secret/);
  });
});
