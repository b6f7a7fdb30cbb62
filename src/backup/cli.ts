/**
 * `kiln backup create [--output FILE] [--secrets-output FILE]` and
 * `kiln backup restore FILE [--secrets FILE]`: the command line of src/backup, with exit codes
 * that scripts can trust (format.ts EXIT; README, "Backup and restore").
 */
import { parseArgs } from 'node:util';
import type { Config } from '../config/schema.ts';
import { BackupError, EXIT } from './format.ts';
import { createBackup } from './create-backup.ts';
import { restoreBackup } from './restore-backup.ts';

export const BACKUP_USAGE = `usage: kiln backup create [--output FILE] [--secrets-output FILE]
       kiln backup restore FILE [--secrets FILE]
  create   write the database, repositories and files to FILE (default kiln-backup-<time>.tar.gz) and the
           keys to FILE.secrets.json, while kiln serves
  restore  rebuild an instance from FILE into an empty KILN_DATA_DIR and an empty database
exit codes: 0 done, 1 failed, 2 usage, 3 target not empty, 4 backup newer than this kiln,
            5 secrets file missing or not the backup's, 6 archive damaged`;

export async function backupMain(argv: string[], config: () => Config): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv, allowPositionals: true,
      options: {
        output: { type: 'string', short: 'o' }, 'secrets-output': { type: 'string' }, secrets: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    console.error(`${(err as Error).message}\n${BACKUP_USAGE}`);
    return EXIT.usage;
  }
  const { positionals, values } = parsed;
  if (values.help) {
    console.log(BACKUP_USAGE);
    return EXIT.ok;
  }
  const showProgress = process.stderr.isTTY === true;
  try {
    if (positionals[0] === 'create' && positionals.length === 1 && values.secrets === undefined) {
      const output = values.output ?? `kiln-backup-${new Date().toISOString().replace(/[:.]/g, '-')}.tar.gz`;
      const result = await createBackup(config(), { output, secretsOutput: values['secrets-output'] ?? `${output}.secrets.json`, showProgress });
      const m = result.manifest;
      const rows = Object.values(m.tables).reduce((a, b) => a + b, 0);
      console.log(`backup written to ${result.output} (schema ${m.schemaVersion}, ${rows} rows in ${Object.keys(m.tables).length} tables, `
        + `${m.repositories.length} repositories)\nsecrets written to ${result.secretsOutput}: keep it apart from the archive`);
      return EXIT.ok;
    }
    if (positionals[0] === 'restore' && positionals.length === 2 && values.output === undefined && values['secrets-output'] === undefined) {
      const m = await restoreBackup(config(), { archive: positionals[1], secrets: values.secrets, showProgress });
      console.log(`restored the backup of ${m.createdAt} (kiln ${m.kilnVersion}, schema ${m.schemaVersion}, ${m.repositories.length} repositories)`);
      return EXIT.ok;
    }
  } catch (err) {
    if (showProgress) process.stderr.write('\n');
    if (err instanceof BackupError) {
      console.error(`kiln backup: ${err.message}`);
      return err.exitCode;
    }
    throw err;
  }
  console.error(BACKUP_USAGE);
  return EXIT.usage;
}
