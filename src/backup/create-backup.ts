/**
 * `kiln backup create`: the instance as it is at one moment, taken while it serves.
 *
 * Order: the database snapshot and the refs of every repository it names are taken together
 * under a short fence (database-snapshot.ts); then, with writers free again, every table is
 * dumped from the snapshot, every repository bundled at its recorded refs, and the data
 * directory's files (artifacts, job logs, packages, uploads) copied. Everything is staged in a
 * directory beside the output and packed into the archive with each entry's SHA-256; the archive
 * appears under its name only when complete.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import type { Config } from '../config/schema.ts';
import { SERVICE_VERSION, currentRevision } from '../version.ts';
import {
  BackupError, FORMAT, FORMAT_VERSION, SECRETS_FORMAT, encodeValue, progress, secretsFingerprint,
  type EntrySum, type Manifest, type RepositoryEntry, type Secrets,
} from './format.ts';
import { openSnapshot, type Snapshot } from './database-snapshot.ts';
import { livePipelinesAtCut, recordRefs, repositoriesAtCut, writeBundle } from './repositories.ts';
import { kilnVersion } from './kiln-version.ts';

export interface CreateOptions {
  output: string;
  secretsOutput: string;
  showProgress: boolean;
}

export interface CreateResult {
  manifest: Manifest;
  output: string;
  secretsOutput: string;
}

export async function createBackup(config: Config, o: CreateOptions): Promise<CreateResult> {
  const say = progress(o.showProgress);
  const output = path.resolve(o.output);
  const secretsOutput = path.resolve(o.secretsOutput);
  for (const f of [output, secretsOutput]) {
    if (fs.existsSync(f)) throw new BackupError(`${f} exists already; name a new file`);
  }
  await fsp.mkdir(path.dirname(output), { recursive: true });
  const staging = await fsp.mkdtemp(path.join(path.dirname(output), '.kiln-backup-'));
  try {
    say('database: taking the snapshot');
    let repositories: RepositoryEntry[] = [];
    const snapshot = await openSnapshot(config, async (s) => {
      repositories = await recordRefs(config.storages, await repositoriesAtCut(s), await livePipelinesAtCut(s));
    });
    let tables: Record<string, number>;
    let schemaVersion: string;
    try {
      schemaVersion = await lastMigration(snapshot);
      tables = await dumpTables(snapshot, staging, say);
    } finally {
      await snapshot.close();
    }
    await fsp.mkdir(path.join(staging, 'repositories'));
    for (const [i, entry] of repositories.entries()) {
      say(`repositories: ${i + 1}/${repositories.length}`);
      if (entry.refs.length === 0) continue;
      entry.bundle = `repositories/${i + 1}.bundle`;
      await writeBundle(config.storages, entry, path.join(staging, entry.bundle));
    }
    const fileCount = await copyDataFiles(config, staging, [output, secretsOutput], say);
    const secrets = await readSecrets(config);
    const manifest: Manifest = {
      format: FORMAT, formatVersion: FORMAT_VERSION, kilnVersion: kilnVersion(), revision: currentRevision(),
      serviceVersion: SERVICE_VERSION,
      createdAt: new Date().toISOString(), engine: snapshot.engine, schemaVersion, tables, repositories,
      entries: {},
      secretsFingerprint: secretsFingerprint(secrets),
    };
    say(`archive: packing ${fileCount} files, ${repositories.length} repositories, ${Object.keys(tables).length} tables`);
    const partial = `${output}.partial`;
    await packArchive(staging, partial, manifest);
    await fsp.writeFile(secretsOutput, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    await fsp.rename(partial, output);
    say('');
    return { manifest, output, secretsOutput };
  } finally {
    await fsp.rm(staging, { recursive: true, force: true });
  }
}

async function lastMigration(snapshot: Snapshot): Promise<string> {
  const rows = await snapshot.query<{ name: string }>('select name from kysely_migration order by name desc limit 1').catch(() => []);
  if (rows.length === 0) throw new BackupError('the database has no schema yet (no migration has run): nothing to back up');
  return rows[0].name;
}

async function dumpTables(snapshot: Snapshot, staging: string, say: (l: string) => void): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  await fsp.mkdir(path.join(staging, 'database'));
  const tables = await snapshot.tables();
  for (const [i, table] of tables.entries()) {
    say(`database: table ${i + 1}/${tables.length} ${table}`);
    const { columns, rows } = await snapshot.dump(table);
    const out = fs.createWriteStream(path.join(staging, 'database', `${table}.jsonl`));
    let n = 0;
    const write = async (line: string) => {
      if (!out.write(line)) await once(out, 'drain');
    };
    await write(`${JSON.stringify({ table, columns })}\n`);
    for await (const row of rows) {
      await write(`${JSON.stringify(row.map(encodeValue))}\n`);
      n += 1;
    }
    out.end();
    await once(out, 'finish');
    counts[table] = n;
  }
  return counts;
}

/**
 * KILN_DATA_DIR's files, but not the database file, the keys (the secrets file has them) or the
 * repository storages (bundled): artifacts, job logs, packages, uploads and avatars. A file that
 * goes while the backup runs (an expired artifact) is left out, as it would be a moment later.
 */
