/**
 * Project and group badges (issue 31, item 9): CRUD on both holders with the Service's
 * permissions (Maintainer of a project, Owner of a group), placeholders rendered for the project
 * (for a group, its newest project), group badges listed on the group's projects with kind
 * `group`, the preview at …/badges/render, URL validation and the group-badge delete refusal.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('badges', () => {
  let t: TestApp;
  let groupId: number;
  let subId: number;
  let project: { id: number; path_with_namespace: string };
  let developerToken: string;
  let maintainerToken: string;
  let groupMaintainerToken: string;
  let strangerToken: string;

  async function member(url: string, level: number): Promise<string> {
    const u = await createUser(t.db);
    const res = await t.request({ method: 'POST', url, token: ROOT_TOKEN, payload: { user_id: u.id, access_level: level } });
    assert.equal(res.statusCode, 201, res.body);
    return createToken(t.db, u, { scopes: ['api'] });
  }

  before(async () => {
    t = await startTestApp();
    let res = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'Badge Group', path: 'badge-group' } });
    groupId = res.json().id;
    res = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'Sub', path: 'sub', parent_id: groupId } });
    subId = res.json().id;
    res = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name: 'badged', namespace_id: subId } });
    assert.equal(res.statusCode, 201, res.body);
    project = res.json();
    developerToken = await member(`/api/v4/projects/${project.id}/members`, 30);
    maintainerToken = await member(`/api/v4/projects/${project.id}/members`, 40);
    groupMaintainerToken = await member(`/api/v4/groups/${groupId}/members`, 40);
    strangerToken = await createToken(t.db, await createUser(t.db), { scopes: ['api'] });
  });
  after(async () => { await t.close(); });

  const projectBadges = (suffix = '') => `/api/v4/projects/${project.id}/badges${suffix}`;
  const groupBadges = (suffix = '') => `/api/v4/groups/${groupId}/badges${suffix}`;

  it('creates, lists, updates and deletes a project badge, rendering its placeholders', async () => {
    const res = await t.request({
      method: 'POST', url: projectBadges(), token: maintainerToken,
      payload: { link_url: 'http://example.com/ci?p=%{project_path}&id=%{project_id}&b=%{default_branch}', image_url: 'https://img.example/%{commit_sha}.svg', name: 'ci' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const badge = res.json();
    assert.deepEqual(Object.keys(badge), ['name', 'link_url', 'image_url', 'rendered_link_url', 'rendered_image_url', 'id', 'kind']);
    // An empty repository: no default branch, no commit.
    assert.equal(badge.rendered_link_url, `http://example.com/ci?p=${project.path_with_namespace}&id=${project.id}&b=`);
    assert.equal(badge.rendered_image_url, 'https://img.example/.svg');
    assert.equal(badge.kind, 'project');

    const list = await t.request({ method: 'GET', url: projectBadges(), token: developerToken });
    assert.deepEqual(list.json().map((b: { id: number }) => b.id), [badge.id]);
    const named = await t.request({ method: 'GET', url: projectBadges('?name=other'), token: developerToken });
    assert.deepEqual(named.json(), []);

    const put = await t.request({ method: 'PUT', url: projectBadges(`/${badge.id}`), token: maintainerToken, payload: { image_url: 'http://another.example.com' } });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(put.json().image_url, 'http://another.example.com');
    assert.equal(put.json().link_url, badge.link_url);
    const got = await t.request({ method: 'GET', url: projectBadges(`/${badge.id}`), token: developerToken });
    assert.equal(got.json().image_url, 'http://another.example.com');

    const del = await t.request({ method: 'DELETE', url: projectBadges(`/${badge.id}`), token: maintainerToken });
    assert.equal(del.statusCode, 204);
    const gone = await t.request({ method: 'GET', url: projectBadges(`/${badge.id}`), token: developerToken });
    assert.deepEqual([gone.statusCode, gone.json()], [404, { message: '404 Not found' }]);
  });

  it('renders the default branch and its commit once the repository has them', async () => {
    const commit = await t.request({
      method: 'POST', url: `/api/v4/projects/${project.id}/repository/commits`, token: ROOT_TOKEN,
      payload: { branch: 'main', commit_message: 'first', actions: [{ action: 'create', file_path: 'README.md', content: '# badged' }] },
    });
    assert.equal(commit.statusCode, 201, commit.body);
    const sha = commit.json().id;
    const res = await t.request({
      method: 'GET', url: projectBadges(`/render?link_url=${encodeURIComponent('http://x.example/%{default_branch}/%{commit_sha}/%{unknown}')}&image_url=http://i.example`),
      token: maintainerToken,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      name: null, link_url: 'http://x.example/%{default_branch}/%{commit_sha}/%{unknown}', image_url: 'http://i.example',
      rendered_link_url: `http://x.example/main/${sha}/%{unknown}`, rendered_image_url: 'http://i.example',
    });
    assert.equal(await t.db.selectFrom('badges').select('id').where('link_url', 'like', '%x.example%').executeTakeFirst(), undefined);
  });

  it('refuses URLs that are not http(s) with the validation errors', async () => {
    const res = await t.request({ method: 'POST', url: projectBadges(), token: maintainerToken, payload: { link_url: 'ftp://x.example', image_url: 'not a url' } });
    assert.deepEqual([res.statusCode, res.json()], [400, {
      message: { link_url: ['is blocked: Only allowed schemes are http, https'], image_url: ['is blocked: URI is invalid'] },
    }]);
    const missing = await t.request({ method: 'POST', url: projectBadges(), token: maintainerToken, payload: { link_url: 'http://x.example' } });
    assert.deepEqual([missing.statusCode, missing.json()], [400, { message: '400 Bad request - "image_url" not given' }]);
    const render = await t.request({ method: 'GET', url: projectBadges('/render?link_url=javascript:alert(1)&image_url=http://i.example'), token: maintainerToken });
    assert.equal(render.statusCode, 400);
  });

  it('gives writes to Maintainers of a project and Owners of a group', async () => {
    const payload = { link_url: 'http://x.example', image_url: 'http://i.example' };
    const dev = await t.request({ method: 'POST', url: projectBadges(), token: developerToken, payload });
    assert.deepEqual([dev.statusCode, dev.json()], [403, { message: '403 Forbidden' }]);
    const devRender = await t.request({ method: 'GET', url: projectBadges('/render?link_url=http://x.example&image_url=http://i.example'), token: developerToken });
    assert.equal(devRender.statusCode, 403);
    const stranger = await t.request({ method: 'GET', url: projectBadges(), token: strangerToken });
    assert.deepEqual([stranger.statusCode, stranger.json()], [404, { message: '404 Project Not Found' }]);
    const anonymous = await t.request({ method: 'POST', url: projectBadges(), payload });
    assert.equal(anonymous.statusCode, 401);
    const groupMaintainer = await t.request({ method: 'POST', url: groupBadges(), token: groupMaintainerToken, payload });
    assert.equal(groupMaintainer.statusCode, 403);
    const groupRead = await t.request({ method: 'GET', url: groupBadges(), token: groupMaintainerToken });
    assert.equal(groupRead.statusCode, 200);
  });

  it("lists a group's and its ancestors' badges on its projects, and deletes them only through the group", async () => {
    const res = await t.request({
      method: 'POST', url: groupBadges(), token: ROOT_TOKEN,
      payload: { link_url: 'http://example/img.svg?p=%{project_path}', image_url: 'http://example.com' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const groupBadge = res.json();
    assert.equal(groupBadge.kind, 'group');
    // The group has no project of its own: nothing to render with.
    assert.equal(groupBadge.rendered_link_url, 'http://example/img.svg?p=%{project_path}');
    const own = await t.request({
      method: 'POST', url: projectBadges(), token: maintainerToken, payload: { link_url: 'http://own.example', image_url: 'http://own.example/i' },
    });
    const list = await t.request({ method: 'GET', url: projectBadges(), token: developerToken });
    assert.deepEqual(list.json().map((b: { id: number; kind: string }) => [b.id, b.kind]), [[groupBadge.id, 'group'], [own.json().id, 'project']]);
    assert.equal(list.json()[0].rendered_link_url, `http://example/img.svg?p=${project.path_with_namespace}`);
    const throughProject = await t.request({ method: 'DELETE', url: projectBadges(`/${groupBadge.id}`), token: maintainerToken });
    assert.deepEqual([throughProject.statusCode, throughProject.json()], [403, { message: 'To delete a Group badge please use the Group endpoint' }]);
    // The subgroup's project renders the group's badges in the group's own list too.
    const subProject = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name: 'top-level', namespace_id: groupId } });
    const rendered = await t.request({ method: 'GET', url: groupBadges(`/${groupBadge.id}`), token: ROOT_TOKEN });
    assert.equal(rendered.json().rendered_link_url, `http://example/img.svg?p=${subProject.json().path_with_namespace}`);
    const del = await t.request({ method: 'DELETE', url: groupBadges(`/${groupBadge.id}`), token: ROOT_TOKEN });
    assert.equal(del.statusCode, 204);
    const after = await t.request({ method: 'GET', url: projectBadges(), token: developerToken });
    assert.deepEqual(after.json().map((b: { kind: string }) => b.kind), ['project']);
  });
});
