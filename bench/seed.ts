/**
 * Seeds a kiln database for benchmarks: migrations, root with a known token, `count` users
 * (each with a personal namespace), and a CI project with many jobs, inserted in chunks inside
 * one transaction each. On SQLite the rows go in through one prepared multi-row INSERT per
 * table on a connection of the seed's own (`--scale 1000000` seeds a million users and a million
 * jobs: Kysely building a query per chunk would cost more than SQLite storing the rows).
 */
import path from 'node:path';
import SQLite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import type { DB } from '../src/db/types.ts';
import { bootstrapInstance } from '../src/domain/instance/bootstrap.ts';
import { insertPersonalAccessToken } from '../src/domain/tokens/tokens.queries.ts';
import { digest } from '../src/domain/tokens/secret.ts';
import { findUserByUsername } from '../src/domain/users/users.queries.ts';

const CHUNK = 500;
const SEED_CREATED = new Date('2026-01-01T00:00:00Z').getTime();

/** The seeded user `k`'s row (without its id). */
function benchUser(k: number) {
  const at = new Date(SEED_CREATED + k * 1000).toISOString();
  return {
    username: `bench${k}`, email: `bench${k}@example.com`, name: `Bench User ${k}`,
    bio: 'Seeded for benchmarks', organization: 'kiln', job_title: 'Engineer',
    created_at: at, updated_at: at, confirmed_at: at,
  };
}

/**
 * Inserts `count` rows made by `row(i)` into `table` through one prepared statement of ROWS rows
 * (and one for the remainder), all in one transaction: the fast path of the embedded database.
 */
function bulkInsert(file: SQLite.Database, table: string, count: number, row: (i: number) => Record<string, unknown>): void {
  if (count === 0) return;
  const ROWS = 200;
  const columns = Object.keys(row(0));
  const statement = (n: number) => file.prepare(`insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${
    Array.from({ length: n }, () => `(${columns.map(() => '?').join(', ')})`).join(', ')}`);
  const full = statement(Math.min(ROWS, count));
  file.transaction(() => {
    for (let start = 0; start < count; start += ROWS) {
      const n = Math.min(ROWS, count - start);
      const values: unknown[] = [];
      for (let i = start; i < start + n; i++) {
        const r = row(i);
        for (const c of columns) values.push(r[c]);
      }
      (n === ROWS || n === count ? full : statement(n)).run(values);
    }
  })();
}

/** SQLite: `count` users with their namespaces, ids following the highest one there is. */
function seedUsersSqlite(file: SQLite.Database, count: number): void {
  const first = (file.prepare('select coalesce(max(id), 0) + 1 as id from users').get() as { id: number }).id;
  bulkInsert(file, 'users', count, (i) => ({ id: first + i, ...benchUser(i) }));
  bulkInsert(file, 'namespaces', count, (i) => {
    const u = benchUser(i);
    return { name: u.name, path: u.username, kind: 'user', owner_id: first + i, created_at: u.created_at, updated_at: u.created_at };
  });
}

export async function seedUsers(db: Kysely<DB>, count: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (let start = 0; start < count; start += CHUNK) {
      const n = Math.min(CHUNK, count - start);
      const users = Array.from({ length: n }, (_, i) => benchUser(start + i));
      const rows = await trx.insertInto('users').values(users).returning(['id', 'username', 'name', 'created_at']).execute();
      await trx.insertInto('namespaces').values(rows.map((r) => ({
        name: r.name, path: r.username, kind: 'user' as const, owner_id: r.id, created_at: r.created_at, updated_at: r.created_at,
      }))).execute();
    }
  });
}

const JOB_CHUNK = 1000;
const JOB_STATUSES = ['success', 'failed', 'canceled', 'skipped', 'success', 'success', 'manual', 'pending'];
const PIPELINE_STATUSES = ['success', 'failed', 'success', 'canceled', 'success', 'running'];
/** Jobs per seeded pipeline: 100,000 jobs make 10,000 pipelines (GET /projects/:id/pipelines). */
export const JOBS_PER_PIPELINE = 10;
const SHA = 'a'.repeat(40);

