/** Every Kysely call about runner rows. */
import { sql, type SelectQueryBuilder, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { DB } from '../../db/types.ts';
import { ByIds } from '../../db/query-shape.ts';
import type { CiRunnersTable, RunnerRow } from '../../db/tables/ci.ts';
import type {} from '../../db/tables/ci-runners.ts';
import { isStorableId } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

export async function findRunner(db: Db, id: number): Promise<RunnerRow | undefined> {
  if (!isStorableId(id)) return undefined;
  return db.selectFrom('ci_runners').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findRunnerByTokenDigest(db: Db, tokenDigest: string): Promise<RunnerRow | undefined> {
  return db.selectFrom('ci_runners').selectAll().where('token_digest', '=', tokenDigest).executeTakeFirst();
}

export const runnersByIds = new ByIds((db, ids) => db.selectFrom('ci_runners').selectAll().where('id', 'in', ids));

export async function findRunnersByIds(db: Db, ids: number[]): Promise<Map<number, RunnerRow>> {
  const rows = await runnersByIds.all(db as Kysely<DB>, ids);
  return new Map(rows.map((r) => [r.id, r]));
}

export function insertRunner(db: Db, values: Omit<Insertable<CiRunnersTable>, 'id' | 'created_at' | 'updated_at'>): Promise<RunnerRow> {
  const now = nowIso();
  return db.insertInto('ci_runners').values({ ...values, created_at: now, updated_at: now }).returningAll().executeTakeFirstOrThrow();
}

export async function updateRunner(db: Db, id: number, set: Omit<Updateable<CiRunnersTable>, 'id'>): Promise<RunnerRow> {
  return db.updateTable('ci_runners').set({ ...set, updated_at: nowIso() }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteRunner(db: Db, id: number): Promise<void> {
  await db.deleteFrom('ci_runners').where('id', '=', id).execute();
}

/** When the runner was last heard from, and what it says about itself (contacts.ts decides when). */
export async function touchRunner(db: Db, id: number, set: Omit<Updateable<CiRunnersTable>, 'id'>, at: string = nowIso()): Promise<void> {
  await db.updateTable('ci_runners').set({ ...set, contacted_at: at }).where('id', '=', id).execute();
}

export interface RunnerFilters {
  type?: string;
  /** Only these runners (a project's, a group's, a user's); undefined: every runner. */
  scope?: RunnerScope;
  paused?: boolean;
  /** online, offline, stale, never_contacted / not_connected, against `now`. */
  status?: string;
  tagList?: string[];
  now: Date;
}

/** Contacted within this long: online (Ci::Runner::ONLINE_CONTACT_TIMEOUT, 2 hours). */
export const ONLINE_CONTACT_TIMEOUT_MS = 2 * 3600_000;
/** Not contacted for this long (or never, created this long ago): stale (Ci::Runner::STALE_TIMEOUT, 3 months). */
export const STALE_TIMEOUT_MS = 90 * 86_400_000;

/**
 * Which runners a list covers: project runners enabled for any of `projectIds`, group runners of
 * any of `groupIds`, and instance runners when `instance`.
 */
export interface RunnerScope {
  projectIds: number[];
  groupIds: number[];
  instance: boolean;
}

export function runnersQuery(db: Db, f: RunnerFilters) {
  let q = db.selectFrom('ci_runners').selectAll();
  const scope = f.scope;
  if (scope) {
    // One id set (a union of the three kinds), not an OR beside a sub-select: PostgreSQL serves
    // an OR whose branch is a sub-select only by reading the whole table (test/api/query-plans.test.ts).
    q = q.where((eb) => {
      // The three parts read different tables; each selects one `id` column, which is all a union needs.
      const parts: SelectQueryBuilder<any, any, { id: number }>[] = [];
      if (scope.projectIds.length > 0) {
        parts.push(eb.selectFrom('ci_runner_projects').select('runner_id as id').where('project_id', 'in', scope.projectIds));
      }
      if (scope.groupIds.length > 0) {
        parts.push(
          eb.selectFrom('ci_runners as g').select('g.id').where(
            'g.runner_type', '=', 'group_type',
          ).where('g.group_id', 'in', scope.groupIds),
        );
      }
      if (scope.instance) parts.push(eb.selectFrom('ci_runners as i').select('i.id').where('i.runner_type', '=', 'instance_type'));
      if (parts.length === 0) return sql<boolean>`1 = 0`;
      return eb('id', 'in', parts.slice(1).reduce((all, part) => all.union(part), parts[0]));
    });
  }
  if (f.type) q = q.where('runner_type', '=', f.type);
  if (f.paused !== undefined) q = q.where('active', '=', f.paused ? 0 : 1);
  const online = new Date(f.now.getTime() - ONLINE_CONTACT_TIMEOUT_MS).toISOString();
  const stale = new Date(f.now.getTime() - STALE_TIMEOUT_MS).toISOString();
  // The deprecated status values of 15.2 (spec, Deprecations: removal planned for 16.0).
  if (f.status === 'active') q = q.where('active', '=', 1);
  if (f.status === 'paused') q = q.where('active', '=', 0);
  if (f.status === 'online') q = q.where('contacted_at', '>', online);
  if (f.status === 'offline') q = q.where('contacted_at', '<=', online);
  if (f.status === 'not_connected' || f.status === 'never_contacted') q = q.where('contacted_at', 'is', null);
  if (f.status === 'stale') {
    q = q.where((eb) => eb.or([
      eb('contacted_at', '<=', stale),
      eb.and([eb('contacted_at', 'is', null), eb('created_at', '<=', stale)]),
    ]));
  }
  for (const tag of f.tagList ?? []) {
    // Tags are stored space-separated; pad both sides so one tag never matches inside another.
    const pattern = `% ${tag.replace(/[%_\\]/g, '\\$&')} %`;
    q = q.where(sql<boolean>`(' ' || tag_list || ' ') like ${pattern} escape '\\'`);
  }
  return q.orderBy('id', 'asc');
}

/** The projects a project runner is enabled for, oldest first (the first is its owner). */
export async function runnerProjectIds(db: Db, runnerId: number): Promise<number[]> {
  if (!isStorableId(runnerId)) return [];
  const rows = await db.selectFrom('ci_runner_projects').select('project_id').where('runner_id', '=', runnerId).orderBy('id').execute();
  return rows.map((r) => r.project_id);
}

export async function insertRunnerProject(db: Db, runnerId: number, projectId: number): Promise<void> {
  await db.insertInto('ci_runner_projects').values({ runner_id: runnerId, project_id: projectId, created_at: nowIso() }).execute();
}

export async function deleteRunnerProject(db: Db, runnerId: number, projectId: number): Promise<boolean> {
  const r = await db.deleteFrom('ci_runner_projects').where('runner_id', '=', runnerId).where(
    'project_id', '=', projectId,
  ).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

/** Projects (ids) whose namespace is one of `namespaceIds`. */
export async function projectIdsInNamespaces(db: Db, namespaceIds: number[]): Promise<number[]> {
  if (namespaceIds.length === 0) return [];
  const rows = await db.selectFrom('projects').select('id').where('namespace_id', 'in', namespaceIds).execute();
  return rows.map((r) => r.id);
}

/** Projects where the user is a direct member at `minLevel` or above. */
export async function directProjectIdsAtLevel(db: Db, userId: number, minLevel: number): Promise<number[]> {
  const rows = await db.selectFrom('members').select('source_id').where('user_id', '=', userId)
    .where('source_type', '=', 'Project').where('access_level', '>=', minLevel).execute();
  return rows.map((r) => r.source_id);
}

/** A runner's jobs, newest first unless `sort` says asc, optionally by status, within `projectIds` when given. */
export function runnerJobsQuery(db: Db, runnerId: number, f: { status?: string; sort: 'asc' | 'desc'; projectIds?: number[] }) {
  let q = db.selectFrom('ci_builds').selectAll().where('runner_id', '=', runnerId);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.projectIds) q = f.projectIds.length > 0 ? q.where('project_id', 'in', f.projectIds) : q.where(sql<boolean>`1 = 0`);
  return q.orderBy('id', f.sort);
}

/** The namespace of each of `projectIds`. */
export function projectNamespaces(db: Db, projectIds: number[]): Promise<{ id: number; namespace_id: number }[]> {
  if (projectIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('projects').select(['id', 'namespace_id']).where('id', 'in', projectIds).execute();
}

/** Whose registration token has this digest (a project's or a group's). */
export function findRegistrationTokenOwner(db: Db, tokenDigest: string): Promise<{ source_type: string; source_id: number } | undefined> {
  return db.selectFrom('ci_runner_registration_tokens').select(['source_type', 'source_id'])
    .where('token_digest', '=', tokenDigest).executeTakeFirst();
}

/** The stored registration token of a project ('Project') or group ('Namespace'). */
export function findRegistrationToken(
  db: Db, sourceType: string, sourceId: number,
): Promise<{ encrypted_token: string | null } | undefined> {
  return db.selectFrom('ci_runner_registration_tokens').select('encrypted_token')
    .where('source_type', '=', sourceType).where('source_id', '=', sourceId).executeTakeFirst();
}

export interface StoredRegistrationToken {
  sourceType: string;
  sourceId: number;
  tokenDigest: string;
  encryptedToken: string;
}

function tokenRow(t: StoredRegistrationToken) {
  return {
    source_type: t.sourceType, source_id: t.sourceId, token_digest: t.tokenDigest, encrypted_token: t.encryptedToken, created_at: nowIso(),
  };
}

/** Stores a project's or group's token in place of the one it had (one row per owner, a unique index). */
export async function replaceRegistrationToken(db: Db, t: StoredRegistrationToken): Promise<void> {
  const row = tokenRow(t);
  await db.insertInto('ci_runner_registration_tokens').values(row)
    .onConflict((oc) => oc.columns(['source_type', 'source_id'])
      .doUpdateSet({ token_digest: row.token_digest, encrypted_token: row.encrypted_token, created_at: row.created_at }))
    .execute();
}

/** Stores a token for an owner that has none; keeps what a concurrent writer stored first. */
export async function insertRegistrationTokenIfAbsent(db: Db, t: StoredRegistrationToken): Promise<void> {
  await db.insertInto('ci_runner_registration_tokens')
    .values(tokenRow(t))
    .onConflict((oc) => oc.columns(['source_type', 'source_id']).doNothing())
    .execute();
}
