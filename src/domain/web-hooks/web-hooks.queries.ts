/** Every Kysely call of the webhooks area (project hooks and system hooks). */
import type { Insertable, Kysely, Transaction, Updateable } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { WebHookRow, WebHooksTable } from '../../db/tables/web-hooks.ts';
import { nowIso } from '../clock.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** The event flags a hook can hear (columns of web_hooks). */
export type HookFlag =
  | 'push_events' | 'tag_push_events' | 'issues_events' | 'confidential_issues_events' | 'merge_requests_events'
  | 'note_events' | 'confidential_note_events' | 'job_events' | 'pipeline_events' | 'wiki_page_events'
  | 'deployment_events' | 'releases_events' | 'repository_update_events';

export type HookWrite = Omit<Updateable<WebHooksTable>, 'id' | 'type' | 'project_id' | 'created_at' | 'updated_at'>;

/** A project's hooks, or the system hooks (`projectId` null), in id order. */
export function hooksQuery(db: Db, projectId: number | null) {
  const qb = db.selectFrom('web_hooks').selectAll();
  return (projectId === null ? qb.where('type', '=', 'SystemHook') : qb.where('project_id', '=', projectId)).orderBy('id');
}

export async function findHook(db: Db, projectId: number | null, id: number): Promise<WebHookRow | undefined> {
  return hooksQuery(db, projectId).where('id', '=', id).executeTakeFirst();
}

export async function findHookById(db: Db, id: number): Promise<WebHookRow | undefined> {
  return db.selectFrom('web_hooks').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertHook(db: Db, projectId: number | null, values: HookWrite & { url: string }): Promise<WebHookRow> {
  const now = nowIso();
  const row: Insertable<WebHooksTable> = {
    ...values, url: values.url, type: projectId === null ? 'SystemHook' : 'ProjectHook', project_id: projectId,
    created_at: now, updated_at: now,
  };
  return db.insertInto('web_hooks').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateHook(db: Db, id: number, values: HookWrite): Promise<WebHookRow> {
  return db.updateTable('web_hooks').set({ ...values, updated_at: nowIso() }).where('id', '=', id)
    .returningAll().executeTakeFirstOrThrow();
}

export async function deleteHook(db: Db, id: number): Promise<void> {
  await db.deleteFrom('web_hooks').where('id', '=', id).execute();
}

/** The hooks of `projectId` (or the system hooks) that hear `flag`. */
export async function hooksHearing(db: Db, projectId: number | null, flag: HookFlag): Promise<WebHookRow[]> {
  return hooksQuery(db, projectId).where(flag, '=', 1).execute();
}

/** What pipeline and job payloads say of the runners that ran jobs. */
export interface HookRunner { id: number; description: string | null; runner_type: string; active: number; tag_list: string }

export async function runnersByIds(db: Db, ids: number[]): Promise<Map<number, HookRunner>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('ci_runners').select(['id', 'description', 'runner_type', 'active', 'tag_list'])
    .where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

/** A pipeline's variables (sealed values) for its payload. */
export function pipelineVariableRows(db: Db, pipelineId: number) {
  return db.selectFrom('ci_pipeline_variables').select(['key', 'encrypted_value'])
    .where('pipeline_id', '=', pipelineId).orderBy('id').execute();
}

/** The merge request of a merge request pipeline, for its payload. */
export function mergeRequestForHook(db: Db, id: number) {
  return db.selectFrom('merge_requests')
    .select(['id', 'iid', 'title', 'source_branch', 'source_project_id', 'target_branch', 'project_id', 'state', 'merge_status'])
    .where('id', '=', id).executeTakeFirst();
}

/** The project's first pipeline (TestHooks::ProjectService: project.pipelines.first). */
export function firstPipeline(db: Db, projectId: number) {
  return db.selectFrom('ci_pipelines').selectAll().where('project_id', '=', projectId).orderBy('id').limit(1).executeTakeFirst();
}

/** Whether a hook of the project (or, with `system`, a system hook) hears one of `flags`. */
export async function projectHearsAny(db: Db, projectId: number, flags: HookFlag[], system: boolean): Promise<boolean> {
  const row = await db.selectFrom('web_hooks').select('id')
    .where((eb) => eb.or([
      eb('project_id', '=', projectId),
      ...(system ? [eb('type', '=', 'SystemHook')] : []),
    ]))
    .where((eb) => eb.or(flags.map((f) => eb(f, '=', 1))))
    .limit(1).executeTakeFirst();
  return row !== undefined;
}

export function noteForHook(db: Db, id: number) {
  return db.selectFrom('notes').selectAll().where('id', '=', id).executeTakeFirst();
}

export function releaseForHook(db: Db, id: number) {
  return db.selectFrom('releases').selectAll().where('id', '=', id).executeTakeFirst();
}

export function releaseLinksForHook(db: Db, releaseId: number) {
  return db.selectFrom('release_links').selectAll().where('release_id', '=', releaseId).orderBy('id').execute();
}

export function jobForHook(db: Db, id: number) {
  return db.selectFrom('ci_builds').selectAll().where('id', '=', id).executeTakeFirst();
}

/** How many times a job of this name ran before in its pipeline (retries_count). */
export async function jobRetriesForHook(db: Db, pipelineId: number, name: string): Promise<number> {
  const row = await db.selectFrom('ci_builds').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('pipeline_id', '=', pipelineId).where('name', '=', name).where('retried', '=', 1).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The first record of a kind in the project (TestHooks::ProjectService: project.issues.first, …). */
export async function firstRecordId(
  db: Db, projectId: number, kind: 'issues' | 'notes' | 'merge_requests' | 'ci_builds' | 'releases',
): Promise<number | undefined> {
  let qb = db.selectFrom(kind).select('id').where('project_id', '=', projectId);
  if (kind === 'notes') qb = qb.where('system', '=', 0);
  if (kind === 'ci_builds') qb = qb.where('type', '=', 'build');
  return (await qb.orderBy('id').limit(1).executeTakeFirst())?.id;
}

/** A merge request's newest diff version's head (its last commit). */
export async function mergeRequestHeadSha(db: Db, mrId: number): Promise<string | undefined> {
  const row = await db.selectFrom('merge_request_diffs').select('head_commit_sha').where('merge_request_id', '=', mrId)
    .orderBy('id', 'desc').limit(1).executeTakeFirst();
  return row?.head_commit_sha;
}

/** The head pipeline: the newest pipeline of the source project at the request's head (its branch or its own). */
export async function headPipelineId(
  db: Db, mr: { id: number; source_project_id: number | null; project_id: number; source_branch: string }, sha: string,
): Promise<number | null> {
  const row = await db.selectFrom('ci_pipelines').select('id')
    .where('project_id', '=', mr.source_project_id ?? mr.project_id).where('sha', '=', sha)
    .where((eb) => eb.or([eb('ref', '=', mr.source_branch), eb('merge_request_id', '=', mr.id)]))
    .orderBy('id', 'desc').limit(1).executeTakeFirst();
  return row?.id ?? null;
}

export async function mergeRequestTimeSpent(db: Db, mrId: number): Promise<number> {
  const row = await db.selectFrom('timelogs').select((eb) => eb.fn.sum<number>('time_spent').as('n'))
    .where('merge_request_id', '=', mrId).executeTakeFirst();
  return Number(row?.n ?? 0);
}