/** The number of pipelines seeded for `jobs` jobs (at least one). */
const pipelineCount = (jobs: number) => Math.max(1, Math.ceil(jobs / JOBS_PER_PIPELINE));

/** The seeded pipeline `k` (iid k + 1) of the CI project. */
function benchPipeline(k: number, projectId: number) {
  const at = new Date(SEED_CREATED + k * 1000).toISOString();
  const status = PIPELINE_STATUSES[k % PIPELINE_STATUSES.length];
  return {
    iid: k + 1, project_id: projectId, ref: k % 4 === 0 ? `feature-${k % 40}` : 'main', tag: 0 as const, sha: SHA,
    before_sha: '0'.repeat(40),
    source: k % 3 === 0 ? 'push' : 'api', status, user_id: 1, upstream_bridge_id: null, config_path: '.gitlab-ci.yml',
    commit_data: BENCH_COMMIT,
    created_at: at, updated_at: at, started_at: at, finished_at: status === 'running' ? null : at,
  };
}

const BENCH_COMMIT = JSON.stringify({
  id: SHA, short_id: SHA.slice(0, 8), title: 'Bench', message: 'Bench\n', author_name: 'Bench', author_email: 'bench@example.com',
  authored_date: '2026-01-01T00:00:00.000Z', committer_name: 'Bench', committer_email: 'bench@example.com',
  committed_date: '2026-01-01T00:00:00.000Z',
  created_at: '2026-01-01T00:00:00.000Z', parent_ids: [],
});

/** A private project of root (no pipelines yet). Returns its id. */
async function createCiProject(db: Kysely<DB>): Promise<number> {
  const at = new Date('2026-01-01T00:00:00Z').toISOString();
  const ns = await db.selectFrom('namespaces').select('id').where('owner_id', '=', 1).where('kind', '=', 'user').executeTakeFirstOrThrow();
  const project = await db.insertInto('projects').values({
    name: 'bench-ci', path: 'bench-ci', namespace_id: ns.id, creator_id: 1, description: null, default_branch: 'main', readme_path: null,
    repository_storage: 'default', disk_path: 'root/bench-ci.git', last_activity_at: at, created_at: at, updated_at: at,
  }).returning('id').executeTakeFirstOrThrow();
  return project.id;
}

/**
 * PostgreSQL: the CI project's pipelines (one per JOBS_PER_PIPELINE jobs) and `jobs` jobs in mixed
 * statuses, inserted in chunks inside one transaction. Job k belongs to pipeline k / JOBS_PER_PIPELINE.
 */
async function seedCiRows(db: Kysely<DB>, projectId: number, jobs: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const pipelineIds: number[] = [];
    const pipelines = pipelineCount(jobs);
    for (let start = 0; start < pipelines; start += JOB_CHUNK) {
      const rows = Array.from({ length: Math.min(JOB_CHUNK, pipelines - start) }, (_, i) => benchPipeline(start + i, projectId));
      pipelineIds.push(...(await trx.insertInto('ci_pipelines').values(rows).returning('id').execute()).map((r) => r.id));
    }
    for (let start = 0; start < jobs; start += JOB_CHUNK) {
      const rows = Array.from(
        { length: Math.min(JOB_CHUNK, jobs - start) },
        (_, i) => benchJob(start + i, projectId, pipelineIds[Math.floor((start + i) / JOBS_PER_PIPELINE)]),
      );
      await trx.insertInto('ci_builds').values(rows).execute();
    }
  });
}

const JOB_AT = new Date('2026-01-01T00:00:00Z').toISOString();
/**
 * Pending jobs were queued when the seed ran: queued months ago, they would be the CI sweeper's
 * to fail (KILN_CI_PENDING_TIMEOUT), and it would spend the bench failing 12,500 of them in the
 * background of every measured request.
 */
