/** Every Kysely call about environment rows. */
import { sql, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { EnvironmentRow, EnvironmentsTable } from '../../db/tables/environments.ts';
import { isStorableId } from '../../db/constraints.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

export type NewEnvironment = Pick<EnvironmentRow, 'project_id' | 'name' | 'slug' | 'external_url' | 'environment_type' | 'state' | 'tier'>;

export async function findEnvironmentInProject(db: Db, projectId: number, id: number): Promise<EnvironmentRow | undefined> {
  if (!isStorableId(id)) return undefined;
  return db.selectFrom('environments').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
}

export function findEnvironmentById(db: Db, id: number): Promise<EnvironmentRow | undefined> {
  return db.selectFrom('environments').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findEnvironmentByName(db: Db, projectId: number, name: string): Promise<EnvironmentRow | undefined> {
  return db.selectFrom('environments').selectAll().where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();
}

export function environmentsByIds(db: Db, ids: number[]): Promise<EnvironmentRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('environments').selectAll().where('id', 'in', ids).execute();
}

/** Inserts; a name or slug the project already has throws the unique violation. */
export function insertEnvironment(db: Db, e: NewEnvironment): Promise<EnvironmentRow> {
  const now = nowIso();
  return db.insertInto('environments').values({ ...e, auto_stop_at: null, auto_delete_at: null, created_at: now, updated_at: now })
    .returningAll().executeTakeFirstOrThrow();
}

/**
 * The environment of that name, made when missing (Seed::Environment find_or_initialize_by name);
 * a concurrent pipeline making the same one is no error. Undefined when another name holds the slug.
 */
export async function findOrInsertEnvironment(db: Db, e: NewEnvironment): Promise<EnvironmentRow | undefined> {
  const found = await findEnvironmentByName(db, e.project_id, e.name);
  if (found) return found;
  const now = nowIso();
  await db.insertInto('environments').values({ ...e, auto_stop_at: null, auto_delete_at: null, created_at: now, updated_at: now })
    .onConflict((oc) => oc.doNothing()).execute();
  return findEnvironmentByName(db, e.project_id, e.name);
}

export async function updateEnvironment(
  db: Db, id: number, set: Omit<Updateable<EnvironmentsTable>, 'id' | 'project_id' | 'created_at'>,
): Promise<EnvironmentRow | undefined> {
  return db.updateTable('environments').set({ ...set, updated_at: nowIso() }).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Moves the state only from one of `from` (a state machine event): the updated row, or undefined. */
export async function changeEnvironmentState(
  db: Db, id: number, from: readonly string[], to: string, set: Omit<Updateable<EnvironmentsTable>, 'id' | 'state'> = {},
): Promise<EnvironmentRow | undefined> {
  return db.updateTable('environments').set({ ...set, state: to, updated_at: nowIso() })
    .where('id', '=', id).where('state', 'in', from).returningAll().executeTakeFirst();
}

export async function deleteEnvironment(db: Db, id: number): Promise<void> {
  await db.deleteFrom('environments').where('id', '=', id).execute();
}

export interface EnvironmentFilters {
  name?: string;
  search?: string;
  states?: string;
}

/** GET /projects/:id/environments: by name, by the start of the name, by state; in id order. */
export function projectEnvironmentsQuery(db: Db, projectId: number, f: EnvironmentFilters) {
  let q = db.selectFrom('environments').selectAll().where('project_id', '=', projectId);
  if (f.name !== undefined) q = q.where('name', '=', f.name);
  if (f.search !== undefined) {
    const escaped = f.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
    // Environment.for_name_like: names that begin with the text, in any case.
    q = q.where((eb) => eb(sql`lower(name)`, 'like', sql`${`${escaped}%`} escape '\\'`));
  }
  if (f.states !== undefined) q = q.where('state', '=', f.states);
  return q.orderBy('id');
}

/**
 * The project's available environments not deployed to, nor changed, since `before`
 * (Environments::StopStaleService: Environment.deployed_and_updated_before), at most `limit`.
 */
export function staleEnvironments(db: Db, projectId: number, before: string, limit: number): Promise<EnvironmentRow[]> {
  return db.selectFrom('environments').selectAll().where('project_id', '=', projectId).where('state', '=', 'available')
    .where('updated_at', '<', before)
    .where((eb) => eb.not(eb.exists(
      eb.selectFrom('deployments').select('deployments.id').whereRef('deployments.environment_id', '=', 'environments.id')
        .where('deployments.updated_at', '>=', before),
    )))
    .orderBy('id').limit(limit).execute();
}

/**
 * Stopped environments of the review folder last changed before `before`
 * (Environments::ScheduleToDeleteReviewAppsService: Environment.stopped_review_apps), oldest first.
 */
export function stoppedReviewApps(db: Db, projectId: number, before: string, limit: number): Promise<EnvironmentRow[]> {
  return db.selectFrom('environments').selectAll().where('project_id', '=', projectId).where('environment_type', '=', 'review')
    .where('state', '=', 'stopped').where('updated_at', '<', before).where('auto_delete_at', 'is', null)
    .orderBy('updated_at').orderBy('id').limit(limit).execute();
}

export async function deleteEnvironments(db: Db, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('environments').where('id', 'in', ids).execute();
}

/** A new pipeline's builds with what their `environment:` needs (pipeline-environments.ts). */
export function pipelineBuildsWithOptions(db: Db, pipelineId: number) {
  return db.selectFrom('ci_builds').select(['id', 'options', 'ref', 'tag', 'user_id'])
    .where('pipeline_id', '=', pipelineId).where('type', '=', 'build').orderBy('id').execute();
}

/** Available environments whose auto_stop_at has come (environments_auto_stop_at). */
export function dueAutoStops(db: Db, now: string, limit: number): Promise<EnvironmentRow[]> {
  return db.selectFrom('environments').selectAll().where('auto_stop_at', '<=', now).where('state', '=', 'available')
    .orderBy('auto_stop_at').limit(limit).execute();
}

/** Stopped environments whose auto_delete_at has come (environments_auto_delete_at). */
export function dueAutoDeletions(db: Db, now: string, limit: number): Promise<EnvironmentRow[]> {
  return db.selectFrom('environments').selectAll().where('auto_delete_at', '<=', now).where('state', '=', 'stopped')
    .orderBy('auto_delete_at').limit(limit).execute();
}
