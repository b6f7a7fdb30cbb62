/** kiln's own version (package.json), which a backup's manifest records beside the schema's. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let version: string | null = null;

export function kilnVersion(): string {
  if (version === null) {
    const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'package.json');
    version = String((JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: string }).version ?? 'unknown');
  }
  return version;
}