const QUEUED_AT = new Date().toISOString();
const JOB_OPTIONS = JSON.stringify({ script: ['make'], before_script: [], after_script: [], image: null, artifacts: null, trigger: null });

/** The seeded job `k` of the CI project's pipeline. */
function benchJob(k: number, projectId: number, pipelineId: number) {
  const at = JOB_AT;
  const status = JOB_STATUSES[k % JOB_STATUSES.length];
  const done = !['pending', 'manual'].includes(status);
  return {
    type: 'build', project_id: projectId, pipeline_id: pipelineId, name: `job ${k}`, stage: 'test', stage_idx: 2, status,
    run_when: status === 'manual' ? 'manual' : 'on_success', allow_failure: 0 as const,
    failure_reason: status === 'failed' ? 'script_failure' : null,
    ref: 'main', tag: 0 as const, user_id: 1, runner_id: null, token_digest: null, options: JOB_OPTIONS,
    yaml_variables: '[]', job_variables: '[]',
    tag_list: '', needs: null, timeout: 3600, downstream_pipeline_id: null, created_at: at, updated_at: at,
    queued_at: status === 'pending' ? QUEUED_AT : at, started_at: done ? at : null, finished_at: done ? at : null,
    erased_at: null, artifacts_expire_at: null,
  };
}

/** Labels of the CI project the seeded issues carry: issue k has `label (k % 10)` and, every third one, `bug`. */
export const BENCH_LABELS = ['bug', ...Array.from({ length: 10 }, (_, i) => `label ${i}`)];
const ISSUE_AT = Date.parse('2026-01-01T00:00:00Z');

/** The seeded issue `k` (iid k + 1) of the CI project: a tenth closed, every seventh confidential. */
function benchIssue(k: number, projectId: number) {
  const at = new Date(ISSUE_AT + k * 1000).toISOString();
  return {
    iid: k + 1, project_id: projectId, author_id: 1, title: `Issue ${k}`, description: `Seeded issue ${k}`,
    state: k % 10 === 0 ? 'closed' : 'opened', confidential: (k % 7 === 0 ? 1 : 0) as 0 | 1, created_at: at, updated_at: at,
  };
}

/** The label links of issue k (by issue id): its numbered label and, every third issue, `bug`. */
function benchIssueLabels(k: number, issueId: number, labelIds: number[]): { label_id: number; issue_id: number }[] {
  const links = [{ label_id: labelIds[1 + (k % 10)], issue_id: issueId }];
  if (k % 3 === 0) links.push({ label_id: labelIds[0], issue_id: issueId });
  return links;
}

/** The CI project's labels, `issues` issues with their label links, and its issue counter. */
async function seedIssues(db: Kysely<DB>, file: SQLite.Database | null, projectId: number, issues: number): Promise<number[]> {
  const at = new Date(ISSUE_AT).toISOString();
  const labelIds = (await db.insertInto('labels').values(BENCH_LABELS.map((title, i) => ({
    project_id: projectId, group_id: null, title, color: `#${(0x336699 + i * 0x1111).toString(16).slice(-6)}`, description: null,
    created_at: at, updated_at: at,
  }))).returning('id').execute()).map((r) => r.id);
  const link = (l: { label_id: number; issue_id: number }) => ({
    label_id: l.label_id, target_type: 'Issue', target_id: l.issue_id, created_at: at, updated_at: at,
  });
  if (file) {
    const first = (file.prepare('select coalesce(max(id), 0) + 1 as id from issues').get() as { id: number }).id;
    bulkInsert(file, 'issues', issues, (k) => ({ id: first + k, ...benchIssue(k, projectId) }));
    const links = Array.from({ length: issues }, (_, k) => benchIssueLabels(k, first + k, labelIds)).flat();
    bulkInsert(file, 'label_links', links.length, (i) => link(links[i]));
  } else {
    await db.transaction().execute(async (trx) => {
      for (let start = 0; start < issues; start += JOB_CHUNK) {
        const rows = Array.from({ length: Math.min(JOB_CHUNK, issues - start) }, (_, i) => benchIssue(start + i, projectId));
        const ids = (await trx.insertInto('issues').values(rows).returning('id').execute()).map((r) => r.id);
        await trx.insertInto('label_links').values(ids.flatMap((id, i) => benchIssueLabels(start + i, id, labelIds)).map(link)).execute();
      }
    });
  }
  await db.insertInto('internal_ids').values({ project_id: projectId, namespace_id: null, usage: 'issues', last_value: issues }).execute();
  return labelIds;
}

