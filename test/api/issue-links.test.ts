/** Issue links: list, create (relates_to, blocks, is_blocked_by), show, delete; permissions and the Service's refusals. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createIssue, createProjectWithMembers, systemNotesOf } from '../helpers/issues.ts';

describe('issue links', () => {
  let t: TestApp;
  let owner: UserRow;
  let guest: UserRow;
  let outsider: UserRow;
  let ownerToken: string;
  let guestToken: string;
  let outsiderToken: string;
  let p1: { id: number; path_with_namespace: string };
  let p2: { id: number; path_with_namespace: string };

  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db);
    guest = await createUser(t.db);
    outsider = await createUser(t.db);
    ownerToken = await createToken(t.db, owner);
    guestToken = await createToken(t.db, guest);
    outsiderToken = await createToken(t.db, outsider);
    p1 = await createProjectWithMembers(t, ownerToken, [{ user_id: guest.id, access_level: 10 }]);
    p2 = await createProjectWithMembers(t, ownerToken);
  });
  after(async () => { await t.close(); });

  const links = (token: string, project: number, iid: number) =>
    t.request({ method: 'GET', url: `/api/v4/projects/${project}/issues/${iid}/links`, token });
  const link = (token: string, project: number, iid: number, payload: Record<string, unknown>) =>
    t.request({ method: 'POST', url: `/api/v4/projects/${project}/issues/${iid}/links`, token, payload });

  it('links two issues, both ways, with system notes on each', async () => {
    const a = await createIssue(t.db, { project_id: p1.id, author_id: owner.id, title: 'A' });
    const b = await createIssue(t.db, { project_id: p2.id, author_id: owner.id, title: 'B' });
    const res = await link(ownerToken, p1.id, a.iid, { target_project_id: p2.id, target_issue_iid: b.iid });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.equal(body.link_type, 'relates_to');
    assert.equal(body.source_issue.id, a.id);
    assert.equal(body.target_issue.id, b.id);
    assert.equal(body.source_issue.references, undefined, 'IssueBasic has no references');

    const fromA = (await links(ownerToken, p1.id, a.iid)).json();
    assert.equal(fromA.length, 1);
    assert.equal(fromA[0].id, b.id);
    assert.equal(fromA[0].link_type, 'relates_to');
    assert.equal(typeof fromA[0].issue_link_id, 'number');
    assert.equal(typeof fromA[0].link_created_at, 'string');
    assert.equal(fromA[0].references.relative, `${p2.path_with_namespace}#${b.iid}`);
    const fromB = (await links(ownerToken, p2.id, b.iid)).json();
    assert.deepEqual(fromB.map((i: { id: number }) => i.id), [a.id]);

    // Same namespace: the other project is named by its path only.
    assert.deepEqual(await systemNotesOf(t.db, a.id), [`marked this issue as related to ${p2.path_with_namespace.split('/')[1]}#${b.iid}`]);
    assert.deepEqual(await systemNotesOf(t.db, b.id), [`marked this issue as related to ${p1.path_with_namespace.split('/')[1]}#${a.iid}`]);

    // Already linked, in either direction.
    const again = await link(ownerToken, p2.id, b.iid, { target_project_id: p1.path_with_namespace, target_issue_iid: a.iid });
    assert.equal(again.statusCode, 409);
    assert.deepEqual(again.json(), { message: 'Issue(s) already assigned' });
  });

  it('stores is_blocked_by as the reverse blocks link and reads it back from each side', async () => {
    const a = await createIssue(t.db, { project_id: p1.id, author_id: owner.id });
    const b = await createIssue(t.db, { project_id: p1.id, author_id: owner.id });
    const res = await link(ownerToken, p1.id, a.iid, { target_project_id: p1.id, target_issue_iid: b.iid, link_type: 'is_blocked_by' });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().link_type, 'blocks');
    assert.equal(res.json().source_issue.id, b.id);
    assert.equal(res.json().target_issue.id, a.id);
    const row = await t.db.selectFrom('issue_links').selectAll().where('target_id', '=', a.id).executeTakeFirstOrThrow();
    assert.equal(row.source_id, b.id);
    assert.equal(row.link_type, 'blocks');
    assert.equal((await links(ownerToken, p1.id, a.iid)).json()[0].link_type, 'is_blocked_by');
    assert.equal((await links(ownerToken, p1.id, b.iid)).json()[0].link_type, 'blocks');
    assert.deepEqual(await systemNotesOf(t.db, a.id), [`marked this issue as blocked by #${b.iid}`]);
    assert.deepEqual(await systemNotesOf(t.db, b.id), [`marked this issue as blocking #${a.iid}`]);
    // a is blocked by an open issue.
    const shown = (await links(ownerToken, p1.id, b.iid)).json()[0];
    assert.equal(shown.blocking_issues_count, 1);
  });

  it('shows and removes one link from either end', async () => {
    const a = await createIssue(t.db, { project_id: p1.id, author_id: owner.id });
    const b = await createIssue(t.db, { project_id: p1.id, author_id: owner.id });
    const created = await link(ownerToken, p1.id, a.iid, { target_project_id: p1.id, target_issue_iid: b.iid, link_type: 'blocks' });
    const linkId = (await links(ownerToken, p1.id, a.iid)).json()[0].issue_link_id;
    assert.equal(created.statusCode, 201);
    const shown = await t.request({ method: 'GET', url: `/api/v4/projects/${p1.id}/issues/${b.iid}/links/${linkId}`, token: ownerToken });
    assert.equal(shown.statusCode, 200, shown.body);
    assert.equal(shown.json().link_type, 'blocks');
    const other = await createIssue(t.db, { project_id: p1.id, author_id: owner.id });
    const wrong = await t.request({ method: 'GET', url: `/api/v4/projects/${p1.id}/issues/${other.iid}/links/${linkId}`, token: ownerToken });
    assert.equal(wrong.statusCode, 404);
    assert.deepEqual(wrong.json(), { message: '404 Not found' });

    const removed = await t.request({ method: 'DELETE', url: `/api/v4/projects/${p1.id}/issues/${a.iid}/links/${linkId}`, token: ownerToken });
    assert.equal(removed.statusCode, 200, removed.body);
    assert.equal(removed.json().source_issue.id, a.id);
    assert.deepEqual((await links(ownerToken, p1.id, a.iid)).json(), []);
    assert.equal((await systemNotesOf(t.db, a.id)).at(-1), `removed the relation with #${b.iid}`);
    assert.equal((await systemNotesOf(t.db, b.id)).at(-1), `removed the relation with #${a.iid}`);
    const gone = await t.request({ method: 'DELETE', url: `/api/v4/projects/${p1.id}/issues/${a.iid}/links/${linkId}`, token: ownerToken });
    assert.equal(gone.statusCode, 404);
  });

  it('refuses a link to the issue itself, to an unreadable project or issue, and without Guest in both projects', async () => {
    const a = await createIssue(t.db, { project_id: p1.id, author_id: owner.id });
    const self = await link(ownerToken, p1.id, a.iid, { target_project_id: p1.id, target_issue_iid: a.iid });
    assert.equal(self.statusCode, 422);
    assert.deepEqual(self.json(), { message: `#${a.iid} cannot be added: cannot be related to itself` });

    const b = await createIssue(t.db, { project_id: p2.id, author_id: owner.id });
    // The guest cannot read p2: its issue is as missing as its project.
    const hidden = await link(guestToken, p1.id, a.iid, { target_project_id: p2.id, target_issue_iid: b.iid });
    assert.equal(hidden.statusCode, 404);
    assert.deepEqual(hidden.json(), { message: '404 Project Not Found' });
    const missing = await link(ownerToken, p1.id, a.iid, { target_project_id: p2.id, target_issue_iid: 9999 });
    assert.deepEqual(missing.json(), { message: '404 Issue Not Found' });

    // A non-member of a public project may read its issues but not link them.
    const pub = await createProjectWithMembers(t, ownerToken, [], { visibility: 'public' });
    const c = await createIssue(t.db, { project_id: pub.id, author_id: owner.id });
    const d = await createIssue(t.db, { project_id: pub.id, author_id: owner.id });
    const refused = await link(outsiderToken, pub.id, c.iid, { target_project_id: pub.id, target_issue_iid: d.iid });
    assert.equal(refused.statusCode, 403);
    assert.deepEqual(refused.json(), { message: "Couldn't link issues. You must have at least the Guest role in both projects." });

    // A guest of p1 may link two of its issues.
    const e = await createIssue(t.db, { project_id: p1.id, author_id: owner.id });
    assert.equal((await link(guestToken, p1.id, a.iid, { target_project_id: p1.id, target_issue_iid: e.iid })).statusCode, 201);

    const bad = await link(ownerToken, p1.id, a.iid, { target_project_id: p1.id, target_issue_iid: e.iid, link_type: 'duplicates' });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { error: 'link_type does not have a valid value' });
    assert.equal((await link(ownerToken, p1.id, a.iid, { target_project_id: p1.id })).statusCode, 400);
    assert.equal((await links(outsiderToken, p1.id, a.iid)).statusCode, 404);
  });

  it('lists only the linked issues the caller may read (a confidential issue is hidden from a guest)', async () => {
    const a = await createIssue(t.db, { project_id: p1.id, author_id: owner.id });
    const secret = await createIssue(t.db, { project_id: p1.id, author_id: owner.id, confidential: true });
    const open = await createIssue(t.db, { project_id: p1.id, author_id: owner.id });
    for (const target of [secret, open]) {
      assert.equal((await link(ROOT_TOKEN, p1.id, a.iid, { target_project_id: p1.id, target_issue_iid: target.iid })).statusCode, 201);
    }
    assert.deepEqual((await links(ownerToken, p1.id, a.iid)).json().map((i: { id: number }) => i.id), [secret.id, open.id]);
    assert.deepEqual((await links(guestToken, p1.id, a.iid)).json().map((i: { id: number }) => i.id), [open.id]);
    const linkId = (await links(ownerToken, p1.id, a.iid)).json()[0].issue_link_id;
    const hidden = await t.request({ method: 'GET', url: `/api/v4/projects/${p1.id}/issues/${a.iid}/links/${linkId}`, token: guestToken });
    assert.deepEqual(hidden.json(), { message: '404 Issue Not Found' });
  });
});
