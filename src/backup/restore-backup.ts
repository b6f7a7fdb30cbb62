/**
 * `kiln backup restore FILE`: an instance made again from a backup, into an empty data directory
 * and an empty database of either engine (KILN_DATA_DIR, DATABASE_URL as always).
 *
 * Refused, each with its own exit code (format.ts EXIT): a target that holds anything; a backup
 * whose schema this kiln does not know (written by a newer kiln); a secrets file other than the
 * one written with the archive; an archive whose entries do not match their recorded SHA-256.
 * Everything is checked before anything is written.
 *
 * The database is built by this kiln's migrations up to the backup's schema, the rows are loaded
 * with their ids (PostgreSQL's sequences then set past the largest), and the migrations that came
 * after run on top, as on any older database.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import pg from 'pg';
import type { Config } from '../config/schema.ts';
import { openDatabase } from '../db/database.ts';
import { knownMigrations, migrateToLatest, migrateUpTo } from '../db/migrate.ts';
import {
  BackupError, EXIT, FORMAT, MIGRATION_TABLES, SECRETS_FORMAT, TRANSIENT_TABLES, progress, secretsFingerprint,
  type Manifest, type Secrets,
} from './format.ts';
import { restoreRepository } from './repositories.ts';
import { validRefName } from '../domain/repositories/ref-names.ts';
import { loadTables } from './load-tables.ts';

export interface RestoreOptions {
  archive: string;
  /** Defaults to `<archive>.secrets.json`. */
  secrets?: string;
  showProgress: boolean;
}

const WORK_DIR = '.kiln-restore';
/** Longest entry name accepted from an archive. */
const MAX_ENTRY_NAME = 4096;

export async function restoreBackup(config: Config, o: RestoreOptions): Promise<Manifest> {
  const say = progress(o.showProgress);
  const archive = path.resolve(o.archive);
  if (!fs.existsSync(archive)) throw new BackupError(`${archive} does not exist`, EXIT.usage);
  const secretsFile = path.resolve(o.secrets ?? `${archive}.secrets.json`);
  await refuseNonEmptyTarget(config);
  const work = path.join(config.dataDir, WORK_DIR);
  await fsp.mkdir(work, { recursive: true });
  try {
    say('archive: reading and checking');
    const manifest = await extract(archive, work);
    const known = await knownMigrations();
    if (!known.includes(manifest.schemaVersion)) {
      throw new BackupError(
        `the backup's schema (${manifest.schemaVersion}) is newer than this kiln's (${known[known.length - 1]}): `
          + `restore it with kiln ${manifest.kilnVersion} (${manifest.revision}) or later`,
        EXIT.newerSchema,
      );
    }
    checkRepositoryEntries(manifest);
    const secrets = await readSecretsFile(secretsFile, manifest);

    try {
      await writeInstance(config, manifest, secrets, work, say);
    } catch (err) {
      const why = err instanceof BackupError ? err.message : String((err as Error).stack ?? err);
      throw new BackupError(`${why}\nthe restore stopped half-way: empty the data directory, the storages and the database, then try again`);
    }
    say('');
    return manifest;
  } finally {
    await fsp.rm(work, { recursive: true, force: true });
  }
}

/** Everything checked: the database, the repositories, the files and the keys. */
async function writeInstance(config: Config, manifest: Manifest, secrets: Secrets, work: string, say: (l: string) => void): Promise<void> {
  const database = openDatabase(config);
  try {
    say(`database: schema up to ${manifest.schemaVersion}`);
    await migrateUpTo(database.db, manifest.schemaVersion);
    const tables = Object.keys(manifest.tables).filter((t) => !TRANSIENT_TABLES.has(t) && !MIGRATION_TABLES.has(t));
    await loadTables(database, work, tables, say);
    say('database: later migrations');
    await migrateToLatest(database.db);
    // Every restored repository holds its own objects: none borrows from another (forks' git
    // alternates, domain/forks/borrowed-objects.ts) until the next fork makes it so.
    await database.db.updateTable('projects').set({ objects_from_project_id: null })
      .where('objects_from_project_id', 'is not', null).execute();
  } finally {
    await database.close();
  }

  for (const [i, entry] of manifest.repositories.entries()) {
    say(`repositories: ${i + 1}/${manifest.repositories.length}`);
    await restoreRepository(config.storages, entry, entry.bundle ? path.join(work, entry.bundle) : null);
  }

  say('files: moving into place');
  const filesDir = path.join(work, 'files');
  if (fs.existsSync(filesDir)) await moveTree(filesDir, config.dataDir);
  for (const [rel, content] of Object.entries(secrets.files)) {
    const to = path.join(config.dataDir, rel);
    await fsp.mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
    await fsp.writeFile(to, content, { mode: 0o600 });
  }
  if (secrets.sshHostKey !== null) {
    await fsp.mkdir(path.dirname(config.sshHostKey), { recursive: true, mode: 0o700 });
    await fsp.writeFile(config.sshHostKey, secrets.sshHostKey, { mode: 0o600 });
  }
}

