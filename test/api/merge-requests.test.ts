/**
 * Merge requests at the HTTP boundary (issue 30, item 1) on real repositories: opening one from a
 * branch committed through the API, the Service's refusals (same branch 422, a second open
 * request of a branch 409, missing branches 400), reading it with its diff refs and the merge
 * status the background check computes, the lists and their filters, changing, closing,
 * reopening and removing it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('merge requests', () => {
  let t: TestApp;
  let dev: UserRow;
  let devToken: string;
  let reporterToken: string;
  let outsiderToken: string;
  let project: { id: number; path_with_namespace: string };
  const mrs = () => `/api/v4/projects/${project.id}/merge_requests`;

  async function commit(branch: string, files: Record<string, string>, start = 'main', message = `Change ${branch}`) {
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${project.id}/repository/commits`, token: devToken,
      payload: {
        branch, start_branch: start, commit_message: message,
        actions: Object.entries(files).map(([file_path, content]) => ({ action: 'create', file_path, content })),
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  }

  /** The request once the background check has given it a merge status. */
  async function checked(iid: number): Promise<Record<string, any>> {
    for (let i = 0; i < 200; i += 1) {
      const res = await t.request({ method: 'GET', url: `${mrs()}/${iid}`, token: devToken });
      const body = res.json();
      if (body.merge_status !== 'unchecked' && body.merge_status !== 'checking') return body;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('merge status never checked');
  }

  before(async () => {
    t = await startTestApp({ KILN_JOB_POLL_MS: '20' });
    dev = await createUser(t.db, { username: 'mrdev', name: 'Mr Dev', email: 'mrdev@example.com' });
    devToken = await createToken(t.db, dev);
    const reporter = await createUser(t.db, { username: 'mrrep' });
    reporterToken = await createToken(t.db, reporter);
    outsiderToken = await createToken(t.db, await createUser(t.db, { username: 'mrout' }));
    const res = await t.request({ method: 'POST', url: '/api/v4/projects', token: devToken, payload: { name: 'mrs', initialize_with_readme: true } });
    assert.equal(res.statusCode, 201, res.body);
    project = res.json();
    const m = await t.request({ method: 'POST', url: `/api/v4/projects/${project.id}/members`, token: devToken, payload: { user_id: reporter.id, access_level: 20 } });
    assert.equal(m.statusCode, 201, m.body);
  });
  after(async () => { await t.close(); });

  it('opens a merge request from a pushed branch, with diff refs and a computed merge status', async () => {
    const head = await commit('feature', { 'a.txt': 'a\n' });
    const res = await t.request({
      method: 'POST', url: mrs(), token: devToken,
      payload: { source_branch: 'feature', target_branch: 'main', title: 'Add a', description: 'Closes #1', labels: 'x,y', squash: true, remove_source_branch: true },
    });
    assert.equal(res.statusCode, 201, res.body);
    const mr = res.json();
    assert.equal(mr.iid, 1);
    assert.equal(mr.state, 'opened');
    assert.equal(mr.source_branch, 'feature');
    assert.equal(mr.target_branch, 'main');
    assert.deepEqual(mr.labels, ['x', 'y']);
    assert.equal(mr.squash, true);
    assert.equal(mr.force_remove_source_branch, true);
    assert.equal(mr.draft, false);
    assert.equal(mr.author.username, 'mrdev');
    assert.equal(mr.sha, head);
    assert.equal(mr.diff_refs.head_sha, head);
    assert.equal(mr.changes_count, '1');
    assert.equal(mr.user.can_merge, true);
    assert.equal(mr.references.full, `${project.path_with_namespace}!1`);
    assert.match(mr.web_url, new RegExp(`/${project.path_with_namespace}/-/merge_requests/1$`));
    const done = await checked(1);
    assert.equal(done.merge_status, 'can_be_merged');
    assert.equal(done.detailed_merge_status, 'mergeable');
    assert.equal(done.has_conflicts, false);
  });

  it('answers the Service refusals: same branch 422, a second open request 409, missing branches 400', async () => {
    const same = await t.request({ method: 'POST', url: mrs(), token: devToken, payload: { source_branch: 'main', target_branch: 'main', title: 'x' } });
    assert.equal(same.statusCode, 422);
    assert.deepEqual(same.json(), { message: ["You can't use same project/branch for source and target"] });
    const again = await t.request({ method: 'POST', url: mrs(), token: devToken, payload: { source_branch: 'feature', target_branch: 'main', title: 'x' } });
    assert.equal(again.statusCode, 409);
    assert.deepEqual(again.json(), { message: ['Another open merge request already exists for this source branch: !1'] });
    const missing = await t.request({ method: 'POST', url: mrs(), token: devToken, payload: { source_branch: 'nope', target_branch: 'main', title: 'x' } });
    assert.equal(missing.statusCode, 400);
    assert.deepEqual(missing.json(), { message: { base: ['Source branch "nope" does not exist'] } });
    const noTitle = await t.request({ method: 'POST', url: mrs(), token: devToken, payload: { source_branch: 'feature', target_branch: 'main' } });
    assert.equal(noTitle.statusCode, 400);
    // Reporters may not open one from a branch (create_merge_request_from is Developer's); outsiders do not see the project.
    const rep = await t.request({ method: 'POST', url: mrs(), token: reporterToken, payload: { source_branch: 'feature', target_branch: 'main', title: 'x' } });
    assert.equal(rep.statusCode, 403);
    const out = await t.request({ method: 'GET', url: `${mrs()}/1`, token: outsiderToken });
    assert.equal(out.statusCode, 404);
    assert.deepEqual(out.json(), { message: '404 Project Not Found' });
    const none = await t.request({ method: 'GET', url: `${mrs()}/99`, token: devToken });
    assert.deepEqual(none.json(), { message: '404 Merge Request Not Found' });
  });

  it('two concurrent creations for one branch: one lands, the other is told its iid', async () => {
    await commit('race', { 'r.txt': 'r\n' });
    const results = await Promise.all([1, 2, 3].map(() => t.request({
      method: 'POST', url: mrs(), token: devToken, payload: { source_branch: 'race', target_branch: 'main', title: 'Race' },
    })));
    const codes = results.map((r) => r.statusCode).sort();
    assert.deepEqual(codes, [201, 409, 409]);
    const won = results.find((r) => r.statusCode === 201)!.json();
    for (const r of results.filter((x) => x.statusCode === 409)) {
      assert.deepEqual(r.json(), { message: [`Another open merge request already exists for this source branch: !${won.iid}`] });
    }
  });

  it('a Draft: title makes a draft; lists filter by state, wip, branches, labels, author, search; view=simple', async () => {
    await commit('drafty', { 'd.txt': 'd\n' });
    const draft = await t.request({ method: 'POST', url: mrs(), token: devToken, payload: { source_branch: 'drafty', target_branch: 'main', title: 'Draft: later' } });
    assert.equal(draft.statusCode, 201, draft.body);
    assert.equal(draft.json().draft, true);
    assert.equal(draft.json().work_in_progress, true);
    const list = async (q: string, token = devToken) => {
      const res = await t.request({ method: 'GET', url: `${mrs()}?${q}`, token });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().map((m: { iid: number }) => m.iid);
    };
    assert.deepEqual(await list(''), [3, 2, 1]);
    assert.deepEqual(await list('wip=yes'), [3]);
    assert.deepEqual(await list('wip=no&order_by=title&sort=asc'), [1, 2]);
    assert.deepEqual(await list('source_branch=feature'), [1]);
    assert.deepEqual(await list('labels=x'), [1]);
    assert.deepEqual(await list('labels=None'), [3, 2]);
    assert.deepEqual(await list('search=later'), [3]);
    assert.deepEqual(await list('author_username=mrdev&state=opened'), [3, 2, 1]);
    assert.deepEqual(await list('iids[]=2'), [2]);
    assert.deepEqual(await list('not[source_branch]=feature'), [3, 2]);
    assert.deepEqual(await list('', reporterToken), [3, 2, 1]);
    const simple = await t.request({ method: 'GET', url: `${mrs()}?view=simple&per_page=1`, token: devToken });
    assert.deepEqual(Object.keys(simple.json()[0]).sort(), ['created_at', 'description', 'id', 'iid', 'project_id', 'state', 'title', 'updated_at', 'web_url']);
    const mine = await t.request({ method: 'GET', url: '/api/v4/merge_requests', token: devToken });
    assert.deepEqual(mine.json().map((m: { iid: number }) => m.iid), [3, 2, 1]);
    const theirs = await t.request({ method: 'GET', url: '/api/v4/merge_requests', token: reporterToken });
    assert.deepEqual(theirs.json(), []);
    const anon = await t.request({ method: 'GET', url: '/api/v4/merge_requests' });
    assert.equal(anon.statusCode, 401);
  });

  it('fills the collaboration core: milestone lists, an issue\'s closing requests, search, !iid in markdown', async () => {
    const issue = (await t.request({ method: 'POST', url: `/api/v4/projects/${project.id}/issues`, token: devToken, payload: { title: 'Bug' } })).json();
    const ms = (await t.request({ method: 'POST', url: `/api/v4/projects/${project.id}/milestones`, token: devToken, payload: { title: 'm1' } })).json();
    await commit('closer', { 'c.txt': 'c\n' });
    const mr = (await t.request({
      method: 'POST', url: mrs(), token: devToken,
      payload: { source_branch: 'closer', target_branch: 'main', title: 'Closer', description: `Closes #${issue.iid}`, milestone_id: ms.id },
    })).json();
    const closedBy = (await t.request({ method: 'GET', url: `/api/v4/projects/${project.id}/issues/${issue.iid}/closed_by`, token: devToken })).json();
    // The first request's description closes #1 too.
    assert.deepEqual(closedBy.map((m: { iid: number }) => m.iid), [1, mr.iid]);
    const related = (await t.request({ method: 'GET', url: `/api/v4/projects/${project.id}/issues/${issue.iid}/related_merge_requests`, token: devToken })).json();
    assert.deepEqual(related.map((m: { iid: number }) => m.iid), [1, mr.iid]);
    const inMilestone = (await t.request({ method: 'GET', url: `/api/v4/projects/${project.id}/milestones/${ms.id}/merge_requests`, token: devToken })).json();
    assert.deepEqual(inMilestone.map((m: { iid: number }) => m.iid), [mr.iid]);
    const found = await t.request({ method: 'GET', url: `/api/v4/projects/${project.id}/search?scope=merge_requests&search=Closer`, token: devToken });
    assert.equal(found.statusCode, 200, found.body);
    assert.deepEqual(found.json().map((m: { iid: number }) => m.iid), [mr.iid]);
    const md = await t.request({ method: 'POST', url: '/api/v4/markdown', token: devToken, payload: { text: `See !${mr.iid} and !999`, gfm: true, project: project.path_with_namespace } });
    assert.equal(md.statusCode, 201, md.body);
    assert.match(md.json().html, new RegExp(`<a href="[^"]*/-/merge_requests/${mr.iid}"[^>]*class="gfm gfm-merge_request"[^>]*>!${mr.iid}</a>`));
    assert.match(md.json().html, /!999/);
    const todo = await t.request({ method: 'POST', url: `${mrs()}/${mr.iid}/todo`, token: devToken });
    assert.equal(todo.statusCode, 201, todo.body);
    assert.equal(todo.json().target_type, 'MergeRequest');
    assert.equal(todo.json().target.iid, mr.iid);
    assert.equal(todo.json().body, 'Closer');
    assert.equal((await t.request({ method: 'POST', url: `${mrs()}/${mr.iid}/todo`, token: devToken })).statusCode, 304);
    const todos = (await t.request({ method: 'GET', url: '/api/v4/todos', token: devToken })).json();
    assert.ok(todos.some((x: { target_type: string; target: { iid: number } }) => x.target_type === 'MergeRequest' && x.target.iid === mr.iid));
    await t.request({ method: 'PUT', url: `${mrs()}/${mr.iid}`, token: devToken, payload: { assignee_ids: [dev.id], reviewer_ids: [dev.id] } });
    const counts = (await t.request({ method: 'GET', url: '/api/v4/user_counts', token: devToken })).json();
    assert.equal(counts.assigned_merge_requests, 1);
    assert.equal(counts.review_requested_merge_requests, 1);
  });

  it('updates title, labels, target branch; closes and reopens with state events; removes (owners)', async () => {
    await commit('other-target', { 'o.txt': 'o\n' });
    const upd = await t.request({
      method: 'PUT', url: `${mrs()}/3`, token: devToken,
      payload: { title: 'Ready now', add_labels: 'z', target_branch: 'other-target' },
    });
    assert.equal(upd.statusCode, 200, upd.body);
    assert.equal(upd.json().draft, false);
    assert.deepEqual(upd.json().labels, ['z']);
    assert.equal(upd.json().target_branch, 'other-target');
    const closed = await t.request({ method: 'PUT', url: `${mrs()}/3`, token: devToken, payload: { state_event: 'close' } });
    assert.equal(closed.json().state, 'closed');
    assert.equal(closed.json().closed_by.username, 'mrdev');
    assert.equal(closed.json().detailed_merge_status, 'not_open');
    const reopened = await t.request({ method: 'PUT', url: `${mrs()}/3`, token: devToken, payload: { state_event: 'reopen' } });
    assert.equal(reopened.json().state, 'opened');
    assert.equal(reopened.json().closed_at, null);
    const events = await t.db.selectFrom('resource_state_events').select('state').where('merge_request_id', '=', reopened.json().id).orderBy('id').execute();
    assert.deepEqual(events.map((e) => e.state), ['closed', 'reopened']);
    const notes = await t.db.selectFrom('notes').select('note').where('noteable_type', '=', 'MergeRequest').where('noteable_id', '=', reopened.json().id).orderBy('id').execute();
    assert.deepEqual(notes.map((n) => n.note), ['changed title from **{-Draft: later-}** to **{+Ready now+}**', 'changed target branch from `main` to `other-target`']);
    const empty = await t.request({ method: 'PUT', url: `${mrs()}/3`, token: devToken, payload: {} });
    assert.equal(empty.statusCode, 400);
    const repUpd = await t.request({ method: 'PUT', url: `${mrs()}/3`, token: reporterToken, payload: { title: 'no' } });
    assert.equal(repUpd.statusCode, 403);
    const del = await t.request({ method: 'DELETE', url: `${mrs()}/3`, token: ROOT_TOKEN });
    assert.equal(del.statusCode, 204);
    assert.equal((await t.request({ method: 'GET', url: `${mrs()}/3`, token: devToken })).statusCode, 404);
  });
});
