/**
 * The project entity's open_issues_count (Projects::OpenIssuesCountService): open issues for those
 * who may read confidential ones, the non-confidential ones for everyone else, left out where the
 * issues feature is not available to the viewer. Counters kept by the database follow creation,
 * closing and reopening, confidentiality, moves and deletion.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('open_issues_count on projects', () => {
  let t: TestApp;
  let ownerToken: string;
  let guestToken: string;
  let outsiderToken: string;
  let project: { id: number };
  let other: { id: number };

  before(async () => {
    t = await startTestApp();
    const owner = await createUser(t.db, { username: 'oic-owner' });
    ownerToken = await createToken(t.db, owner);
    const guest = await createUser(t.db, { username: 'oic-guest' });
    guestToken = await createToken(t.db, guest);
    outsiderToken = await createToken(t.db, await createUser(t.db, { username: 'oic-outsider' }));
    project = (await t.request({ method: 'POST', url: '/api/v4/projects', token: ownerToken, payload: { name: 'oic', visibility: 'public' } })).json();
    other = (await t.request({ method: 'POST', url: '/api/v4/projects', token: ownerToken, payload: { name: 'oic-other' } })).json();
    await t.request({ method: 'POST', url: `/api/v4/projects/${project.id}/members`, token: ownerToken, payload: { user_id: guest.id, access_level: 10 } });
  });
  after(async () => { await t.close(); });

  const count = async (token: string | undefined, id = project.id) => {
    const res = await t.request({ method: 'GET', url: `/api/v4/projects/${id}`, ...(token ? { token } : {}) });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().open_issues_count as number | undefined;
  };
  const listed = async (token: string) => {
    const res = await t.request({ method: 'GET', url: `/api/v4/projects?owned=true&simple=false`, token });
    return Object.fromEntries(res.json().map((p: { id: number; open_issues_count: number }) => [p.id, p.open_issues_count]));
  };
  const issue = async (payload: Record<string, unknown>) => {
    const res = await t.request({ method: 'POST', url: `/api/v4/projects/${project.id}/issues`, token: ownerToken, payload });
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { iid: number };
  };
  const put = (iid: number, payload: Record<string, unknown>) =>
    t.request({ method: 'PUT', url: `/api/v4/projects/${project.id}/issues/${iid}`, token: ownerToken, payload });

  it('counts open issues, confidential ones only for those who may read them', async () => {
    assert.equal(await count(ownerToken), 0);
    const a = await issue({ title: 'a' });
    await issue({ title: 'b' });
    const secret = await issue({ title: 'secret', confidential: true });
    // Anonymous readers get BasicProjectDetails, which has no count.
    assert.deepEqual([await count(ownerToken), await count(guestToken), await count(outsiderToken), await count(undefined)], [3, 2, 2, undefined]);
    assert.equal((await listed(ownerToken))[project.id], 3);

    await put(a.iid, { state_event: 'close' });
    assert.deepEqual([await count(ownerToken), await count(guestToken)], [2, 1]);
    await put(a.iid, { state_event: 'reopen' });
    await put(secret.iid, { confidential: false });
    assert.deepEqual([await count(ownerToken), await count(guestToken)], [3, 3]);
    await put(secret.iid, { confidential: true, title: 'secret again' });
    assert.deepEqual([await count(ownerToken), await count(guestToken)], [3, 2]);
    // A title change alone leaves the counters as they are.
    await put(a.iid, { title: 'renamed' });
    assert.equal(await count(ownerToken), 3);
  });

  it('follows moves and deletions', async () => {
    const moving = await issue({ title: 'moving' });
    assert.equal(await count(ownerToken), 4);
    const moved = await t.request({
      method: 'POST', url: `/api/v4/projects/${project.id}/issues/${moving.iid}/move`, token: ownerToken, payload: { to_project_id: other.id },
    });
    assert.equal(moved.statusCode, 201, moved.body);
    assert.deepEqual([await count(ownerToken), await count(ownerToken, other.id)], [3, 1]);
    const gone = await issue({ title: 'gone' });
    assert.equal(await count(ownerToken), 4);
    const del = await t.request({ method: 'DELETE', url: `/api/v4/projects/${project.id}/issues/${gone.iid}`, token: ownerToken });
    assert.equal(del.statusCode, 204, del.body);
    assert.equal(await count(ownerToken), 3);
    const row = await t.db.selectFrom('projects').select(['open_issues_count', 'open_public_issues_count'])
      .where('id', '=', project.id).executeTakeFirstOrThrow();
    assert.deepEqual(row, { open_issues_count: 3, open_public_issues_count: 2 });
  });

  it('is left out where the issues feature is not available to the viewer', async () => {
    await t.request({ method: 'PUT', url: `/api/v4/projects/${project.id}`, token: ownerToken, payload: { issues_access_level: 'private' } });
    assert.deepEqual([await count(ownerToken), await count(guestToken), await count(outsiderToken)], [3, 2, undefined]);
    await t.request({ method: 'PUT', url: `/api/v4/projects/${project.id}`, token: ownerToken, payload: { issues_access_level: 'disabled' } });
    assert.equal(await count(ownerToken), undefined);
    const simple = (await t.request({ method: 'GET', url: `/api/v4/projects/${project.id}`, token: ownerToken })).json();
    assert.equal('open_issues_count' in simple, false);
  });
});