async function refuseNonEmptyTarget(config: Config): Promise<void> {
  const nonEmpty = async (dir: string) => (await fsp.readdir(dir).catch(() => [])).length > 0;
  if (await nonEmpty(config.dataDir)) {
    throw new BackupError(`the data directory ${config.dataDir} is not empty: restore into an empty one (KILN_DATA_DIR)`, EXIT.targetNotEmpty);
  }
  for (const shard of config.storages) {
    if (await nonEmpty(shard.path)) {
      throw new BackupError(`repository storage "${shard.name}" (${shard.path}) is not empty: restore into empty storages`, EXIT.targetNotEmpty);
    }
  }
  if (config.databaseUrl) {
    const client = new pg.Client({ connectionString: config.databaseUrl });
    try {
      await client.connect();
      const { rows } = await client.query<{ n: number }>(
        "select count(*)::int as n from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'",
      );
      if (rows[0].n > 0) {
        throw new BackupError(`the database (DATABASE_URL) already has ${rows[0].n} tables: restore into an empty database`, EXIT.targetNotEmpty);
      }
    } catch (err) {
      if (err instanceof BackupError) throw err;
      throw new BackupError(`cannot reach the database (DATABASE_URL): ${(err as Error).message}`);
    } finally {
      await client.end().catch(() => {});
    }
  }
}

/** Unpacks the archive into `work`, checking every entry against the manifest. */
async function extract(archive: string, work: string): Promise<Manifest> {
  const sums = new Map<string, { size: number; sha256: string }>();
  let manifestText: string | null = null;
  const unpack = tar.extract();
  unpack.on('entry', (header, stream, next) => {
    const name = header.name;
    const safe = name.length <= MAX_ENTRY_NAME && !name.startsWith('/') && !name.split('/').some((p) => p === '..' || p === '')
      && header.type === 'file';
    if (!safe) {
      stream.resume();
      next(new BackupError(`the archive has an entry kiln does not write (${JSON.stringify(name.slice(0, 200))}): it is not a kiln backup`, EXIT.corrupt));
      return;
    }
    if (name === 'manifest.json') {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => chunks.push(c as Buffer));
      stream.on('end', () => {
        manifestText = Buffer.concat(chunks).toString('utf8');
        next();
      });
      stream.on('error', next);
      return;
    }
    const to = path.join(work, ...name.split('/'));
    const hash = crypto.createHash('sha256');
    let size = 0;
    fsp.mkdir(path.dirname(to), { recursive: true }).then(() => pipeline(stream, async function* (source) {
      for await (const chunk of source) {
        hash.update(chunk as Buffer);
        size += (chunk as Buffer).length;
        yield chunk;
      }
    }, fs.createWriteStream(to))).then(() => {
      sums.set(name, { size, sha256: hash.digest('hex') });
      next();
    }, next);
  });
  try {
    await pipeline(fs.createReadStream(archive), zlib.createGunzip(), unpack);
  } catch (err) {
    if (err instanceof BackupError) throw err;
    throw new BackupError(`the archive is damaged or not a kiln backup: ${(err as Error).message}`, EXIT.corrupt);
  }
  if (manifestText === null) throw new BackupError('the archive has no manifest.json: it is incomplete or not a kiln backup', EXIT.corrupt);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(manifestText) as Manifest;
  } catch {
    throw new BackupError('the archive\'s manifest.json is not JSON: the archive is damaged', EXIT.corrupt);
  }
  if (manifest.format !== FORMAT || typeof manifest.schemaVersion !== 'string' || typeof manifest.entries !== 'object') {
    throw new BackupError('the archive\'s manifest is not a kiln backup manifest', EXIT.corrupt);
  }
  for (const [name, want] of Object.entries(manifest.entries)) {
    const got = sums.get(name);
    if (!got) throw new BackupError(`the archive lacks ${name}, which its manifest lists: it is incomplete`, EXIT.corrupt);
    if (got.sha256 !== want.sha256 || got.size !== want.size) {
      throw new BackupError(`${name} does not match its checksum in the manifest: the archive is damaged`, EXIT.corrupt);
    }
  }
  const extra = [...sums.keys()].find((n) => !(n in manifest.entries));
  if (extra) throw new BackupError(`the archive has ${extra}, which its manifest does not list: it was altered`, EXIT.corrupt);
  return manifest;
}