async function copyDataFiles(config: Config, staging: string, outputs: string[], say: (l: string) => void): Promise<number> {
  const skip = new Set([
    ...['kiln.sqlite3', 'kiln.sqlite3-wal', 'kiln.sqlite3-shm', 'kiln.sqlite3-journal', 'keys'].map((f) => path.join(config.dataDir, f)),
    config.sshHostKey, ...config.storages.map((s) => s.path), staging, ...outputs, ...outputs.map((f) => `${f}.partial`),
  ]);
  let copied = 0;
  const walk = async (dir: string): Promise<void> => {
    let items: fs.Dirent[];
    try {
      items = await fsp.readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const item of items) {
      const abs = path.join(dir, item.name);
      if (skip.has(abs) || item.name.startsWith('.kiln-backup-')) continue;
      if (item.isDirectory()) await walk(abs);
      else if (item.isFile()) {
        const to = path.join(staging, 'files', path.relative(config.dataDir, abs));
        await fsp.mkdir(path.dirname(to), { recursive: true });
        try {
          await fsp.copyFile(abs, to);
          copied += 1;
          if (copied % 100 === 0) say(`files: ${copied}`);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        }
      }
    }
  };
  await walk(config.dataDir);
  return copied;
}

/** What kiln seals and signs with: KILN_DATA_DIR/keys and the SSH host key. */
export async function readSecrets(config: Config): Promise<Secrets> {
  const files: Record<string, string> = {};
  const keysDir = path.join(config.dataDir, 'keys');
  const names = await fsp.readdir(keysDir).catch(() => [] as string[]);
  for (const name of names.sort()) {
    const abs = path.join(keysDir, name);
    if (abs === config.sshHostKey || !(await fsp.stat(abs)).isFile()) continue;
    files[path.relative(config.dataDir, abs)] = await fsp.readFile(abs, 'utf8');
  }
  const sshHostKey = await fsp.readFile(config.sshHostKey, 'utf8').catch(() => null);
  return { format: SECRETS_FORMAT, formatVersion: FORMAT_VERSION, files, sshHostKey };
}

/** Packs every staged file, then the manifest with their sums, into a gzipped tar. */
async function packArchive(staging: string, file: string, manifest: Manifest): Promise<void> {
  const pack = tar.pack();
  const written = pipeline(pack, zlib.createGzip(), fs.createWriteStream(file, { mode: 0o600 }));
  const entries: Record<string, EntrySum> = {};
  const walk = async (dir: string): Promise<void> => {
    for (const item of (await fsp.readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const abs = path.join(dir, item.name);
      if (item.isDirectory()) {
        await walk(abs);
        continue;
      }
      const name = path.relative(staging, abs).split(path.sep).join('/');
      const { size } = await fsp.stat(abs);
      const hash = crypto.createHash('sha256');
      const entry = pack.entry({ name, size, mode: 0o600 });
      await pipeline(fs.createReadStream(abs), async function* (source) {
        for await (const chunk of source) {
          hash.update(chunk as Buffer);
          yield chunk;
        }
      }, entry);
      entries[name] = { size, sha256: hash.digest('hex') };
    }
  };
  await walk(staging);
  manifest.entries = entries;
  pack.entry({ name: 'manifest.json', mode: 0o600 }, `${JSON.stringify(manifest, null, 2)}\n`);
  pack.finalize();
  await written;
}
