/** An issue's resource events: label, milestone and state histories, paged, one by id, as readers of the issue see them. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import type { IssueRow } from '../../src/db/tables/issues.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createIssue, createLabel, createMilestone, createProjectWithMembers } from '../helpers/issues.ts';

describe('resource events', () => {
  let t: TestApp;
  let owner: UserRow;
  let ownerToken: string;
  let guestToken: string;
  let outsiderToken: string;
  let project: { id: number; path_with_namespace: string };
  let issue: IssueRow;
  let secret: IssueRow;
  const ids: Record<string, number[]> = {};

  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db);
    const guest = await createUser(t.db);
    ownerToken = await createToken(t.db, owner);
    guestToken = await createToken(t.db, guest);
    outsiderToken = await createToken(t.db, await createUser(t.db));
    project = await createProjectWithMembers(t, ownerToken, [{ user_id: guest.id, access_level: 10 }]);
    issue = await createIssue(t.db, { project_id: project.id, author_id: owner.id });
    secret = await createIssue(t.db, { project_id: project.id, author_id: owner.id, confidential: true });
    const bug = await createLabel(t.db, { project_id: project.id, title: 'bug', color: '#ff0000' });
    const m = await createMilestone(t.db, { project_id: project.id, title: 'v1' });
    const at = (n: number) => `2026-11-0${n}T10:00:00.000Z`;
    ids.label = [];
    for (const [action, n] of [['add', 1], ['remove', 2], ['add', 3]] as const) {
      const row = await t.db.insertInto('resource_label_events').values({
        issue_id: issue.id, merge_request_id: null, label_id: bug.id, user_id: owner.id, action, created_at: at(n),
      }).returning('id').executeTakeFirstOrThrow();
      ids.label.push(row.id);
    }
    ids.milestone = [(await t.db.insertInto('resource_milestone_events').values({
      issue_id: issue.id, merge_request_id: null, milestone_id: m.id, user_id: owner.id, action: 'add', state: 'active', created_at: at(4),
    }).returning('id').executeTakeFirstOrThrow()).id];
    ids.state = [(await t.db.insertInto('resource_state_events').values({
      issue_id: issue.id, merge_request_id: null, user_id: owner.id, state: 'closed', source_commit: null, source_merge_request_id: null,
      created_at: at(5),
    }).returning('id').executeTakeFirstOrThrow()).id];
  });
  after(async () => { await t.close(); });

  const get = (token: string | undefined, path: string) => t.request({ method: 'GET', url: `/api/v4/projects/${project.id}/issues/${path}`, token });

  it('lists label events oldest first, paged, with the label and the user', async () => {
    const res = await get(guestToken, `${issue.iid}/resource_label_events?per_page=2`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['x-total'], '3');
    assert.equal(res.headers['x-next-page'], '2');
    const [first, second] = res.json();
    assert.deepEqual(Object.keys(first), ['id', 'user', 'created_at', 'resource_type', 'resource_id', 'label', 'action']);
    assert.equal(first.id, ids.label[0]);
    assert.equal(first.action, 'add');
    assert.equal(second.action, 'remove');
    assert.equal(first.resource_type, 'Issue');
    assert.equal(first.resource_id, issue.id);
    assert.equal(first.user.username, owner.username);
    assert.deepEqual(first.label, {
      id: first.label.id, name: 'bug', color: '#ff0000', description: null, description_html: '', text_color: '#FFFFFF', remove_on_close: false,
    });
    const one = await get(guestToken, `${issue.iid}/resource_label_events/${ids.label[2]}`);
    assert.equal(one.json().action, 'add');
    const wrong = await get(guestToken, `${secret.iid + 100}/resource_label_events/${ids.label[2]}`);
    assert.deepEqual(wrong.json(), { message: '404 Issue Not Found' });
    const missing = await get(guestToken, `${issue.iid}/resource_label_events/${ids.milestone[0] + 1000}`);
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { message: '404 Not found' });
  });

  it('lists milestone and state events', async () => {
    const ms = (await get(ownerToken, `${issue.iid}/resource_milestone_events`)).json();
    assert.equal(ms.length, 1);
    assert.equal(ms[0].milestone.title, 'v1');
    assert.equal(ms[0].milestone.web_url, `http://kiln.test/${project.path_with_namespace}/-/milestones/1`);
    assert.equal(ms[0].state, 'active');
    assert.equal(ms[0].action, 'add');
    const one = await get(ownerToken, `${issue.iid}/resource_milestone_events/${ids.milestone[0]}`);
    assert.equal(one.json().id, ids.milestone[0]);
    const states = (await get(ownerToken, `${issue.iid}/resource_state_events`)).json();
    assert.deepEqual(states.map((s: { state: string }) => s.state), ['closed']);
    assert.deepEqual(Object.keys(states[0]), ['id', 'user', 'created_at', 'resource_type', 'resource_id', 'state']);
    assert.equal((await get(ownerToken, `${issue.iid}/resource_state_events/${ids.state[0]}`)).json().state, 'closed');
    // The events of one issue are not reachable through another.
    assert.equal((await get(ownerToken, `${secret.iid}/resource_state_events/${ids.state[0]}`)).statusCode, 404);
    assert.deepEqual((await get(ownerToken, `${secret.iid}/resource_state_events`)).json(), []);
  });

  it('hides the history of an issue the caller may not read', async () => {
    assert.equal((await get(guestToken, `${secret.iid}/resource_label_events`)).statusCode, 404);
    assert.deepEqual((await get(outsiderToken, `${issue.iid}/resource_state_events`)).json(), { message: '404 Project Not Found' });
    assert.equal((await get(undefined, `${issue.iid}/resource_milestone_events`)).statusCode, 404);
  });
});
