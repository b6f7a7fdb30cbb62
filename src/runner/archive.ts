/**
 * Zip archives of a job's files, for artifacts and the cache (the Service's
 * gitlab-runner-helper `artifacts-uploader` / `cache-archiver`): paths are globs relative to the
 * project directory (a directory means everything under it), `untracked` adds what git does not
 * track, `exclude` globs take files out again; nothing outside the project directory is ever
 * taken. Also the metadata file the Service keeps beside an archive (its zipartifacts format),
 * and extraction that refuses entries leaving the target directory.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import yazl from 'yazl';
import yauzl from 'yauzl';

const execFileP = promisify(execFile);

function inside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

async function walk(root: string, rel: string, out: Set<string>): Promise<void> {
  const abs = path.join(root, rel);
  const st = await fsp.lstat(abs).catch(() => null);
  if (!st) return;
  if (st.isDirectory()) {
    out.add(`${rel}/`);
    for (const name of await fsp.readdir(abs)) await walk(root, path.posix.join(rel, name), out);
  } else {
    out.add(rel);
  }
}

/** Glob patterns as the Service's runner reads them (doublestar): `**` crosses directories. */
async function expand(root: string, pattern: string): Promise<string[]> {
  const clean = pattern.replace(/^\.\//, '').replace(/\/+$/, '');
  if (clean === '' || clean.includes('\0')) return [];
  const matches: string[] = [];
  for await (const m of fsp.glob(clean, { cwd: root })) matches.push(m.split(path.sep).join('/'));
  return matches.filter((m) => inside(root, path.resolve(root, m)));
}

async function untrackedFiles(root: string): Promise<string[]> {
  try {
    const { stdout } = await execFileP('git', ['ls-files', '-o', '-z'], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
    return stdout.split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

export interface Selection {
  paths?: string[] | null;
  untracked?: boolean;
  exclude?: string[] | null;
}

/** The files (and directories, with a trailing /) a selection names, sorted, relative to `root`. */
export async function collectFiles(root: string, sel: Selection, warn: (text: string) => void): Promise<string[]> {
  const found = new Set<string>();
  for (const pattern of sel.paths ?? []) {
    const matches = await expand(root, pattern);
    if (matches.length === 0) warn(`${pattern}: no matching files. Ensure that the artifact path is relative to the working directory`);
    for (const m of matches) await walk(root, m, found);
  }
  if (sel.untracked) for (const f of await untrackedFiles(root)) await walk(root, f.replace(/\/$/, ''), found);
  if (sel.exclude && sel.exclude.length > 0) {
    const excluded = new Set<string>();
    for (const pattern of sel.exclude) {
      for (const m of await expand(root, pattern)) await walk(root, m, excluded);
    }
    for (const e of excluded) found.delete(e);
  }
  return [...found].sort();
}

/** Writes a zip of `files` (relative to `root`) to `dest`. */
export async function writeZip(root: string, files: string[], dest: string): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const f of files) {
    if (f.endsWith('/')) {
      zip.addEmptyDirectory(f);
      continue;
    }
    const abs = path.join(root, f);
    const st = await fsp.lstat(abs);
    if (st.isSymbolicLink()) {
      // Links are stored as links (the target as the content, the link bit in the mode), as zip tools do.
      zip.addBuffer(Buffer.from(await fsp.readlink(abs)), f, { mtime: st.mtime, mode: 0o120777 });
    } else if (st.isFile()) {
      zip.addFile(abs, f, { mtime: st.mtime, mode: st.mode });
    }
  }
  zip.end();
  await new Promise<void>((resolve, reject) => {
    const out = fs.createWriteStream(dest, { mode: 0o600 });
    out.on('close', resolve);
    out.on('error', reject);
    zip.outputStream.on('error', reject).pipe(out);
  });
}

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(
      file, { lazyEntries: true, decodeStrings: true, validateEntrySizes: true },
      (err, zip) => (err ? reject(err) : resolve(zip)),
    );
  });
}

async function eachEntry(file: string, fn: (entry: yauzl.Entry, zip: yauzl.ZipFile) => Promise<void>): Promise<void> {
  const zip = await openZip(file);
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      fn(entry, zip).then(() => zip.readEntry(), (err: unknown) => {
        zip.close();
        reject(err as Error);
      });
    });
    zip.on('end', resolve);
    zip.on('error', reject);
    zip.readEntry();
  });
}

/** The Service's artifacts metadata (gzip): version, errors, then each entry's name and JSON facts. */
export async function writeMetadata(zipFile: string, dest: string): Promise<void> {
  const parts: Buffer[] = [];
  const str = (s: string) => {
    const b = Buffer.from(s, 'utf8');
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length);
    parts.push(len, b);
  };
  str('GitLab Build Artifacts Metadata 0.0.2\n');
  str('{}');
  await eachEntry(zipFile, async (e) => {
    str(e.fileName);
    const mode = (e.externalFileAttributes >>> 16) & 0o777;
    str(`${JSON.stringify({
      modified: Math.floor(e.getLastModDate().getTime() / 1000), mode: (mode || (e.fileName.endsWith('/') ? 0o755 : 0o644)).toString(8),
      ...(e.crc32 ? { crc: e.crc32 } : {}), ...(e.uncompressedSize ? { size: e.uncompressedSize } : {}),
      ...(e.compressedSize ? { zipped: e.compressedSize } : {}),
    })}\n`);
  });
  await fsp.writeFile(dest, zlib.gzipSync(Buffer.concat(parts)), { mode: 0o600 });
}

/** Extracts `zipFile` into `root`; entries that would land outside it are refused. */
export async function extractZip(zipFile: string, root: string): Promise<number> {
  let count = 0;
  await eachEntry(zipFile, async (entry, zip) => {
    const target = path.resolve(root, entry.fileName);
    if (!inside(root, target) || entry.fileName.includes('\0')) {
      throw new Error(`refusing ${entry.fileName}: outside the project directory`);
    }
    const mode = (entry.externalFileAttributes >>> 16) & 0o170777;
    if (entry.fileName.endsWith('/')) {
      await fsp.mkdir(target, { recursive: true });
      return;
    }
    await fsp.mkdir(path.dirname(target), { recursive: true });
    const stream = await new Promise<NodeJS.ReadableStream>(
      (resolve, reject) => zip.openReadStream(entry, (err, s) => (err ? reject(err) : resolve(s))),
    );
    if ((mode & 0o170000) === 0o120000) {
      const chunks: Buffer[] = [];
      for await (const c of stream) chunks.push(c as Buffer);
      const link = Buffer.concat(chunks).toString('utf8');
      if (!inside(root, path.resolve(path.dirname(target), link))) {
        throw new Error(`refusing link ${entry.fileName}: points outside the project directory`);
      }
      await fsp.rm(target, { force: true });
      await fsp.symlink(link, target);
    } else {
      await fsp.rm(target, { force: true });
      await new Promise<void>((resolve, reject) => {
        const out = fs.createWriteStream(target, { mode: (mode & 0o777) || 0o644 });
        out.on('close', resolve);
        out.on('error', reject);
        stream.on('error', reject);
        stream.pipe(out);
      });
    }
    count += 1;
  });
  return count;
}

/** gzip of each file, one gzip member per file, as the Service's runner sends `artifact_format: gzip`. */
export async function writeGzip(root: string, files: string[], dest: string): Promise<void> {
  const parts: Buffer[] = [];
  for (const f of files) if (!f.endsWith('/')) parts.push(zlib.gzipSync(await fsp.readFile(path.join(root, f))));
  await fsp.writeFile(dest, Buffer.concat(parts), { mode: 0o600 });
}
