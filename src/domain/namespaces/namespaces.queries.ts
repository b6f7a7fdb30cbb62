/**
 * Every Kysely call about namespaces (personal namespaces and groups) as containers: lookups by
 * id and by full path, and the ancestry that full paths and inherited memberships are made of.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB, NamespaceRow } from '../../db/types.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Sub-groups nest at most this deep in the Service (Namespace::MAX_DEPTH... 20 levels). */
export const MAX_NAMESPACE_DEPTH = 20;

export function findNamespaceById(db: Db, id: number): Promise<NamespaceRow | undefined> {
  return db.selectFrom('namespaces').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Walks `a/b/c` one indexed step per segment (namespaces_path_lower: parent, lower(path)). */
export async function findNamespaceByFullPath(db: Db, fullPath: string): Promise<NamespaceRow | undefined> {
  const segments = fullPath.split('/');
  if (segments.length > MAX_NAMESPACE_DEPTH || segments.some((s) => s === '')) return undefined;
  let current: NamespaceRow | undefined;
  for (const segment of segments) {
    const parentId = current?.id ?? 0;
    current = await db.selectFrom('namespaces').selectAll()
      .where(sql`coalesce(parent_id, 0)`, '=', parentId)
      .where(sql`lower(path)`, '=', segment.toLowerCase())
      .executeTakeFirst();
    if (!current) return undefined;
  }
  return current;
}

/** An integer id or a full path, as `:id` of the groups resource accepts. */
export function findNamespaceByIdOrPath(db: Db, idOrPath: string): Promise<NamespaceRow | undefined> {
  if (/^\d+$/.test(idOrPath)) {
    const id = Number(idOrPath);
    return Number.isSafeInteger(id) && id <= 2_147_483_647 ? findNamespaceById(db, id) : Promise.resolve(undefined);
  }
  return findNamespaceByFullPath(db, idOrPath);
}

export interface NamespacePaths {
  fullPath: string;
  fullName: string;
  /** Ids from the namespace itself up to its root. */
  lineage: number[];
}

/**
 * Full paths and names of `namespaces` (plus every ancestor they need), loading the missing
 * ancestors one level per query.
 */
export async function namespacePaths(db: Db, namespaces: NamespaceRow[]): Promise<Map<number, NamespacePaths>> {
  const byId = new Map<number, NamespaceRow>(namespaces.map((n) => [n.id, n]));
  for (let depth = 0; depth < MAX_NAMESPACE_DEPTH; depth += 1) {
    const missing = [...new Set([...byId.values()].map((n) => n.parent_id).filter((p): p is number => p !== null && !byId.has(p)))];
    if (missing.length === 0) break;
    const parents = await db.selectFrom('namespaces').selectAll().where('id', 'in', missing).execute();
    for (const p of parents) byId.set(p.id, p);
  }
  const out = new Map<number, NamespacePaths>();
  for (const ns of namespaces) {
    const chain: NamespaceRow[] = [];
    let cur: NamespaceRow | undefined = ns;
    while (cur && chain.length <= MAX_NAMESPACE_DEPTH) {
      chain.push(cur);
      cur = cur.parent_id === null ? undefined : byId.get(cur.parent_id);
    }
    chain.reverse();
    out.set(ns.id, {
      fullPath: chain.map((n) => n.path).join('/'),
      fullName: chain.map((n) => n.name).join(' / '),
      lineage: chain.map((n) => n.id).reverse(),
    });
  }
  return out;
}

export async function namespacePathsById(db: Db, ids: number[]): Promise<Map<number, NamespacePaths & { namespace: NamespaceRow }>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('namespaces').selectAll().where('id', 'in', [...new Set(ids)]).execute();
  const paths = await namespacePaths(db, rows);
  return new Map(rows.map((r) => [r.id, { ...paths.get(r.id)!, namespace: r }]));
}

/** Ids of every group below `rootIds` (not including them), one level per query. */
export async function descendantGroupIds(db: Db, rootIds: number[]): Promise<Map<number, number>> {
  // Maps each descendant to the root-side parent it was reached from, so callers can inherit.
  const parentOf = new Map<number, number>();
  let frontier = rootIds;
  for (let depth = 0; depth < MAX_NAMESPACE_DEPTH && frontier.length > 0; depth += 1) {
    const children = await db.selectFrom('namespaces').select(['id', 'parent_id'])
      .where('kind', '=', 'group').where('parent_id', 'in', frontier).execute();
    frontier = [];
    for (const c of children) {
      if (parentOf.has(c.id) || rootIds.includes(c.id)) continue;
      parentOf.set(c.id, c.parent_id!);
      frontier.push(c.id);
    }
  }
  return parentOf;
}

/** Whether a root-level path is taken by any namespace (usernames' personal namespaces included). */
export async function pathTaken(db: Db, parentId: number | null, path: string): Promise<boolean> {
  const row = await db.selectFrom('namespaces').select('id')
    .where(sql`coalesce(parent_id, 0)`, '=', parentId ?? 0)
    .where(sql`lower(path)`, '=', path.toLowerCase())
    .executeTakeFirst();
  return row !== undefined;
}
