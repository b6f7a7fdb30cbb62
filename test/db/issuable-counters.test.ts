/**
 * The counter columns of issues and merge requests (migration 2026-12-02T0500_issuable_counters)
 * against the counts they stand for: after every kind of write that moves a comment, an award or
 * a time log — through the API, and by rows written straight to the tables — each counter equals
 * the count the entity used to compute with a subquery per row, for every issue and request there.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';

describe('issue and merge request counters', () => {
  let t: TestApp;

  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  const api = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: Record<string, unknown>) => {
    const res = await t.request({ method, url: `/api/v4${url}`, token: ROOT_TOKEN, payload });
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.statusCode === 204 ? null : res.json();
  };

  /** Every issue's and request's counters beside the counts recomputed from the rows, where they differ. */
  async function drift(): Promise<unknown[]> {
    const recount = (table: 'issues' | 'merge_requests', type: string, timelogColumn: string) => sql<Record<string, number | null>>`
      select id, user_notes_count, upvotes_count, downvotes_count, total_time_spent,
        (select count(*) from notes where noteable_type = ${type} and noteable_id = t.id and system = 0) as notes,
        (select count(*) from award_emoji where awardable_type = ${type} and awardable_id = t.id and name = 'thumbsup') as up,
        (select count(*) from award_emoji where awardable_type = ${type} and awardable_id = t.id and name = 'thumbsdown') as down,
        coalesce((select sum(time_spent) from timelogs where ${sql.ref(timelogColumn)} = t.id), 0) as spent
      from ${sql.table(table)} as t`.execute(t.db);
    const out: unknown[] = [];
    for (const [table, type, column] of [['issues', 'Issue', 'issue_id'], ['merge_requests', 'MergeRequest', 'merge_request_id']] as const) {
      for (const r of (await recount(table, type, column)).rows) {
        const kept = [r.user_notes_count, r.upvotes_count, r.downvotes_count, r.total_time_spent].map(Number);
        const counted = [r.notes, r.up, r.down, r.spent].map(Number);
        if (kept.join() !== counted.join()) out.push({ table, id: r.id, kept, counted });
      }
    }
    const unresolved = await sql<{ id: number; kept: number; counted: number }>`
      select id, unresolved_notes_count as kept, (select count(*) from notes where noteable_type = 'MergeRequest'
        and noteable_id = m.id and resolvable = 1 and resolved_at is null) as counted from merge_requests as m`.execute(t.db);
    for (const r of unresolved.rows) if (Number(r.kept) !== Number(r.counted)) out.push({ table: 'merge_requests', unresolved: r });
    return out;
  }

  it('follow comments, awards and time logs on issues through the API', async () => {
    const project = await api('POST', '/projects', { name: 'counted', initialize_with_readme: true });
    const other = await api('POST', '/projects', { name: 'counted-elsewhere' });
    const issue = await api('POST', `/projects/${project.id}/issues`, { title: 'one' });
    const url = `/projects/${project.id}/issues/${issue.iid}`;
    const first = await api('POST', `${url}/notes`, { body: 'first' });
    await api('POST', `${url}/notes`, { body: 'second' });
    // A label change writes a system note, which is no comment.
    await api('PUT', url, { labels: 'bug' });
    await api('POST', `${url}/award_emoji`, { name: 'thumbsup' });
    const down = await api('POST', `${url}/award_emoji`, { name: 'thumbsdown' });
    await api('POST', `${url}/award_emoji`, { name: 'tada' });
    // An award on a note counts on the note, not on the issue.
    await api('POST', `${url}/notes/${first.id}/award_emoji`, { name: 'thumbsup' });
    await api('POST', `${url}/add_spent_time`, { duration: '2h' });
    await api('POST', `${url}/add_spent_time`, { duration: '-30m' });
    let got = await api('GET', url);
    assert.deepEqual([got.user_notes_count, got.upvotes, got.downvotes, got.time_stats.total_time_spent], [2, 1, 1, 5400]);

    await api('DELETE', `${url}/notes/${first.id}`);
    await api('DELETE', `${url}/award_emoji/${down.id}`);
    await api('POST', `${url}/reset_spent_time`);
    got = await api('GET', url);
    assert.deepEqual([got.user_notes_count, got.upvotes, got.downvotes, got.time_stats.total_time_spent], [1, 1, 0, 0]);
    const listed = (await api('GET', `/projects/${project.id}/issues`))[0];
    assert.deepEqual([listed.user_notes_count, listed.upvotes, listed.downvotes], [1, 1, 0]);

    // Moving copies the notes, awards and time logs: the new issue counts them as the old one did.
    await api('POST', `${url}/add_spent_time`, { duration: '1h' });
    const moved = await api('POST', `${url}/move`, { to_project_id: other.id });
    assert.deepEqual([moved.user_notes_count, moved.upvotes, moved.time_stats.total_time_spent], [1, 1, 3600]);
    assert.deepEqual(await drift(), []);
  });

  it('follow comments, threads, resolution, awards and time logs on merge requests', async () => {
    const project = await api('POST', '/projects', { name: 'counted-requests', initialize_with_readme: true });
    await api('POST', `/projects/${project.id}/repository/commits`, {
      branch: 'topic', start_branch: 'main', commit_message: 'work', actions: [{ action: 'create', file_path: 't.txt', content: 't\n' }],
    });
    await api('PUT', `/projects/${project.id}`, { only_allow_merge_if_all_discussions_are_resolved: true });
    const mr = await api('POST', `/projects/${project.id}/merge_requests`, { source_branch: 'topic', target_branch: 'main', title: 'topic' });
    const url = `/projects/${project.id}/merge_requests/${mr.iid}`;
    await api('POST', `${url}/notes`, { body: 'a comment' });
    const thread = await api('POST', `${url}/discussions`, { body: 'a thread' });
    await api('POST', `${url}/discussions/${thread.id}/notes`, { body: 'a reply' });
    await api('POST', `${url}/award_emoji`, { name: 'thumbsdown' });
    await api('POST', `${url}/add_spent_time`, { duration: '45m' });
    let got = await api('GET', url);
    assert.deepEqual([got.user_notes_count, got.downvotes, got.time_stats.total_time_spent], [3, 1, 2700]);
    assert.equal(got.blocking_discussions_resolved, false);

    await api('PUT', `${url}/discussions/${thread.id}`, { resolved: true });
    got = await api('GET', url);
    assert.equal(got.blocking_discussions_resolved, true);
    assert.equal((await api('GET', `/projects/${project.id}/merge_requests`))[0].blocking_discussions_resolved, true);
    await api('PUT', `${url}/discussions/${thread.id}`, { resolved: false });
    assert.equal((await api('GET', url)).blocking_discussions_resolved, false);
    assert.deepEqual(await drift(), []);
  });

  it('follow rows written, changed and deleted straight in the tables', async () => {
    const project = await api('POST', '/projects', { name: 'counted-rows' });
    const a = await api('POST', `/projects/${project.id}/issues`, { title: 'a' });
    const b = await api('POST', `/projects/${project.id}/issues`, { title: 'b' });
    const now = new Date().toISOString();
    const note = await t.db.insertInto('notes').values({
      note: 'raw', noteable_type: 'Issue', noteable_id: a.id, project_id: project.id, author_id: 1, discussion_id: 'e'.repeat(40),
      created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    await t.db.insertInto('award_emoji').values({ name: 'thumbsup', user_id: 1, awardable_type: 'Issue', awardable_id: a.id, created_at: now, updated_at: now }).execute();
    await t.db.insertInto('timelogs').values({ issue_id: a.id, merge_request_id: null, user_id: 1, time_spent: 60, spent_at: now, created_at: now, updated_at: now }).execute();
    // Each moved to the other issue, or changed in what it counts for.
    await t.db.updateTable('notes').set({ noteable_id: b.id }).where('id', '=', note.id).execute();
    await t.db.updateTable('award_emoji').set({ awardable_id: b.id, name: 'thumbsdown' }).where('awardable_id', '=', a.id).execute();
    await t.db.updateTable('timelogs').set({ issue_id: b.id, time_spent: 90 }).where('issue_id', '=', a.id).execute();
    assert.deepEqual(await drift(), []);
    const [gotA, gotB] = [await api('GET', `/projects/${project.id}/issues/${a.iid}`), await api('GET', `/projects/${project.id}/issues/${b.iid}`)];
    assert.deepEqual([gotA.user_notes_count, gotA.upvotes, gotA.time_stats.total_time_spent], [0, 0, 0]);
    assert.deepEqual([gotB.user_notes_count, gotB.downvotes, gotB.time_stats.total_time_spent], [1, 1, 90]);
    // Made a system note: no longer a comment.
    await t.db.updateTable('notes').set({ system: 1 }).where('id', '=', note.id).execute();
    await t.db.deleteFrom('award_emoji').where('awardable_id', '=', b.id).execute();
    await t.db.deleteFrom('timelogs').where('issue_id', '=', b.id).execute();
    assert.deepEqual(await drift(), []);
    assert.deepEqual((await t.db.selectFrom('issues').select(['user_notes_count', 'downvotes_count', 'total_time_spent']).where('id', '=', b.id)
      .executeTakeFirstOrThrow()), { user_notes_count: 0, downvotes_count: 0, total_time_spent: 0 });
    // Deleting the issue takes its notes' rows with it; nothing is left counting for a missing row.
    await api('DELETE', `/projects/${project.id}/issues/${b.iid}`);
    assert.deepEqual(await drift(), []);
  });
});
