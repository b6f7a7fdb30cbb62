/**
 * `npm test`: the whole suite on the embedded SQLite database, then again on PostgreSQL when
 * TEST_DATABASE_URL is set. Arguments narrow the files: `npm test -- test/api/users.test.ts`.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const args = process.argv.slice(2);
const files = (args.length > 0 ? args : fs.globSync('test/**/*.test.ts')).sort();
const dialects = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
const concurrency = process.env.KILN_TEST_CONCURRENCY ?? '3';

let failed = false;
for (const dialect of dialects) {
  console.log(`\n# kiln tests on ${dialect} (${files.length} files)`);
  const run = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files], {
    stdio: 'inherit',
    // Answers written by JSON.stringify are checked against their schema's serialiser (entities/serializers.ts).
    env: { ...process.env, KILN_TEST_DB: dialect, KILN_CHECK_SERIALIZERS: '1' },
  });
  if (run.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
