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
    env: { ...process.env, KILN_TEST_DB: dialect },
  });
  if (run.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
