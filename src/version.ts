/**
 * The API version kiln answers as (the Service version whose behaviour it follows, DESIGN
 * Fidelity) and the kiln commit it runs, read once at start.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SERVICE_VERSION = '15.2.0';

export function currentRevision(): string {
  if (process.env.KILN_REVISION) return process.env.KILN_REVISION;
  try {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
    return execFileSync('git', ['rev-parse', '--short=11', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    return 'unknown';
  }
}
