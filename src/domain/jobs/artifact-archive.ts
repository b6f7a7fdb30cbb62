/**
 * One file out of a job's artifacts archive, streamed (the Service's send-entry through its
 * Workhorse). The zip is read with yauzl: only the central directory is scanned, the entry is
 * inflated on its way to the client, and entry sizes are checked against the directory so a
 * forged archive cannot make a small entry inflate without bound.
 *
 * The requested path is only ever compared with entry names, never joined to a file system path,
 * so `..` or an absolute path can match nothing but an entry of exactly that name, and yauzl
 * refuses such names in an archive before they are compared (path traversal cannot happen).
 */
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';

export interface ArchiveEntry {
  stream: Readable;
  /** Uncompressed size in bytes, from the central directory. */
  size: number;
}

/** Entry names the Service would never serve: empty, absolute, or with `.`/`..` segments. */
export function isPlainEntryPath(entryPath: string): boolean {
  if (entryPath === '' || entryPath.length > 4096 || entryPath.includes('\0') || entryPath.includes('\\')) return false;
  if (entryPath.startsWith('/') || entryPath.endsWith('/')) return false;
  return entryPath.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..');
}

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: false, validateEntrySizes: true }, (err, zip) => (err ? reject(err) : resolve(zip)));
  });
}

/**
 * The entry named `entryPath` in the zip at `file`, or null when there is none (or the archive
 * cannot be read). The caller must consume or destroy the stream; the zip closes when it ends.
 */
export async function openArchiveEntry(file: string, entryPath: string): Promise<ArchiveEntry | null> {
  if (!isPlainEntryPath(entryPath)) return null;
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(file);
  } catch {
    return null;
  }
  const entry = await new Promise<yauzl.Entry | null>((resolve) => {
    zip.on('entry', (e: yauzl.Entry) => {
      if (e.fileName === entryPath) resolve(e);
      else zip.readEntry();
    });
    zip.once('end', () => resolve(null));
    // A malformed archive or an entry name yauzl refuses: nothing to serve.
    zip.once('error', () => resolve(null));
    zip.readEntry();
  });
  if (!entry || entry.isEncrypted()) {
    zip.close();
    return null;
  }
  const stream = await new Promise<Readable | null>((resolve) => {
    zip.openReadStream(entry, (err, s) => resolve(err ? null : s));
  });
  if (!stream) {
    zip.close();
    return null;
  }
  stream.once('close', () => zip.close());
  stream.once('end', () => zip.close());
  return { stream, size: entry.uncompressedSize };
}

export interface ArchiveListingEntry {
  /** The entry's name inside its directory. */
  name: string;
  /** Its path in the archive, without a trailing slash. */
  path: string;
  directory: boolean;
  /** Uncompressed size of a file; null for a directory. */
  size: number | null;
}

export interface ArchiveListing {
  /** Whether the directory exists in the archive (the root always does). */
  exists: boolean;
  /** Directories first, then files, each by name; at most `maxEntries` of them. */
  entries: ArchiveListingEntry[];
  /** More entries were there than `maxEntries`, or the archive's directory was not read to its end. */
  truncated: boolean;
}

/**
 * The directory `dir` ('' for the root, no trailing slash) of the zip at `file`, from its central
 * directory alone (no entry is inflated): its files, and its subdirectories whether the archive
 * holds an entry for them or only for files below them. At most `maxScan` entries of the
 * archive are read and at most `maxEntries` children kept; an unreadable archive lists nothing.
 */
export async function listArchiveDirectory(file: string, dir: string, maxEntries: number, maxScan: number): Promise<ArchiveListing> {
  const empty: ArchiveListing = { exists: dir === '', entries: [], truncated: false };
  if (dir !== '' && !isPlainEntryPath(dir)) return { ...empty, exists: false };
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(file);
  } catch {
    return empty;
  }
  const prefix = dir === '' ? '' : `${dir}/`;
  const children = new Map<string, ArchiveListingEntry>();
  let exists = dir === '';
  let truncated = false;
  let scanned = 0;
  await new Promise<void>((resolve) => {
    zip.on('entry', (e: yauzl.Entry) => {
      scanned += 1;
      const name = e.fileName;
      if (name.startsWith(prefix) && name.length > prefix.length) {
        exists = true;
        const rest = name.slice(prefix.length);
        const slash = rest.indexOf('/');
        const child = slash < 0 ? rest : rest.slice(0, slash);
        const directory = slash >= 0;
        if (child !== '' && !children.has(child)) {
          if (children.size >= maxEntries) truncated = true;
          else children.set(child, { name: child, path: prefix + child, directory, size: directory ? null : e.uncompressedSize });
        }
      }
      if (scanned >= maxScan) {
        truncated = true;
        resolve();
        return;
      }
      zip.readEntry();
    });
    zip.once('end', () => resolve());
    // A malformed archive or a name yauzl refuses: what was read so far is the listing.
    zip.once('error', () => {
      truncated = true;
      resolve();
    });
    zip.readEntry();
  });
  zip.close();
  const byName = (a: ArchiveListingEntry, b: ArchiveListingEntry) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const entries = [...children.values()].sort((a, b) => Number(b.directory) - Number(a.directory) || byName(a, b));
  return { exists, entries, truncated };
}

/** The content of the entry named `entryPath`, or null when there is none or it is larger than `maxBytes`. */
export async function readArchiveEntry(file: string, entryPath: string, maxBytes: number): Promise<Buffer | null> {
  const entry = await openArchiveEntry(file, entryPath);
  if (!entry) return null;
  if (entry.size > maxBytes) {
    entry.stream.destroy();
    return null;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of entry.stream) {
      size += (chunk as Buffer).length;
      // validateEntrySizes already refuses more than the directory's size; this holds even so.
      if (size > maxBytes) {
        entry.stream.destroy();
        return null;
      }
      chunks.push(chunk as Buffer);
    }
  } catch {
    return null;
  }
  return Buffer.concat(chunks);
}
