/**
 * Every Kysely call about namespaces (personal namespaces and groups) as containers: lookups by
 * id and by full path, and the ancestry that full paths and inherited memberships are made of.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB, NamespaceRow } from '../../db/types.ts';
import { ByIds } from '../../db/query-shape.ts';
import { isStorableText } from '../../db/constraints.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Sub-groups nest at most this deep in the Service (Namespace::MAX_DEPTH... 20 levels). */
export const MAX_NAMESPACE_DEPTH = 20;

export function findNamespaceById(db: Db, id: number): Promise<NamespaceRow | undefined> {
  return db.selectFrom('namespaces').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Walks `a/b/c` one indexed step per segment (namespaces_path_lower: parent, lower(path)). */
/** A user's personal namespace. */
export function findUserNamespace(db: Db, userId: number): Promise<NamespaceRow | undefined> {
  return db.selectFrom('namespaces').selectAll().where('owner_id', '=', userId).where('kind', '=', 'user').executeTakeFirst();
}

export async function findNamespaceByFullPath(db: Db, fullPath: string): Promise<NamespaceRow | undefined> {
  const segments = fullPath.split('/');
  // Control characters and lone surrogates name no namespace (PostgreSQL text cannot carry a NUL).
  const unusable = (s: string) => s === '' || s.length > 255 || /[\x00-\x1f]/.test(s) || !isStorableText(s);
  if (segments.length > MAX_NAMESPACE_DEPTH || segments.some(unusable)) return undefined;
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
    const parents = await namespacesByIds.all(db as Kysely<DB>, missing);
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

const namespacesByIds = new ByIds((db, ids) => db.selectFrom('namespaces').selectAll().where('id', 'in', ids));

export async function namespacePathsById(db: Db, ids: number[]): Promise<Map<number, NamespacePaths & { namespace: NamespaceRow }>> {
  const rows = await namespacesByIds.all(db as Kysely<DB>, ids);
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

export interface NamespaceListFilters {
  /** null: every namespace (administrators); otherwise the user's own. */
  userId: number | null;
  /** Only the personal namespace and groups the user owns (a direct Owner membership). */
  ownedOnly: boolean;
  topLevelOnly: boolean;
  search?: string;
}

/**
 * GET /namespaces (User#namespaces): the user's personal namespace and the groups they are a
 * direct member of (Owner only with owned_only); every namespace for administrators. Ordered by
 * id for stable pages.
 */
export function namespacesQuery(db: Db, f: NamespaceListFilters) {
  let qb = db.selectFrom('namespaces').selectAll();
  if (f.userId !== null) {
    const userId = f.userId;
    // One id set (a union), not an OR beside a sub-select: PostgreSQL serves an OR whose branch
    // is a sub-select only by reading the whole table (test/api/query-plans.test.ts).
    qb = qb.where((eb) => eb('id', 'in', eb.selectFrom('namespaces as own').select('own.id')
      .where('own.kind', '=', 'user').where('own.owner_id', '=', userId)
      .union(eb.selectFrom('members').select('source_id as id')
        .where('source_type', '=', 'Namespace').where('user_id', '=', userId)
        .where('access_level', '>=', f.ownedOnly ? 50 : 10))));
  }
  if (f.topLevelOnly) qb = qb.where('parent_id', 'is', null);
  if (f.search) {
    const pattern = `%${f.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    qb = qb.where((eb) => eb.or([
      eb(sql`lower(name)`, 'like', sql`${pattern} escape '\\'`),
      eb(sql`lower(path)`, 'like', sql`${pattern} escape '\\'`),
    ]));
  }
  return qb.orderBy('id', 'asc');
}

/** Whether any namespace's path or name is `candidate`, case-insensitively (Namespace.find_by_path_or_name). */
async function pathOrNameTaken(db: Db, candidate: string): Promise<boolean> {
  const lower = candidate.toLowerCase();
  const row = await db.selectFrom('namespaces').select('id')
    .where((eb) => eb.or([eb(sql`lower(path)`, '=', lower), eb(sql`lower(name)`, '=', lower)]))
    .limit(1).executeTakeFirst();
  return row !== undefined;
}

/**
 * The path the Service suggests for a taken one (Namespace.clean_path): the characters a path
 * may not hold are dropped, then a counter is appended until no namespace has that path or
 * name (Uniquify: `path1`, `path2`, …).
 */
export async function suggestNamespacePath(db: Db, path: string): Promise<string> {
  let base = path.replace(/@.*$/s, '').replace(/\.git$/, '').replace(/^-+/, '').replace(/\.+$/, '').replace(/[^a-zA-Z0-9_\-.]/g, '');
  if (base === '') base = 'blank';
  let candidate = base;
  // Bounded: each step is one indexed query, and a thousand taken variants is not a real case.
  for (let counter = 1; counter <= 1000 && (await pathOrNameTaken(db, candidate)); counter += 1) candidate = `${base}${counter}`;
  return candidate;
}

/**
 * members_count_with_descendants of each group in `groupIds`: the distinct users with a
 * membership in the group or any group below it. One walk down the trees and one membership
 * query for all of them.
 */
export async function membersCountWithDescendants(db: Db, groupIds: number[]): Promise<Map<number, number>> {
  if (groupIds.length === 0) return new Map();
  const parentOf = await descendantGroupIds(db, groupIds);
  const roots = new Set(groupIds);
  // descendantGroupIds leaves the listed groups out; one may sit below another.
  const listed = await db.selectFrom('namespaces').select(['id', 'parent_id']).where('id', 'in', groupIds).execute();
  for (const g of listed) if (g.parent_id !== null) parentOf.set(g.id, g.parent_id);
  /** The groups of `groupIds` that `id` counts for: itself if listed, and every listed ancestor. */
  const countedIn = (id: number): number[] => {
    const out: number[] = [];
    for (
      let cur: number | undefined = id, depth = 0;
      cur !== undefined && depth <= MAX_NAMESPACE_DEPTH;
      cur = parentOf.get(cur), depth += 1
    ) {
      if (roots.has(cur)) out.push(cur);
    }
    return out;
  };
  const members = await db.selectFrom('members').select(['source_id', 'user_id']).distinct()
    .where('source_type', '=', 'Namespace').where('source_id', 'in', [...new Set([...roots, ...parentOf.keys()])]).execute();
  const users = new Map<number, Set<number>>(groupIds.map((id) => [id, new Set()]));
  for (const m of members) for (const root of countedIn(m.source_id)) users.get(root)!.add(m.user_id);
  return new Map([...users].map(([id, set]) => [id, set.size]));
}
