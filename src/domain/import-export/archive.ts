/**
 * The export archive: a gzip-compressed tar (tar-stream over node:zlib) of a few regular files at
 * fixed names. Reading it is where an uploaded archive is distrusted (issue 32, item 6):
 *
 * - only regular files, under names that are relative, without `..` or a leading `/`, and only
 *   the names the format knows; a symlink, hardlink, device or directory entry is refused;
 * - at most MAX_ENTRIES entries, each at most its name's bound;
 * - the bytes inflated are counted as they come, and the archive is refused as soon as they pass
 *   the bound for the whole archive or the compressed size times MAX_RATIO (a decompression bomb),
 *   so nothing past the bound is ever held or written.
 *
 * Entries are written to files of our own naming in a fresh directory; an entry's name never
 * becomes a path.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import tar from 'tar-stream';

export class ArchiveError extends Error {}

/** At most this many entries in an archive (the format has a handful). */
export const MAX_ENTRIES = 64;
/** Inflated bytes per compressed byte beyond which an archive is a bomb (once past MIN_BOMB_BYTES). */
export const MAX_RATIO = 200;
const MIN_BOMB_BYTES = 16 * 1024 * 1024;
/** Whatever the settings say, no archive inflates past this. */
export const MAX_INFLATED_BYTES = 4 * 1024 * 1024 * 1024;

export interface ArchiveLimits {
  /** Names the format knows, each with its own size bound. */
  entries: Record<string, number>;
  /** Inflated bytes of the whole archive. */
  maxInflated?: number;
}

/** Why `name` may not be an entry's name, or null. */
export function entryNameProblem(name: string): string | null {
  if (name === '' || name.includes('\0')) return 'an entry has no name';
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name) || name.includes('\\')) return `entry ${JSON.stringify(name)} has an absolute path`;
  if (name.split('/').some((part) => part === '..')) return `entry ${JSON.stringify(name)} escapes the archive`;
  return null;
}

/** Writes `files` (name → file on disk or content) as a tar.gz at `target`. */
export async function writeArchive(target: string, files: { name: string; file?: string; content?: string | Buffer }[]): Promise<void> {
  const pack = tar.pack();
  const out = fs.createWriteStream(target, { mode: 0o600 });
  const done = pipeline(pack, zlib.createGzip(), out);
  for (const f of files) {
    if (f.file !== undefined) {
      const { size } = await fsp.stat(f.file);
      await new Promise<void>((resolve, reject) => {
        const entry = pack.entry({ name: f.name, size, mode: 0o644, type: 'file' }, (err) => (err ? reject(err) : resolve()));
        fs.createReadStream(f.file!).on('error', reject).pipe(entry);
      });
    } else {
      const body = Buffer.isBuffer(f.content) ? f.content : Buffer.from(f.content ?? '', 'utf8');
      await new Promise<void>((resolve, reject) => {
        pack.entry({ name: f.name, size: body.length, mode: 0o644, type: 'file' }, body, (err) => (err ? reject(err) : resolve()));
      });
    }
  }
  pack.finalize();
  await done;
}

/**
 * Reads the archive at `source` into `dir` (created empty): each known entry becomes the file
 * `dir/<name>`. Answers the names found. Throws ArchiveError for what is refused.
 */
export async function readArchive(source: string, dir: string, limits: ArchiveLimits): Promise<Set<string>> {
  const compressed = (await fsp.stat(source)).size;
  const maxInflated = Math.min(limits.maxInflated ?? MAX_INFLATED_BYTES, MAX_INFLATED_BYTES);
  const bombBound = Math.max(MIN_BOMB_BYTES, compressed * MAX_RATIO);
  await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  let inflated = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      inflated += chunk.length;
      if (inflated > maxInflated) return cb(new ArchiveError('The archive is larger than allowed once decompressed'));
      if (inflated > bombBound) return cb(new ArchiveError('The archive decompresses to far more than its size (a decompression bomb)'));
      cb(null, chunk);
    },
  });
  const extract = tar.extract();
  const found = new Set<string>();
  let count = 0;
  const reading = (async () => {
    try {
      await readEntries();
    } catch (err) {
      extract.destroy(err as Error);
      throw err;
    }
  })();
  async function readEntries(): Promise<void> {
    for await (const entry of extract) {
      const { name: rawName, type, size } = entry.header;
      count += 1;
      if (count > MAX_ENTRIES) throw new ArchiveError(`The archive has more than ${MAX_ENTRIES} entries`);
      const name = rawName.replace(/^\.\//, '');
      const problem = entryNameProblem(name);
      if (problem) throw new ArchiveError(`The archive is refused: ${problem}`);
      if (type === 'directory' && (name === '' || name === './')) {
        entry.resume();
        continue;
      }
      if (type === 'symlink' || type === 'link') throw new ArchiveError(`The archive is refused: entry ${JSON.stringify(name)} is a link`);
      if (type !== 'file') throw new ArchiveError(`The archive is refused: entry ${JSON.stringify(name)} is not a regular file`);
      const bound = Object.hasOwn(limits.entries, name) ? limits.entries[name] : undefined;
      if (bound === undefined) throw new ArchiveError(`The archive is refused: unknown entry ${JSON.stringify(name)}`);
      if (found.has(name)) throw new ArchiveError(`The archive is refused: entry ${JSON.stringify(name)} appears twice`);
      if ((size ?? 0) > bound) throw new ArchiveError(`The archive is refused: entry ${JSON.stringify(name)} is too large`);
      found.add(name);
      // The name was matched against the known ones: the file's path is ours, never the entry's.
      const out = fs.createWriteStream(path.join(dir, `entry-${[...found].length}`), { mode: 0o600 });
      let written = 0;
      await pipeline(entry, new Transform({
        transform(chunk: Buffer, _enc, cb) {
          written += chunk.length;
          if (written > bound) return cb(new ArchiveError(`The archive is refused: entry ${JSON.stringify(name)} is too large`));
          cb(null, chunk);
        },
      }), out);
      await fsp.rename(path.join(dir, `entry-${[...found].length}`), path.join(dir, safeFileName(name)));
    }
  }
  try {
    await Promise.all([
      pipeline(fs.createReadStream(source), zlib.createGunzip(), counter, extract).catch((err: unknown) => {
        extract.destroy(err as Error);
        throw err;
      }),
      reading,
    ]);
  } catch (err) {
    if (err instanceof ArchiveError) throw err;
    throw new ArchiveError(`The archive could not be read: ${(err as Error).message}`);
  }
  return found;
}

/** The file an entry of a known name is kept in (names of the format are plain words). */
export function safeFileName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_');
}
