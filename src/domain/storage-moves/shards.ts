/**
 * Whether a storage shard can take part in a move: configured, reachable (its directory exists
 * and kiln may read and write it; the spec's "all storages must be reachable"), and where it
 * really is on disk. Two shard names whose directories resolve to the same place are one
 * storage: moving between them would copy a repository onto itself and then delete the
 * "source", the permanent-deletion defect the spec warns of, so moves compare real paths.
 */
import fs from 'node:fs/promises';
import { constants } from 'node:fs';
import type { StorageShard } from '../../config/schema.ts';

export type ShardCheck = { ok: true; root: string; realRoot: string } | {
  ok: false; problem: 'not_configured' | 'unreachable'; detail: string;
};

export async function checkShard(shards: StorageShard[], name: string): Promise<ShardCheck> {
  const shard = shards.find((s) => s.name === name);
  if (!shard) return { ok: false, problem: 'not_configured', detail: `storage "${name}" is not configured` };
  try {
    const realRoot = await fs.realpath(shard.path);
    if (!(await fs.stat(realRoot)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    await fs.access(realRoot, constants.R_OK | constants.W_OK | constants.X_OK);
    return { ok: true, root: shard.path, realRoot };
  } catch (err) {
    const code = (err as { code?: string }).code ?? (err as Error).message;
    return { ok: false, problem: 'unreachable', detail: `storage "${name}" is not reachable (${shard.path}: ${code})` };
  }
}

/** Whether two reachable shards are one directory on disk (compared after resolving symlinks). */
export function isSamePlace(a: { realRoot: string }, b: { realRoot: string }): boolean {
  return a.realRoot === b.realRoot;
}