const MR_STATES = ['opened', 'opened', 'opened', 'opened', 'opened', 'opened', 'merged', 'merged', 'closed', 'opened'];

/**
 * The seeded merge request `k` (iid k + 1) of the CI project: mostly open, a fifth merged, a tenth
 * closed, every eighth a draft, each from its own branch into main (open ones need distinct source
 * branches: merge_requests_open_source_branch).
 */
function benchMergeRequest(k: number, projectId: number) {
  const at = new Date(ISSUE_AT + k * 1000).toISOString();
  const state = MR_STATES[k % MR_STATES.length];
  const draft = k % 8 === 0;
  return {
    iid: k + 1, project_id: projectId, source_project_id: projectId, source_branch: `feature/mr-${k}`, target_branch: 'main',
    author_id: 1, title: `${draft ? 'Draft: ' : ''}Merge request ${k}`, description: `Seeded merge request ${k}`, state,
    merge_status: state === 'opened' ? 'can_be_merged' : 'unchecked', draft: (draft ? 1 : 0) as 0 | 1,
    merge_user_id: null, merge_commit_sha: state === 'merged' ? SHA : null, merged_by_id: state === 'merged' ? 1 : null,
    merged_at: state === 'merged' ? at : null, closed_by_id: state === 'closed' ? 1 : null, closed_at: state === 'closed' ? at : null,
    created_at: at, updated_at: at,
  };
}

/**
 * The people of merge request k (by id): one assignee, every third a second one, a reviewer on
 * every other, all among the first 50 seeded users (ids 2 …), as a team's requests would be.
 */
function benchMergeRequestPeople(k: number, mrId: number, users: number) {
  const team = Math.max(1, Math.min(50, users));
  const user = (n: number) => 2 + (n % team);
  const at = new Date(ISSUE_AT + k * 1000).toISOString();
  const assignees = [{ merge_request_id: mrId, user_id: user(k), created_at: at }];
  if (k % 3 === 0 && team > 1) assignees.push({ merge_request_id: mrId, user_id: user(k + 1), created_at: at });
  const reviewers = k % 2 === 0 && team > 2 ? [{ merge_request_id: mrId, user_id: user(k + 2), created_at: at }] : [];
  return { assignees, reviewers };
}

