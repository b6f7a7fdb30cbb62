/**
 * Where repositories live: the shards of KILN_STORAGES (CONTRACT §2), and the weighted pick for
 * new repositories (the Service's Repository.pick_storage_shard over the application setting
 * `repository_storages_weighted`, a map of shard name → weight 0–100; `default` when unset or
 * when no configured shard has a weight).
 */
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import { currentSettings } from '../settings/settings.ts';

/** The weights setting (application settings; `{ default: 100 }` until an administrator sets it). */
export async function storageWeights(db: Kysely<DB>): Promise<Record<string, number> | null> {
  return (await currentSettings(db)).repository_storages_weighted;
}

/** A weighted random choice; `random` is injectable for tests. */
export function pickWeighted(shards: StorageShard[], weights: Record<string, number> | null, random: () => number = Math.random): string {
  const candidates = shards.map(
    (s) => ({ name: s.name, weight: Math.max(0, Number(weights?.[s.name] ?? (weights ? 0 : s.name === 'default' ? 100 : 0))) }),
  )
    .filter((c) => c.weight > 0);
  const total = candidates.reduce((sum, c) => sum + c.weight, 0);
  if (total === 0) return 'default';
  let point = random() * total;
  for (const c of candidates) {
    point -= c.weight;
    if (point < 0) return c.name;
  }
  return candidates[candidates.length - 1].name;
}

export async function pickStorage(db: Kysely<DB>, shards: StorageShard[]): Promise<string> {
  return pickWeighted(shards, await storageWeights(db));
}

export function shardRoot(shards: StorageShard[], name: string): string {
  const shard = shards.find((s) => s.name === name);
  if (!shard) throw new Error(`repository storage "${name}" is not configured`);
  return shard.path;
}

/** The absolute path of a repository from its shard and its path relative to the shard. */
export function repositoryPath(shards: StorageShard[], storage: string, diskPath: string): string {
  return path.join(shardRoot(shards, storage), diskPath);
}
