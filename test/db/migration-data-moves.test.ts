/**
 * Destructive migration steps and their data (issue 34, item 3): no migration may drop, rename
 * or narrow what holds rows unless the same migration first moved those rows to their new home.
 *
 * The first test reads every migration's `up` and lists the steps that can lose or refuse rows
 * already there: dropped or renamed tables, columns and indexes, changed column types, UPDATE and
 * DELETE of existing rows, and unique indexes or constraints added to a table the migration did
 * not create (a narrowing: rows that break it would stop the upgrade). Each such migration must
 * be one this file (or the test named beside it) has covered; a new destructive migration fails
 * here until it has a test of its own.
 *
 * The other tests each migrate a database down to just before one of those migrations, write
 * rows shaped as that older schema holds them, migrate to the latest schema again and check that
 * the rows arrived (or were provably kept) and answer through the API.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Kysely } from 'kysely';
import { Migrator, type Migration } from 'kysely/migration';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { ensureGhostUser } from '../../src/domain/users/ghost-user.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';

const MIGRATIONS = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../src/db/migrations');

async function migrationNames(): Promise<string[]> {
  return (await fs.readdir(MIGRATIONS)).filter((f) => /^\d{4}-.*\.ts$/.test(f)).map((f) => f.replace(/\.ts$/, '')).sort();
}

/**
 * The destructive migrations and where each is tested. A migration appears here only once its
 * data has been followed through it.
 */
const COVERED: Record<string, string> = {
  '2026-11-24T1900_scim': 'identities survive the one-per-provider index becoming one per SAML provider',
  '2026-11-24T1910_identities_saml_provider_cascade': 'group SAML identities survive the foreign key to their provider',
  // Drops the started_at of pipelines no job of which ever started (the Service never stamps them).
  '2026-11-26T1700_ci_pipelines_duration': 'test/db/pipeline-clock-migration.test.ts',
  '2026-11-26T1710_one_ghost_user': 'the ghost user survives the one-ghost index and stays the ghost',
  '2026-11-26T1800_project_attributes': 'public projects get Pages enabled, the others keep the default',
  '2026-11-27T1200_issue_links_pair': 'issue links survive the unordered-pair index',
  '2026-11-29T0910_project_open_issues_count': 'open issue counts are counted from the issues already there',
  // Replaces one open request per source branch by one per (source branch, target branch): wider.
  '2026-12-01T0100_merge_requests_open_branch_pair': 'open merge requests survive the per-branch-pair index, which lets a branch into a second target',
  // Fills the new counter columns from the notes, awards and time logs already there.
  '2026-12-02T0500_issuable_counters': 'issue and merge request counts are counted from the notes, awards and time logs already there',
};

/** `up` and the helpers after it: the text from `export async function up` to `down`. */
function upText(source: string): string {
  const start = source.indexOf('export async function up');
  const end = source.indexOf('export async function down');
  return source.slice(start, end < 0 ? undefined : end);
}