/** HEAD names a branch (git symbolic-ref is given nothing else). */
function validHead(head: unknown): boolean {
  return typeof head === 'string' && head.startsWith('refs/heads/') && validRefName(head.slice('refs/heads/'.length));
}

/** Repository places and bundle names come from the archive: each must stay inside its storage. */
function checkRepositoryEntries(manifest: Manifest): void {
  const bad = (p: unknown) => typeof p !== 'string' || p === '' || p.length > MAX_ENTRY_NAME || p.startsWith('/')
    || p.split('/').some((part) => part === '..' || part === '.' || part === '');
  for (const r of Array.isArray(manifest.repositories) ? manifest.repositories : []) {
    if (bad(r.diskPath) || typeof r.storage !== 'string' || (r.bundle !== null && !(r.bundle in manifest.entries))
      || !Array.isArray(r.refs) || (r.head !== null && !validHead(r.head))) {
      throw new BackupError('the archive\'s manifest lists a repository kiln does not write: the archive was altered', EXIT.corrupt);
    }
  }
  if (!Array.isArray(manifest.repositories) || typeof manifest.tables !== 'object' || manifest.tables === null) {
    throw new BackupError('the archive\'s manifest is not a kiln backup manifest', EXIT.corrupt);
  }
}

async function readSecretsFile(file: string, manifest: Manifest): Promise<Secrets> {
  let secrets: Secrets;
  try {
    secrets = JSON.parse(await fsp.readFile(file, 'utf8')) as Secrets;
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : 'is not a kiln secrets file';
    throw new BackupError(`the secrets file ${file} ${why}: name the one written with the backup (--secrets FILE)`, EXIT.secretsMismatch);
  }
  if (secrets.format !== SECRETS_FORMAT || typeof secrets.files !== 'object' || secrets.files === null) {
    throw new BackupError(`${file} is not a kiln secrets file`, EXIT.secretsMismatch);
  }
  for (const rel of Object.keys(secrets.files)) {
    if (!/^keys\/[A-Za-z0-9_.-]+$/.test(rel)) throw new BackupError(`${file} names a key file outside keys/ (${rel.slice(0, 200)})`, EXIT.secretsMismatch);
  }
  if (secretsFingerprint(secrets) !== manifest.secretsFingerprint) {
    throw new BackupError(
      `the secrets file ${file} does not belong to this backup (fingerprint ${secretsFingerprint(secrets).slice(0, 12)}…, the backup's ${manifest.secretsFingerprint.slice(0, 12)}…): `
      + 'without its own keys the backup\'s sealed CI/CD variables and signed tokens cannot be read',
      EXIT.secretsMismatch,
    );
  }
  return secrets;
}

/** Moves the files of `from` under `to`, directory by directory (rename: one file system). */
async function moveTree(from: string, to: string): Promise<void> {
  for (const item of await fsp.readdir(from, { withFileTypes: true })) {
    const src = path.join(from, item.name);
    const dst = path.join(to, item.name);
    if (item.isDirectory()) {
      await fsp.mkdir(dst, { recursive: true });
      await moveTree(src, dst);
    } else {
      await fsp.rename(src, dst);
    }
  }
}
