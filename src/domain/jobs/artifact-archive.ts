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
