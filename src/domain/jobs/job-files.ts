/**
 * Job logs and artifacts are files under KILN_DATA_DIR/ci (CONTRACT §2), written from the request
 * stream and read back as a stream: a multi-gigabyte artifact never sits in memory.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform, type Readable } from 'node:stream';

export function traceRelPath(job: { id: number; project_id: number }): string {
  return path.join('ci', 'traces', String(job.project_id), `${job.id}.log`);
}

export function artifactRelPath(job: { id: number; project_id: number }, fileType: string): string {
  return path.join('ci', 'artifacts', String(job.project_id), String(job.id), fileType);
}

export class TooLarge extends Error {}

/** Counts bytes on their way through and stops the stream past `max`. */
function limiter(max: number, counted: { bytes: number }): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      counted.bytes += chunk.length;
      if (counted.bytes > max) done(new TooLarge(`more than ${max} bytes`));
      else done(null, chunk);
    },
  });
}

/** Writes `source` into `absPath` at byte `start` (0 truncates); returns the bytes written. */
export async function writeStreamAt(absPath: string, start: number, source: Readable, max: number): Promise<number> {
  await fsp.mkdir(path.dirname(absPath), { recursive: true });
  const counted = { bytes: 0 };
  const flags = start === 0 ? 'w' : 'r+';
  await pipeline(source, limiter(max, counted), fs.createWriteStream(absPath, { flags, start }));
  return counted.bytes;
}

/** Writes a whole upload to a temporary name first, then renames, so readers never see half a file. */
export async function writeFileFromStream(absPath: string, source: Readable, max: number): Promise<number> {
  const tmp = `${absPath}.${process.pid}.${Date.now()}.tmp`;
  try {
    const size = await writeStreamAt(tmp, 0, source, max);
    await fsp.rename(tmp, absPath);
    return size;
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  }
}

export async function fileSize(absPath: string): Promise<number | null> {
  try {
    return (await fsp.stat(absPath)).size;
  } catch {
    return null;
  }
}

/** The file, or its first `length` bytes, as a stream. */
export function readStream(absPath: string, length?: number): fs.ReadStream {
  return fs.createReadStream(absPath, length === undefined ? {} : { start: 0, end: Math.max(0, length - 1) });
}

export async function removeFile(absPath: string): Promise<void> {
  await fsp.rm(absPath, { force: true });
}

export async function removeDir(absPath: string): Promise<void> {
  await fsp.rm(absPath, { recursive: true, force: true });
}