const DROPS = [
  /\.(dropColumn|dropTable|renameColumn|renameTo|alterColumn|modifyColumn|dropIndex|dropConstraint)\(/,
  /\b(drop\s+(table|column|index|constraint)|rename\s+(to|column)|alter\s+column)\b/i,
  /\.(updateTable|deleteFrom)\(/,
  /^sql(\.raw\()?`\s*(update|delete)\b/i,
];
const NARROWS = /\.unique\(\)|create\s+unique\s+index|add\s+constraint/i;

/** The statements of a migration's `up` that can lose or refuse rows the database already holds. */
function destructiveSteps(up: string): string[] {
  const created = new Set([...up.matchAll(/createTable\('([a-z0-9_]+)'\)/g)].map((m) => m[1]));
  const createsComputed = /createTable\((?!')/.test(up);
  const steps = [];
  for (const statement of up.split(/\bawait\s+/).slice(1)) {
    // Trigger and function bodies run on later writes, not on the rows there now.
    if (/create\s+(or\s+replace\s+)?(function|trigger)/i.test(statement)) continue;
    // A table created here holds no rows yet.
    if (/createTable\(/.test(statement)) continue;
    if (DROPS.some((re) => re.test(statement))) {
      steps.push(statement.trim().split('\n')[0]);
      continue;
    }
    if (NARROWS.test(statement)) {
      const table = /\.on\('([a-z0-9_]+)'\)/.exec(statement)?.[1] ?? /\bindex\s+\w+\s+on\s+([a-z0-9_]+)/i.exec(statement)?.[1]
        ?? /\balter\s+table\s+([a-z0-9_]+)/i.exec(statement)?.[1];
      const onNewTable = table === undefined ? createsComputed : created.has(table);
      if (!onNewTable) steps.push(statement.trim().split('\n')[0]);
    }
  }
  return steps;
}

async function migrator(t: TestApp): Promise<Migrator> {
  const migrations: Record<string, Migration> = {};
  for (const name of await migrationNames()) migrations[name] = await import(pathToFileURL(path.join(MIGRATIONS, `${name}.ts`)).href);
  return new Migrator({ db: t.db, provider: { getMigrations: async () => migrations } });
}

describe('destructive migration steps keep their data', () => {
  let t: TestApp;
  let db: Kysely<any>;
  const now = new Date().toISOString();

  before(async () => {
    t = await startTestApp();
    db = t.db as unknown as Kysely<any>;
  });
  after(async () => { await t.close(); });

  /** Migrates down to the migration just before `name` (its `up` not yet run). */
  async function migrateToBefore(name: string): Promise<void> {
    const names = await migrationNames();
    const previous = names[names.indexOf(name) - 1];
    assert.ok(previous, name);
    const down = await (await migrator(t)).migrateTo(previous);
    assert.equal(down.error, undefined, String(down.error));
  }

  const api = async (method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) => {
    const res = await t.request({ method, url: `/api/v4${url}`, token: ROOT_TOKEN, payload });
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };

  it('lists every destructive step of every migration as covered', async () => {
    const found: Record<string, string[]> = {};
    for (const name of await migrationNames()) {
      const steps = destructiveSteps(upText(await fs.readFile(path.join(MIGRATIONS, `${name}.ts`), 'utf8')));
      if (steps.length > 0) found[name] = steps;
    }
    assert.deepEqual(Object.keys(found).sort(), Object.keys(COVERED).sort(), JSON.stringify(found, null, 2));
  });

  it(COVERED['2026-11-24T1900_scim'], async () => {
    const a = await createUser(t.db);
    const b = await createUser(t.db);
    await migrateToBefore('2026-11-24T1900_scim');
    const rows = [
      { user_id: a.id, provider: 'ldapmain', extern_uid: 'uid=a,ou=people' },
      { user_id: a.id, provider: 'github', extern_uid: '1001' },
      { user_id: b.id, provider: 'ldapmain', extern_uid: 'UID=A,OU=PEOPLE' },
    ];
    await db.insertInto('identities').values(rows.map((r) => ({ ...r, saml_provider_id: null, created_at: now }))).execute();

    await migrateToLatest(t.db);
    const kept = await db.selectFrom('identities').select(['user_id', 'provider', 'extern_uid'])
      .where('user_id', 'in', [a.id, b.id]).orderBy('id').execute();
    assert.deepEqual(kept, rows);
    const shown = await api('GET', `/users/${a.id}`);
    assert.deepEqual(shown.identities.map((i: { provider: string; extern_uid: string }) => [i.provider, i.extern_uid]).sort(),
      [['github', '1001'], ['ldapmain', 'uid=a,ou=people']]);
  });

  it(COVERED['2026-11-24T1910_identities_saml_provider_cascade'], async () => {
    const user = await createUser(t.db);
    const group = await api('POST', '/groups', { name: 'saml-kept', path: 'saml-kept' });
    await migrateToBefore('2026-11-24T1910_identities_saml_provider_cascade');
    const provider = await db.insertInto('saml_providers')
      .values({ group_id: group.id, enabled: 1, default_membership_role: 10, created_at: now, updated_at: now })
      .returning('id').executeTakeFirstOrThrow();
    await db.insertInto('identities').values([
      { user_id: user.id, provider: 'group_saml', extern_uid: 'saml-1', saml_provider_id: provider.id, created_at: now },
      { user_id: user.id, provider: 'ldapmain', extern_uid: 'uid=saml', saml_provider_id: null, created_at: now },
    ]).execute();

    await migrateToLatest(t.db);
    const kept = () => db.selectFrom('identities').select(['provider', 'extern_uid', 'saml_provider_id'])
      .where('user_id', '=', user.id).orderBy('id').execute();
    assert.deepEqual(await kept(), [
      { provider: 'group_saml', extern_uid: 'saml-1', saml_provider_id: provider.id },
      { provider: 'ldapmain', extern_uid: 'uid=saml', saml_provider_id: null },
    ]);
    // What the step added works on the rows that were there: the identity goes with its provider.
    await db.deleteFrom('saml_providers').where('id', '=', provider.id).execute();
    assert.deepEqual(await kept(), [{ provider: 'ldapmain', extern_uid: 'uid=saml', saml_provider_id: null }]);
  });

  it(COVERED['2026-11-26T1710_one_ghost_user'], async () => {
    const ghost = await createUser(t.db, { username: 'ghost', name: 'Ghost User' });
    await migrateToBefore('2026-11-26T1710_one_ghost_user');
    await db.updateTable('users').set({ user_type: 5 }).where('id', '=', ghost.id).execute();

    await migrateToLatest(t.db);
    // The ghost that was there is the one deletions hand contributions to; no second one is made.
    assert.equal((await ensureGhostUser(t.db, 'localhost')).id, ghost.id);
    await assert.rejects(createUser(t.db, { user_type: 5 }));
    const ghosts = await db.selectFrom('users').select('id').where('user_type', '=', 5).execute();
    assert.deepEqual(ghosts, [{ id: ghost.id }]);
    assert.equal((await api('GET', `/users/${ghost.id}`)).username, 'ghost');
  });

  it('two ghost users stop the upgrade at the one-ghost index, losing neither, until one is gone', async () => {
    // Deletions that ran at once before the index could each make a ghost (issue 35, item 1). The
    // migration has no data move to merge them: the upgrade stops there with every row kept and
    // goes on once an operator has merged them (reference §1.8: there is one ghost).
    const [first] = await db.selectFrom('users').select('id').where('user_type', '=', 5).execute() as { id: number }[];
    const second = await createUser(t.db, { username: 'ghost1', name: 'Ghost User' });
    await migrateToBefore('2026-11-26T1710_one_ghost_user');
    await db.updateTable('users').set({ user_type: 5 }).where('id', '=', second.id).execute();

    await assert.rejects(migrateToLatest(t.db), /unique|constraint/i);
    const applied = (await db.selectFrom('kysely_migration').select('name').execute()).map((r: { name: string }) => r.name);
    assert.ok(!applied.includes('2026-11-26T1710_one_ghost_user'));
    const ghosts = await db.selectFrom('users').select('id').where('user_type', '=', 5).orderBy('id').execute();
    assert.deepEqual(ghosts, [{ id: first.id }, { id: second.id }]);

    await db.deleteFrom('users').where('id', '=', second.id).execute();
    await migrateToLatest(t.db);
    assert.equal((await ensureGhostUser(t.db, 'localhost')).id, first.id);
  });

  it(COVERED['2026-11-26T1800_project_attributes'], async () => {
    const open = await api('POST', '/projects', { name: 'pages-public', visibility: 'public' });
    const closed = await api('POST', '/projects', { name: 'pages-private', visibility: 'private' });
    await migrateToBefore('2026-11-26T1800_project_attributes');
    assert.deepEqual(await db.selectFrom('projects').select(['id', 'visibility_level'])
      .where('id', 'in', [open.id, closed.id]).orderBy('id').execute(), [{ id: open.id, visibility_level: 20 }, { id: closed.id, visibility_level: 0 }]);

    await migrateToLatest(t.db);
    const levels = await db.selectFrom('projects').select(['id', 'pages_access_level', 'issues_access_level'])
      .where('id', 'in', [open.id, closed.id]).orderBy('id').execute();
    assert.deepEqual(levels, [
      { id: open.id, pages_access_level: 20, issues_access_level: 20 },
      { id: closed.id, pages_access_level: 10, issues_access_level: 20 },
    ]);
    assert.equal((await api('GET', `/projects/${open.id}`)).pages_access_level, 'enabled');
    assert.equal((await api('GET', `/projects/${closed.id}`)).pages_access_level, 'private');
  });

  it(COVERED['2026-11-27T1200_issue_links_pair'], async () => {
    const project = await api('POST', '/projects', { name: 'linked-issues' });
    const issues = [];
    for (const title of ['one', 'two', 'three']) issues.push(await api('POST', `/projects/${project.id}/issues`, { title }));
    await migrateToBefore('2026-11-27T1200_issue_links_pair');
    await db.insertInto('issue_links').values([
      { source_id: issues[0].id, target_id: issues[1].id, link_type: 'relates_to', created_at: now, updated_at: now },
      { source_id: issues[2].id, target_id: issues[0].id, link_type: 'blocks', created_at: now, updated_at: now },
    ]).execute();

    await migrateToLatest(t.db);
    const links = await api('GET', `/projects/${project.id}/issues/${issues[0].iid}/links`);
    assert.deepEqual(links.map((l: { iid: number; link_type: string }) => [l.iid, l.link_type]).sort(),
      [[issues[1].iid, 'relates_to'], [issues[2].iid, 'is_blocked_by']]);
  });

  it(COVERED['2026-12-01T0100_merge_requests_open_branch_pair'], async () => {
    const project = await api('POST', '/projects', { name: 'branch-pairs', initialize_with_readme: true });
    for (const branch of ['feature', 'stable']) {
      await api('POST', `/projects/${project.id}/repository/branches`, { branch, ref: 'main' });
    }
    await api('POST', `/projects/${project.id}/repository/commits`, {
      branch: 'feature', commit_message: 'feature work', actions: [{ action: 'create', file_path: 'feature.txt', content: 'x\n' }],
    });
    const first = await api('POST', `/projects/${project.id}/merge_requests`, { source_branch: 'feature', target_branch: 'main', title: 'into main' });
    await migrateToBefore('2026-12-01T0100_merge_requests_open_branch_pair');

    await migrateToLatest(t.db);
    const kept = await api('GET', `/projects/${project.id}/merge_requests/${first.iid}`);
    assert.equal(kept.state, 'opened');
    assert.equal(kept.source_branch, 'feature');
    const second = await api('POST', `/projects/${project.id}/merge_requests`, { source_branch: 'feature', target_branch: 'stable', title: 'into stable' });
    assert.equal(second.target_branch, 'stable');
    const duplicate = await t.request({
      method: 'POST', url: `/api/v4/projects/${project.id}/merge_requests`, token: ROOT_TOKEN,
      payload: { source_branch: 'feature', target_branch: 'main', title: 'again' },
    });
    assert.equal(duplicate.statusCode, 409, duplicate.body);
    // The later tests migrate down past this index again: its `down` refuses a branch open into two targets.
    const closed = await t.request({
      method: 'PUT', url: `/api/v4/projects/${project.id}/merge_requests/${second.iid}`, token: ROOT_TOKEN, payload: { state_event: 'close' },
    });
    assert.equal(closed.statusCode, 200, closed.body);
  });

  it(COVERED['2026-11-29T0910_project_open_issues_count'], async () => {
    const project = await api('POST', '/projects', { name: 'counted-issues', visibility: 'public' });
    await api('POST', `/projects/${project.id}/issues`, { title: 'open' });
    await api('POST', `/projects/${project.id}/issues`, { title: 'open, confidential', confidential: true });
    const closed = await api('POST', `/projects/${project.id}/issues`, { title: 'closed' });
    const res = await t.request({
      method: 'PUT', url: `/api/v4/projects/${project.id}/issues/${closed.iid}`, token: ROOT_TOKEN, payload: { state_event: 'close' },
    });
    assert.equal(res.statusCode, 200, res.body);
    await migrateToBefore('2026-11-29T0910_project_open_issues_count');

    await migrateToLatest(t.db);
    const counts = await db.selectFrom('projects').select(['open_issues_count', 'open_public_issues_count'])
      .where('id', '=', project.id).executeTakeFirstOrThrow();
    assert.deepEqual(counts, { open_issues_count: 2, open_public_issues_count: 1 });
    assert.equal((await api('GET', `/projects/${project.id}`)).open_issues_count, 2);
  });

  it(COVERED['2026-12-02T0500_issuable_counters'], async () => {
    const project = await api('POST', '/projects', { name: 'counted-issuables', initialize_with_readme: true });
    await api('POST', `/projects/${project.id}/repository/commits`, {
      branch: 'counted', start_branch: 'main', commit_message: 'work', actions: [{ action: 'create', file_path: 'c.txt', content: 'c\n' }],
    });
    const issue = await api('POST', `/projects/${project.id}/issues`, { title: 'counted' });
    const mr = await api('POST', `/projects/${project.id}/merge_requests`, { source_branch: 'counted', target_branch: 'main', title: 'counted' });
    const issueUrl = `/projects/${project.id}/issues/${issue.iid}`;
    const mrUrl = `/projects/${project.id}/merge_requests/${mr.iid}`;
    await api('POST', `${issueUrl}/notes`, { body: 'a comment' });
    await api('POST', `${issueUrl}/award_emoji`, { name: 'thumbsup' });
    await api('POST', `${issueUrl}/add_spent_time`, { duration: '1h' });
    await api('POST', `${mrUrl}/discussions`, { body: 'a thread' });
    await api('POST', `${mrUrl}/award_emoji`, { name: 'thumbsdown' });
    await api('POST', `${mrUrl}/add_spent_time`, { duration: '30m' });
    await migrateToBefore('2026-12-02T0500_issuable_counters');
    // A comment written while the older schema (no counters, no triggers) was in place.
    await db.insertInto('notes').values({
      note: 'written before the counters', noteable_type: 'Issue', noteable_id: issue.id, project_id: project.id, author_id: 1,
      discussion_id: 'f'.repeat(40), created_at: now, updated_at: now,
    }).execute();

    await migrateToLatest(t.db);
    const counted = await api('GET', issueUrl);
    assert.deepEqual([counted.user_notes_count, counted.upvotes, counted.downvotes, counted.time_stats.total_time_spent], [2, 1, 0, 3600]);
    const request = await api('GET', mrUrl);
    assert.deepEqual([request.user_notes_count, request.upvotes, request.downvotes, request.time_stats.total_time_spent], [1, 0, 1, 1800]);
    const unresolved = await db.selectFrom('merge_requests').select('unresolved_notes_count').where('id', '=', mr.id).executeTakeFirstOrThrow();
    assert.equal(unresolved.unresolved_notes_count, 1);
    // And the triggers keep them from here on.
    await api('POST', `${issueUrl}/notes`, { body: 'after' });
    assert.equal((await api('GET', issueUrl)).user_notes_count, 3);
  });
});
