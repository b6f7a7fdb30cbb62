/**
 * Coverage from a job's trace (the Service's Ci::Build#update_coverage / Gitlab::Ci::Trace#extract_coverage):
 * the job's `coverage:` regex is run on each line of the log, the last line that matches wins,
 * and the first number in that match is the percentage. The regex runs on RE2 (re2js), so a
 * user's pattern costs time linear in the log; only the log's last 4 MB are read.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { RE2JS } from 're2js';
import type { BuildRow } from '../../db/tables/ci.ts';
import { traceRelPath } from '../jobs/job-files.ts';
import type { CiEnv } from '../pipelines/ci-env.ts';

const MAX_TRACE_READ = 4 * 1024 * 1024;

export function coverageFrom(log: string, pattern: string): number | null {
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch {
    return null;
  }
  let found: string | null = null;
  for (const line of log.replace(/\x1b\[[0-9;]*m/g, '').split('\n')) {
    const m = re.matcher(line);
    if (m.find()) found = m.group(0);
  }
  const number = found === null ? null : /\d+(\.\d+)?/.exec(found);
  if (!number) return null;
  const value = Number(number[0]);
  return Number.isFinite(value) && value >= 0 && value <= 100 ? value : null;
}

export async function readCoverage(env: CiEnv, job: BuildRow, pattern: string): Promise<number | null> {
  const file = path.join(env.dataDir, traceRelPath(job));
  let handle: fs.FileHandle | null = null;
  try {
    handle = await fs.open(file, 'r');
    const { size } = await handle.stat();
    const length = Math.min(size, MAX_TRACE_READ);
    const buf = Buffer.alloc(length);
    await handle.read(buf, 0, length, size - length);
    return coverageFrom(buf.toString('utf8'), pattern);
  } catch {
    return null;
  } finally {
    await handle?.close();
  }
}