/** The CI project's `count` merge requests with their labels (as the issues'), assignees and reviewers, and its counter. */
async function seedMergeRequests(
  db: Kysely<DB>, file: SQLite.Database | null, projectId: number, count: number, users: number, labelIds: number[],
): Promise<void> {
  const at = new Date(ISSUE_AT).toISOString();
  const links = (k: number, id: number) => benchIssueLabels(k, id, labelIds).map((l) => ({
    label_id: l.label_id, target_type: 'MergeRequest', target_id: id, created_at: at, updated_at: at,
  }));
  if (users > 0 && count > 0) {
    if (file) {
      const first = (file.prepare('select coalesce(max(id), 0) + 1 as id from merge_requests').get() as { id: number }).id;
      bulkInsert(file, 'merge_requests', count, (k) => ({ id: first + k, ...benchMergeRequest(k, projectId) }));
      const labelRows = Array.from({ length: count }, (_, k) => links(k, first + k)).flat();
      bulkInsert(file, 'label_links', labelRows.length, (i) => labelRows[i]);
      const people = Array.from({ length: count }, (_, k) => benchMergeRequestPeople(k, first + k, users));
      const assignees = people.flatMap((p) => p.assignees);
      const reviewers = people.flatMap((p) => p.reviewers);
      bulkInsert(file, 'merge_request_assignees', assignees.length, (i) => assignees[i]);
      bulkInsert(file, 'merge_request_reviewers', reviewers.length, (i) => reviewers[i]);
    } else {
      await db.transaction().execute(async (trx) => {
        for (let start = 0; start < count; start += JOB_CHUNK) {
          const rows = Array.from({ length: Math.min(JOB_CHUNK, count - start) }, (_, i) => benchMergeRequest(start + i, projectId));
          const ids = (await trx.insertInto('merge_requests').values(rows).returning('id').execute()).map((r) => r.id);
          await trx.insertInto('label_links').values(ids.flatMap((id, i) => links(start + i, id))).execute();
          const people = ids.map((id, i) => benchMergeRequestPeople(start + i, id, users));
          await trx.insertInto('merge_request_assignees').values(people.flatMap((p) => p.assignees)).execute();
          const reviewers = people.flatMap((p) => p.reviewers);
          if (reviewers.length > 0) await trx.insertInto('merge_request_reviewers').values(reviewers).execute();
        }
      });
    }
  }
  await db.insertInto('internal_ids').values({ project_id: projectId, namespace_id: null, usage: 'merge_requests', last_value: count })
    .execute();
}

/**
 * Seeds the database; `userToken` becomes an api token of the plain user `bench0`. Returns the
 * id of the CI project with `jobs` jobs, `issues` issues and `mergeRequests` merge requests.
 */
export async function seedDatabase(
  opts: {
    dataDir: string; databaseUrl: string | null; users: number; jobs: number; issues?: number; mergeRequests?: number;
    rootToken: string; userToken: string;
  },
): Promise<{ ciProjectId: number }> {
  const database = openDatabase({ dataDir: opts.dataDir, databaseUrl: opts.databaseUrl });
  let file: SQLite.Database | null = null;
  try {
    await migrateToLatest(database.db);
    await bootstrapInstance(database.db, { rootPassword: 'bench-root-password', rootToken: opts.rootToken, dialect: database.dialect });
    // The embedded database: bulk rows through a connection of the seed's own (see above).
    file = database.dialect === 'sqlite' ? new SQLite(path.join(opts.dataDir, 'kiln.sqlite3')) : null;
    file?.pragma('busy_timeout = 30000');
    file?.pragma('cache_size = -131072');
    if (file) seedUsersSqlite(file, opts.users);
    else await seedUsers(database.db, opts.users);
    const plain = await findUserByUsername(database.db, 'bench0');
    if (!plain) throw new Error('seeding created no users');
    await insertPersonalAccessToken(database.db, {
      userId: plain.id, name: 'bench', tokenDigest: digest(opts.userToken), scopes: 'api', impersonation: false, expiresAt: null,
    });
    const ciProjectId = await createCiProject(database.db);
    const labelIds = await seedIssues(database.db, file, ciProjectId, opts.issues ?? 0);
    await seedMergeRequests(database.db, file, ciProjectId, opts.mergeRequests ?? 0, opts.users, labelIds);
    if (!file) {
      await seedCiRows(database.db, ciProjectId, opts.jobs);
      return { ciProjectId };
    }
    const firstPipeline = (file.prepare('select coalesce(max(id), 0) + 1 as id from ci_pipelines').get() as { id: number }).id;
    bulkInsert(file, 'ci_pipelines', pipelineCount(opts.jobs), (k) => ({ id: firstPipeline + k, ...benchPipeline(k, ciProjectId) }));
    bulkInsert(file, 'ci_builds', opts.jobs, (k) => benchJob(k, ciProjectId, firstPipeline + Math.floor(k / JOBS_PER_PIPELINE)));
    return { ciProjectId };
  } finally {
    file?.close();
    await database.close();
  }
}
