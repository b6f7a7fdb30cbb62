/**
 * What a kiln backup is (issue 34, item 1): one gzipped tar archive and, apart from it, a secrets
 * file, as the Service keeps gitlab-secrets.json out of its backup archive so that whoever holds
 * the archive does not also hold the keys to the values sealed in it.
 *
 * The archive's entries:
 *   database/<table>.jsonl            a header line {"table","columns"}, then one JSON array a row:
 *                                     engine-neutral, so a backup of SQLite restores into PostgreSQL
 *                                     and back (bytes as {"$base64": …})
 *   repositories/<n>.bundle           a git bundle (v2, no prerequisites) of exactly the refs recorded
 *                                     at the database's cut, with every object they reach
 *   files/<path>                      artifacts, job logs, packages, uploads: KILN_DATA_DIR's files
 *   manifest.json                     last: versions, schema, row counts, repositories, and each
 *                                     other entry's size and SHA-256
 */
import crypto from 'node:crypto';

export const FORMAT = 'kiln-backup';
export const FORMAT_VERSION = 1;
export const SECRETS_FORMAT = 'kiln-backup-secrets';

/** Exit codes of `kiln backup`, for scripts (README, "Backup and restore"). */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  targetNotEmpty: 3,
  newerSchema: 4,
  secretsMismatch: 5,
  corrupt: 6,
} as const;

export class BackupError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.failure) {
    super(message);
    this.name = 'BackupError';
    this.exitCode = exitCode;
  }
}

export type RepositoryKind = 'project' | 'wiki' | 'snippet' | 'group_wiki';

export interface RepositoryEntry {
  kind: RepositoryKind;
  /** The project's, snippet's or group's id. */
  id: number;
  storage: string;
  /** Relative to the storage's root, as the database names it. */
  diskPath: string;
  /** What HEAD points at (`refs/heads/main`), or null when detached or unreadable. */
  head: string | null;
  /** Each ref and its object at the cut: [refname, sha]. */
  refs: [string, string][];
  /** The archive entry of its bundle; null for a repository without refs. */
  bundle: string | null;
}

export interface EntrySum {
  size: number;
  sha256: string;
}

export interface Manifest {
  format: typeof FORMAT;
  formatVersion: number;
  kilnVersion: string;
  revision: string;
  serviceVersion: string;
  createdAt: string;
  engine: 'sqlite' | 'postgres';
  /** The last migration the database had run. */
  schemaVersion: string;
  /** Rows written per table. */
  tables: Record<string, number>;
  repositories: RepositoryEntry[];
  /** Every other entry of the archive. */
  entries: Record<string, EntrySum>;
  /** SHA-256 of the secrets file's content (secretsFingerprint): a restore refuses another one. */
  secretsFingerprint: string;
}

export interface Secrets {
  format: typeof SECRETS_FORMAT;
  formatVersion: number;
  /** Files of KILN_DATA_DIR/keys (OIDC and CI signing keys, the CI variable key), by path under the data directory. */
  files: Record<string, string>;
  /** The SSH server's host key, or null when there was none. */
  sshHostKey: string | null;
}

/** A fingerprint of what the secrets file holds, independent of its formatting. */
export function secretsFingerprint(s: Secrets): string {
  const files = Object.keys(s.files).sort().map((k) => [k, s.files[k]]);
  return crypto.createHash('sha256').update(JSON.stringify({ files, sshHostKey: s.sshHostKey })).digest('hex');
}

/** Values as they go into a dump line: bytes are the one kind JSON has no form for. */
export function encodeValue(v: unknown): unknown {
  if (Buffer.isBuffer(v)) return { $base64: v.toString('base64') };
  if (typeof v === 'bigint') return Number(v);
  return v;
}

export function decodeValue(v: unknown): unknown {
  if (v !== null && typeof v === 'object' && '$base64' in v) return Buffer.from(String((v as { $base64: string }).$base64), 'base64');
  return v;
}

/** Tables whose rows describe this moment's processes, not the instance: kept out of a restore. */
export const TRANSIENT_TABLES = new Set(['repository_writes', 'kysely_migration_lock']);
/** Written by the migrator of the restoring kiln itself. */
export const MIGRATION_TABLES = new Set(['kysely_migration', 'kiln_migration_checksums']);

/** Progress on a terminal (stderr), silent otherwise so logs of scripted runs stay clean. */
export function progress(enabled: boolean): (line: string) => void {
  if (!enabled) return () => {};
  return (line) => process.stderr.write(`\r\x1b[2K${line}`);
}
