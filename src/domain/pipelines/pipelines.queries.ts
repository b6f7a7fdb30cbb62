/** Every Kysely call about pipeline rows. */
import type { Kysely, SelectQueryBuilder, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import { ByIds, QueryShape } from '../../db/query-shape.ts';
import type { CiBuildsTable, CiPipelinesTable, PipelineRow } from '../../db/tables/ci.ts';
import type { Insertable } from 'kysely';
import { nowIso } from '../clock.ts';
import { nextIid } from '../internal-ids/internal-ids.queries.ts';

type Db = Kysely<DB> | Transaction<DB>;

export function findPipeline(db: Db, id: number): Promise<PipelineRow | undefined> {
  return db.selectFrom('ci_pipelines').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findPipelineInProject(db: Db, projectId: number, id: number): Promise<PipelineRow | undefined> {
  return db.selectFrom('ci_pipelines').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
}

export const pipelinesByIds = new ByIds((db, ids) => db.selectFrom('ci_pipelines').selectAll().where('id', 'in', ids));

export async function findPipelinesByIds(db: Db, ids: number[]): Promise<Map<number, PipelineRow>> {
  const rows = await pipelinesByIds.all(db as Kysely<DB>, ids);
  return new Map(rows.map((r) => [r.id, r]));
}

export type NewPipeline = Omit<Insertable<CiPipelinesTable>, 'id' | 'iid' | 'created_at' | 'updated_at'>;
export type NewJob = Omit<Insertable<CiBuildsTable>, 'id' | 'pipeline_id' | 'created_at' | 'updated_at'>;

/**
 * Inserts a pipeline and its jobs; the caller runs it in a transaction. Every way a pipeline is
 * created (API, push, trigger, bridge) comes here, so each takes its iid from the project's
 * counter in that same transaction (internal-ids.queries.ts), never max(iid) + 1.
 */
export async function insertPipelineWithJobs(trx: Transaction<DB>, pipeline: NewPipeline, jobs: NewJob[]): Promise<PipelineRow> {
  const now = nowIso();
  const iid = await nextIid(trx, { project_id: pipeline.project_id }, 'ci_pipelines');
  const row = await trx.insertInto('ci_pipelines').values({ ...pipeline, iid, created_at: now, updated_at: now })
    .returningAll().executeTakeFirstOrThrow();
  // In chunks: one statement's bind parameters are bounded on both engines.
  for (let i = 0; i < jobs.length; i += 500) {
    await trx.insertInto('ci_builds').values(
      jobs.slice(i, i + 500).map((j) => ({ ...j, pipeline_id: row.id, created_at: now, updated_at: now })),
    ).execute();
  }
  return row;
}

export async function updatePipelineStatus(
  db: Db, id: number, set: { status: string; started_at?: string | null; finished_at?: string | null; duration?: number | null },
): Promise<void> {
  await db.updateTable('ci_pipelines').set({ ...set, updated_at: nowIso() }).where('id', '=', id).execute();
}

export interface PipelineFilters {
  status?: string;
  ref?: string;
  sha?: string;
  source?: string;
  scope?: string;
  orderBy: 'id' | 'status' | 'ref' | 'updated_at' | 'user_id';
  sort: 'asc' | 'desc';
}

const FINISHED = ['success', 'failed', 'canceled', 'skipped'];

/** Where a project's pipelines list starts, selecting nothing (its shape adds the filters). */
export type ProjectPipelinesFrom = SelectQueryBuilder<DB, 'ci_pipelines', object>;

/** GET /projects/:id/pipelines' filters and order as a shape compiled once (db/query-shape.ts). */
export function projectPipelinesShape(
  projectId: number, f: PipelineFilters, opts: { inline?: boolean } = {},
): QueryShape<ProjectPipelinesFrom> {
  const shape = new QueryShape<ProjectPipelinesFrom>(opts);
  const project = shape.arg(projectId);
  shape.step('project', (qb) => qb.where('project_id', '=', project));
  const equal = (column: 'status' | 'ref' | 'sha' | 'source', value: string | undefined) => {
    if (!value) return;
    const v = shape.arg(value);
    shape.step(column, (qb) => qb.where(column, '=', v));
  };
  equal('status', f.status);
  equal('ref', f.ref);
  equal('sha', f.sha);
  equal('source', f.source);
  if (f.scope === 'running' || f.scope === 'pending') equal('status', f.scope);
  if (f.scope === 'finished') shape.step('finished', (qb) => qb.where('status', 'in', FINISHED));
  // branches / tags: the latest pipeline of each branch / tag (Ci::PipelinesFinder).
  if (f.scope === 'branches' || f.scope === 'tags') {
    const tag = f.scope === 'tags' ? 1 : 0;
    shape.step(f.scope, (qb) => qb.where('id', 'in', (eb) => eb.selectFrom('ci_pipelines').select((e) => e.fn.max('id').as('id'))
      .where('project_id', '=', project).where('tag', '=', tag).groupBy('ref')));
  }
  const { orderBy, sort } = f;
  shape.order(`${orderBy}:${sort}`, (qb) => {
    const q = qb.orderBy(orderBy, sort);
    return orderBy === 'id' ? q : q.orderBy('id', sort);
  });
  return shape;
}

export function projectPipelinesQuery(db: Db, projectId: number, f: PipelineFilters) {
  return projectPipelinesShape(projectId, f, { inline: true }).apply((db as Kysely<DB>).selectFrom('ci_pipelines')).selectAll();
}

/** A deleted user's pipelines and jobs go to the ghost user (soft delete; ci_*_user indexes). */
export async function reassignPipelinesAndJobs(trx: Transaction<DB>, fromUserId: number, toUserId: number): Promise<void> {
  await trx.updateTable('ci_pipelines').set({ user_id: toUserId }).where('user_id', '=', fromUserId).execute();
  await trx.updateTable('ci_builds').set({ user_id: toUserId }).where('user_id', '=', fromUserId).execute();
}

/** How many times a job of that name was retried in the pipeline (its replaced copies). */
export async function countRetries(db: Db, pipelineId: number, name: string): Promise<number> {
  const row = await db.selectFrom('ci_builds').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('pipeline_id', '=', pipelineId).where('name', '=', name).where('retried', '=', 1).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The coverage its latest jobs reported (for Ci::Pipeline#coverage). */
export async function latestJobCoverages(db: Db, pipelineId: number): Promise<number[]> {
  const rows = await db.selectFrom('ci_builds').select('coverage')
    .where('pipeline_id', '=', pipelineId).where('retried', '=', 0).where('coverage', 'is not', null).execute();
  return rows.map((r) => Number(r.coverage));
}

/**
 * Older pipelines of a branch that are still going and asked to be auto-canceled by a newer
 * commit (workflow:auto_cancel:on_new_commit conservative or interruptible): the
 * (project_id, ref, id) index finds them.
 */
export function redundantPipelineCandidates(
  db: Db, p: { project_id: number; ref: string; id: number; sha: string },
): Promise<PipelineRow[]> {
  return db.selectFrom('ci_pipelines').selectAll().where('project_id', '=', p.project_id).where('ref', '=', p.ref)
    .where('id', '<', p.id).where('tag', '=', 0).where('sha', '!=', p.sha).where('upstream_bridge_id', 'is', null)
    .where('status', 'in', ['created', 'waiting_for_resource', 'preparing', 'pending', 'running'])
    .where('auto_cancel_on_new_commit', 'in', ['conservative', 'interruptible'])
    .orderBy('id', 'desc').limit(100).execute();
}

/** The newest pipelines of some projects, newest first (the web interface's dashboard). */
export function recentPipelinesOf(db: Db, projectIds: number[], limit: number): Promise<PipelineRow[]> {
  if (projectIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('ci_pipelines').selectAll().where('project_id', 'in', projectIds).orderBy('id', 'desc').limit(limit).execute();
}
