/**
 * Project topics (the Service's Projects::Topic and ProjectTopic): topics found or created by a
 * project's topic names, the instance's list ordered by how many non-private projects carry each,
 * and the administrators' writes. A project's `topics` column holds the names its entity shows;
 * every write here that changes a name, merges or deletes a topic rewrites the names of the
 * projects that carry it in the same transaction, so the two never disagree.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { TopicRow } from '../../db/tables/topics.ts';
import { nowIso } from '../clock.ts';
import { isUniqueViolation } from '../../db/constraints.ts';
import { containsPattern } from '../users/users.finder.ts';

type Db = Kysely<DB> | Transaction<DB>;

/**
 * Links the project to exactly these topics (Projects::UpdateService#update_topics): topics
 * missing are created with the name as their title, an existing topic of another case lends the
 * project its name. Runs inside the transaction that writes the project.
 */
export async function syncProjectTopics(trx: Transaction<DB>, projectId: number, names: readonly string[]): Promise<string> {
  const now = nowIso();
  if (names.length > 0) {
    await trx.insertInto('topics').values(names.map((name) => ({ name, title: name, description: null, created_at: now, updated_at: now })))
      .onConflict((oc) => oc.doNothing()).execute();
  }
  const topics = names.length === 0 ? [] : await trx.selectFrom('topics').selectAll()
    .where(sql`lower(name)`, 'in', names.map((n) => n.toLowerCase())).execute();
  const byLower = new Map(topics.map((t) => [t.name.toLowerCase(), t]));
  const ordered = names.map((n) => byLower.get(n.toLowerCase())!);
  const ids = ordered.map((t) => t.id);
  let stale = trx.deleteFrom('project_topics').where('project_id', '=', projectId);
  if (ids.length > 0) stale = stale.where('topic_id', 'not in', ids);
  await stale.execute();
  if (ids.length > 0) {
    await trx.insertInto('project_topics').values(ids.map((id) => ({ project_id: projectId, topic_id: id })))
      .onConflict((oc) => oc.columns(['project_id', 'topic_id']).doNothing()).execute();
  }
  const stored = JSON.stringify(ordered.map((t) => t.name));
  await trx.updateTable('projects').set({ topics: stored }).where('id', '=', projectId).execute();
  return stored;
}

/** Rewrites the topic names of the projects carrying `topicId` with `rename` (null: drop it). */
async function renameInProjects(trx: Transaction<DB>, topicId: number, from: string, rename: string | null): Promise<void> {
  const projects = await trx.selectFrom('projects').innerJoin('project_topics', 'project_topics.project_id', 'projects.id')
    .select(['projects.id', 'projects.topics']).where('project_topics.topic_id', '=', topicId).execute();
  const lower = from.toLowerCase();
  for (const p of projects) {
    const seen = new Set<string>();
    const names: string[] = [];
    for (const name of JSON.parse(p.topics) as string[]) {
      const next = name.toLowerCase() === lower ? rename : name;
      if (next === null || seen.has(next.toLowerCase())) continue;
      seen.add(next.toLowerCase());
      names.push(next);
    }
    await trx.updateTable('projects').set({ topics: JSON.stringify(names) }).where('id', '=', p.id).execute();
  }
}

/** A topic with its project count (kept by the database: migration 2026-11-28T0820). */
export type TopicWithCount = TopicRow;

/**
 * GET /topics (Projects::TopicsFinder): `search` in the name, `withoutProjects` those no project
 * carries; the most used first (non-private projects), then the oldest.
 */
export function topicsQuery(db: Kysely<DB>, f: { search?: string; withoutProjects?: boolean }) {
  let qb = db.selectFrom('topics').selectAll('topics');
  if (f.search) qb = qb.where(sql`lower(topics.name)`, 'like', sql`${containsPattern(f.search)} escape '\\'`);
  if (f.withoutProjects) qb = qb.where('topics.total_projects_count', '=', 0);
  return qb.orderBy('topics.non_private_projects_count', 'desc').orderBy('topics.id', 'asc');
}

export function findTopic(db: Db, id: number): Promise<TopicWithCount | undefined> {
  return db.selectFrom('topics').selectAll('topics').where('topics.id', '=', id).executeTakeFirst();
}

/** A new topic; the unique index on lower(name) refuses a name taken in any case (null). */
export async function insertTopic(db: Db, t: { name: string; title: string; description: string | null }): Promise<number | null> {
  const now = nowIso();
  const row = await db.insertInto('topics').values({ ...t, created_at: now, updated_at: now })
    .onConflict((oc) => oc.doNothing()).returning('id').executeTakeFirst();
  return row?.id ?? null;
}

/** Changes a topic; a new name is written into its projects' names too. False: the name is taken. */
export async function updateTopic(
  db: Kysely<DB>, topic: TopicRow, set: { name?: string; title?: string; description?: string | null },
): Promise<boolean> {
  try {
    await db.transaction().execute(async (trx) => {
      await trx.updateTable('topics').set({ ...set, updated_at: nowIso() }).where('id', '=', topic.id).execute();
      if (set.name !== undefined && set.name !== topic.name) await renameInProjects(trx, topic.id, topic.name, set.name);
    });
    return true;
  } catch (err) {
    // The unique index on lower(name): another topic has that name.
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

/** Deletes a topic and takes its name off the projects that carried it. */
export async function deleteTopic(db: Kysely<DB>, topic: TopicRow): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await renameInProjects(trx, topic.id, topic.name, null);
    await trx.deleteFrom('topics').where('id', '=', topic.id).execute();
  });
}

/** Topics::MergeService: the source's projects carry the target instead, and the source goes. */
export async function mergeTopics(db: Kysely<DB>, source: TopicRow, target: TopicRow): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await renameInProjects(trx, source.id, source.name, target.name);
    const projects = await trx.selectFrom('project_topics').select('project_id').where('topic_id', '=', source.id).execute();
    if (projects.length > 0) {
      await trx.insertInto('project_topics').values(projects.map((p) => ({ project_id: p.project_id, topic_id: target.id })))
        .onConflict((oc) => oc.columns(['project_id', 'topic_id']).doNothing()).execute();
    }
    await trx.deleteFrom('topics').where('id', '=', source.id).execute();
  });
}
