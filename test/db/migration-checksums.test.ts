/**
 * Safe upgrades (issue 34, item 3): every applied migration's SHA-256 is kept in the database,
 * a boot compares the files with it, and an applied migration edited afterwards stops kiln — the
 * library call and `kiln migrate` alike — with a message naming the file. A database from before
 * checksums were kept gets its applied migrations recorded on its next boot.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { migrateToLatest, migrationChecksums, MigrationChecksumError } from '../../src/db/migrate.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const run = promisify(execFile);

describe('migration checksums', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  const recorded = async () => new Map((await t.db.selectFrom('kiln_migration_checksums' as never).select(['name', 'sha256'] as never)
    .execute() as { name: string; sha256: string }[]).map((r) => [r.name, r.sha256]));

  it('records the checksum of every applied migration', async () => {
    const sums = await migrationChecksums();
    assert.ok(sums.size > 40);
    assert.deepEqual(await recorded(), sums);
  });

  it('records them on the first boot of a database from before checksums', async () => {
    await t.db.schema.dropTable('kiln_migration_checksums').execute();
    const result = await migrateToLatest(t.db);
    assert.deepEqual(result.results, []);
    assert.deepEqual(await recorded(), await migrationChecksums());
  });

  it('stops a boot, and `kiln migrate`, when an applied migration was edited', async () => {
    const name = [...(await migrationChecksums()).keys()][3];
    await t.db.updateTable('kiln_migration_checksums' as never).set({ sha256: 'f'.repeat(64) } as never)
      .where('name' as never, '=', name as never).execute();
    await assert.rejects(migrateToLatest(t.db), (err: unknown) => {
      assert.ok(err instanceof MigrationChecksumError);
      assert.deepEqual(err.migrations, [name]);
      assert.match(err.message, new RegExp(`^migration ${name} was edited after it was applied \\(sha256 ffffffffffff… when applied, `));
      return true;
    });
    const env = {
      PATH: process.env.PATH, KILN_DATA_DIR: t.dataDir, LOG_LEVEL: 'silent',
      ...(t.config.databaseUrl ? { DATABASE_URL: t.config.databaseUrl } : {}),
    };
    const cli = await run(process.execPath, ['src/main.ts', 'migrate'], { env }).then(() => null, (err: { code: number; stderr: string }) => err);
    assert.ok(cli, 'kiln migrate must fail');
    assert.equal(cli.code, 1);
    assert.match(cli.stderr, new RegExp(`migration ${name} was edited after it was applied`));
    assert.doesNotMatch(cli.stderr, /at \S+ \(/, 'a message, not a stack trace');
  });
});
