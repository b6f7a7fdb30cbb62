/**
 * Releases (issue 31, item 5; lib/api/releases.rb and lib/api/release/links.rb of the Service
 * 15.2, python-gitlab's test_releases): creating a release tags `ref` when the tag is missing,
 * the entity with its commit, sources, links, milestones and evidence, ordering, the permalink,
 * updates and deletion (the tag stays), asset links with their validation and uniqueness, the
 * tag entity's `release`, a job token, and who may do what.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createIssue, createPeople, createProject, type People } from '../helpers/noteables.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';

describe('releases API', () => {
  let t: TestApp;
  let people: People;
  let project: number;
  let sha = '';
  const base = () => `/api/v4/projects/${project}/releases`;
  const create = (payload: Record<string, unknown>, token = people.tokens.developer) =>
    t.request({ method: 'POST', url: base(), token, payload });

  before(async () => {
    t = await startTestApp();
    people = await createPeople(t);
    project = await createProject(t, people);
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${project}/repository/commits`, token: people.tokens.owner,
      payload: { branch: 'main', commit_message: 'first', actions: [{ action: 'create', file_path: 'a.txt', content: 'a' }] },
    });
    assert.equal(res.statusCode, 201, res.body);
    sha = res.json().id;
  });
  after(async () => { await t.close(); });

  it('creates a release, tagging ref, with the Service entity (python-gitlab test_create_project_release)', async () => {
    const milestone = await t.request({
      method: 'POST', url: `/api/v4/projects/${project}/milestones`, token: people.tokens.owner, payload: { title: 'M1' },
    });
    assert.equal(milestone.statusCode, 201, milestone.body);
    const author = await t.db.selectFrom('users').selectAll().where('id', '=', people.users.owner.id).executeTakeFirstOrThrow();
    const issue = await createIssue(t, project, author.id);
    await t.db.updateTable('issues').set({ milestone_id: milestone.json().id }).where('id', '=', issue.id).execute();
    const res = await create({
      name: 'Demo Release', tag_name: 'v1.2.3', description: 'release notes go here', ref: 'main', tag_message: 'annotated',
      milestones: ['M1'], assets: { links: [{ name: 'bin', url: 'https://example.com/bin', filepath: '/bin/app', link_type: 'package' }] },
    });
    assert.equal(res.statusCode, 201, res.body);
    const r = res.json();
    assert.deepEqual(Object.keys(r), [
      'name', 'tag_name', 'description', 'created_at', 'released_at', 'author', 'commit', 'upcoming_release', 'milestones',
      'commit_path', 'tag_path', 'assets', 'evidences', '_links',
    ]);
    assert.equal(r.name, 'Demo Release');
    assert.equal(r.tag_name, 'v1.2.3');
    assert.equal(r.commit.id, sha);
    assert.equal(r.upcoming_release, false);
    assert.equal(r.author.username, people.users.developer.username);
    assert.deepEqual(r.milestones.map((m: { title: string; issue_stats: unknown }) => [m.title, m.issue_stats]), [['M1', { total: 1, closed: 0 }]]);
    assert.match(r.commit_path, new RegExp(`/-/commit/${sha}$`));
    assert.match(r.tag_path, /\/-\/tags\/v1\.2\.3$/);
    assert.equal(r.assets.count, 5);
    assert.deepEqual(r.assets.sources.map((s: { format: string }) => s.format), ['zip', 'tar.gz', 'tar.bz2', 'tar']);
    assert.equal(r.assets.links[0].link_type, 'package');
    assert.match(r.assets.links[0].direct_asset_url, /\/-\/releases\/v1\.2\.3\/downloads\/bin\/app$/);
    assert.equal(r.evidences.length, 1);
    assert.match(r.evidences[0].sha, /^[0-9a-f]{64}$/);
    assert.match(r._links.self, /\/-\/releases\/v1\.2\.3$/);
    assert.match(r._links.edit_url, /\/edit$/);
    // The tag exists now, annotated, and its entity carries the release.
    const tag = await t.request({ url: `/api/v4/projects/${project}/repository/tags/v1.2.3`, token: people.tokens.reporter });
    assert.equal(tag.statusCode, 200, tag.body);
    assert.equal(tag.json().message, 'annotated');
    assert.deepEqual(tag.json().release, { tag_name: 'v1.2.3', description: 'release notes go here' });
    const got = await t.request({ url: `${base()}/v1.2.3?include_html_description=true`, token: people.tokens.reporter });
    assert.equal(got.statusCode, 200, got.body);
    assert.match(got.json().description_html, /<p[^>]*>release notes go here<\/p>/);
    assert.equal(got.json()._links.edit_url, undefined);
  });

  it('refuses a second release of a tag, a missing ref, unknown milestones and bad links', async () => {
    assert.deepEqual((await create({ tag_name: 'v1.2.3', ref: 'main' })).json(), { message: 'Release already exists' });
    const noRef = await create({ tag_name: 'v9' });
    assert.deepEqual([noRef.statusCode, noRef.json()], [422, { message: 'Ref is not specified' }]);
    const badRef = await create({ tag_name: 'v9', ref: 'nope' });
    assert.deepEqual([badRef.statusCode, badRef.json()], [400, { message: 'Target nope is invalid' }]);
    const ms = await create({ tag_name: 'v9', ref: 'main', milestones: ['none', 'other'] });
    assert.deepEqual([ms.statusCode, ms.json()], [400, { message: 'Milestone(s) not found: none, other' }]);
    const link = await create({ tag_name: 'v9', ref: 'main', assets: { links: [{ name: 'x', url: 'javascript:alert(1)' }] } });
    assert.equal(link.statusCode, 400, link.body);
    assert.match(link.json().message, /^Validation failed: Links url /);
    // Nothing was written by the refusals: no release and no tag.
    assert.equal((await t.request({ url: `${base()}/v9`, token: people.tokens.developer })).statusCode, 404);
    const tag = await t.request({ url: `/api/v4/projects/${project}/repository/tags/v9`, token: people.tokens.developer });
    assert.equal(tag.statusCode, 404);
  });

  it("refuses to create a protected tag for a release when the caller's level may not", async () => {
    const rule = await t.request({
      method: 'POST', url: `/api/v4/projects/${project}/protected_tags`, token: people.tokens.owner, payload: { name: 'stable-*' },
    });
    assert.equal(rule.statusCode, 201, rule.body);
    const refused = await create({ tag_name: 'stable-1', ref: 'main' });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.match(refused.json().message, /not allowed to create this tag as it is protected/);
    assert.equal((await t.request({ url: `/api/v4/projects/${project}/repository/tags/stable-1`, token: people.tokens.owner })).statusCode, 404);
    const made = await create({ tag_name: 'stable-1', ref: 'main' }, people.tokens.maintainer);
    assert.equal(made.statusCode, 201, made.body);
    const removed = await t.request({ method: 'DELETE', url: `${base()}/stable-1`, token: people.tokens.maintainer });
    assert.equal(removed.statusCode, 200, removed.body);
  });

  it('creates an unnamed release on an existing tag (test_create_project_release_no_name) and lists in order', async () => {
    const res = await create({ tag_name: 'v1.2.3-old', ref: sha, released_at: '2020-01-01T00:00:00Z' });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().name, 'v1.2.3-old');
    assert.deepEqual(res.json().evidences, [], 'a historical release collects no evidence');
    const future = await create({ tag_name: 'v3', ref: 'main', released_at: '2999-01-01T00:00:00Z' });
    assert.equal(future.json().upcoming_release, true);
    const list = await t.request({ url: base(), token: people.tokens.guest });
    assert.equal(list.statusCode, 200, list.body);
    assert.deepEqual(list.json().map((r: { name: string }) => r.name), ['v3', 'Demo Release', 'v1.2.3-old']);
    // A guest of a private project sees no tag, commit or sources, and may not read one release.
    assert.equal(list.json()[0].tag_name, undefined);
    assert.equal(list.json()[0].commit, undefined);
    assert.equal(list.json()[0].assets.sources, undefined);
    assert.equal((await t.request({ url: `${base()}/v3`, token: people.tokens.guest })).statusCode, 403);
    const asc = await t.request({ url: `${base()}?order_by=created_at&sort=asc`, token: people.tokens.reporter });
    assert.deepEqual(asc.json().map((r: { tag_name: string }) => r.tag_name), ['v1.2.3', 'v1.2.3-old', 'v3']);
    assert.equal((await t.request({ url: base(), token: people.tokens.nonMember })).statusCode, 404);
  });

  it('redirects the permalink of the latest release, with its sub-path and query', async () => {
    const res = await t.request({ url: `${base()}/permalink/latest/assets/links?per_page=5&order_by=x`, token: people.tokens.reporter });
    assert.equal(res.statusCode, 302, res.body);
    assert.equal(res.headers.location, `/api/v4/projects/${project}/releases/v3/assets/links?per_page=5`);
    const plain = await t.request({ url: `${base()}/permalink/latest`, token: people.tokens.reporter });
    assert.equal(plain.headers.location, `/api/v4/projects/${project}/releases/v3`);
  });

  it('updates a release (test_update_save_project_release) and refuses what the Service refuses', async () => {
    const res = await t.request({
      method: 'PUT', url: `${base()}/v1.2.3`, token: people.tokens.developer, payload: { description: 'updated', milestones: [] },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().description, 'updated');
    assert.equal(res.json().milestones, undefined);
    const empty = await t.request({ method: 'PUT', url: `${base()}/v1.2.3`, token: people.tokens.developer, payload: {} });
    assert.deepEqual([empty.statusCode, empty.json()], [400, { message: 'params is empty' }]);
    const reporter = await t.request({ method: 'PUT', url: `${base()}/v1.2.3`, token: people.tokens.reporter, payload: { name: 'x' } });
    assert.equal(reporter.statusCode, 403);
    const missing = await t.request({ method: 'PUT', url: `${base()}/nope`, token: people.tokens.developer, payload: { name: 'x' } });
    assert.equal(missing.statusCode, 403, 'the Service authorizes on the (absent) release');
    assert.equal((await create({ tag_name: 'v4', ref: 'main' }, people.tokens.reporter)).statusCode, 403);
  });

  it('keeps asset links unique by name and url, validates them, and serves their CRUD', async () => {
    const links = `${base()}/v1.2.3/assets/links`;
    const res = await t.request({ method: 'POST', url: links, token: people.tokens.developer, payload: { url: 'https://example.com', name: 'link_name' } });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(Object.keys(res.json()), ['id', 'name', 'url', 'direct_asset_url', 'external', 'link_type']);
    assert.deepEqual([res.json().external, res.json().link_type, res.json().direct_asset_url], [true, 'other', 'https://example.com']);
    const dup = await t.request({ method: 'POST', url: links, token: people.tokens.developer, payload: { url: 'https://example.com', name: 'link_name' } });
    assert.deepEqual([dup.statusCode, dup.json()], [400, { message: { name: ['has already been taken'], url: ['has already been taken'] } }]);
    const bad = await t.request({
      method: 'POST', url: links, token: people.tokens.developer, payload: { url: 'ssh://x.example', name: 'n2', filepath: 'no-slash' },
    });
    assert.deepEqual(bad.json(), {
      message: { url: ['is blocked: Only allowed schemes are http, https, ftp'], filepath: ['is in an invalid format'] },
    });
    const id = res.json().id;
    const put = await t.request({ method: 'PUT', url: `${links}/${id}`, token: people.tokens.developer, payload: { link_type: 'runbook' } });
    assert.equal(put.json().link_type, 'runbook');
    const listed = await t.request({ url: links, token: people.tokens.guest });
    assert.equal(listed.statusCode, 200, listed.body);
    assert.equal(listed.json().length, 2);
    const rel = await t.request({ url: `${base()}/v1.2.3`, token: people.tokens.reporter });
    assert.equal(rel.json().assets.links[0].url, 'https://example.com');
    const del = await t.request({ method: 'DELETE', url: `${links}/${id}`, token: people.tokens.developer });
    assert.equal(del.statusCode, 200, del.body);
    assert.equal((await t.request({ url: `${links}/${id}`, token: people.tokens.developer })).json().message, '404 Not found');
    assert.equal((await t.request({ url: `${base()}/none/assets/links`, token: people.tokens.developer })).statusCode, 404);
  });

  it('finds a release by a URL-encoded tag name with a slash', async () => {
    const res = await create({ tag_name: 'rel/2.0', ref: 'main' });
    assert.equal(res.statusCode, 201, res.body);
    assert.match(res.json()._links.self, /\/-\/releases\/rel%2F2\.0$/);
    const got = await t.request({ url: `${base()}/rel%2F2.0`, token: people.tokens.reporter });
    assert.equal(got.statusCode, 200, got.body);
    assert.equal(got.json().tag_name, 'rel/2.0');
    const del = await t.request({ method: 'DELETE', url: `${base()}/rel%2F2.0`, token: people.tokens.developer });
    assert.equal(del.statusCode, 200, del.body);
  });

  it('deletes a release and keeps its tag (test_delete_project_release)', async () => {
    const res = await t.request({ method: 'DELETE', url: `${base()}/v1.2.3`, token: people.tokens.developer });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().tag_name, 'v1.2.3');
    assert.equal((await t.request({ url: `${base()}/v1.2.3`, token: people.tokens.developer })).statusCode, 404);
    const tag = await t.request({ url: `/api/v4/projects/${project}/repository/tags/v1.2.3`, token: people.tokens.developer });
    assert.equal(tag.statusCode, 200);
    assert.equal(tag.json().release, null);
    const rows = await t.db.selectFrom('release_links').innerJoin('releases', 'releases.id', 'release_links.release_id')
      .select('releases.tag').execute();
    assert.ok(rows.every((l) => l.tag !== 'v1.2.3'), 'the links went with the release');
  });
});

describe('group releases and job tokens', () => {
  let t: TestApp;
  let p: CiProject;

  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': 'build: {script: x}\n' });
  });
  after(async () => { await t.close(); });

  it('lets a running job create a release with its token, as the Service release tool does', async () => {
    await createPipeline(t, p);
    const runner = await TestRunner.register(t);
    const job = await runner.requestJob();
    const res = await t.request({
      method: 'POST', url: `/api/v4/projects/${p.project.id}/releases`, headers: { 'job-token': job.token },
      payload: { tag_name: 'v1.0', ref: 'main', description: 'from CI' },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().tag_name, 'v1.0');
  });

  it("lists a group's releases, those of the projects below it, and their basic details with simple", async () => {
    const group = await t.request({ method: 'POST', url: '/api/v4/groups', token: p.ownerToken, payload: { name: 'rel', path: 'rel' } });
    assert.equal(group.statusCode, 201, group.body);
    const project = await t.request({
      method: 'POST', url: '/api/v4/projects', token: p.ownerToken,
      payload: { name: 'in-group', namespace_id: group.json().id, initialize_with_readme: true },
    });
    assert.equal(project.statusCode, 201, project.body);
    const created = await t.request({
      method: 'POST', url: `/api/v4/projects/${project.json().id}/releases`, token: p.ownerToken,
      payload: { tag_name: 'g1', ref: project.json().default_branch ?? 'main' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const list = await t.request({ url: `/api/v4/groups/${group.json().id}/releases`, token: p.ownerToken });
    assert.equal(list.statusCode, 200, list.body);
    assert.deepEqual(list.json().map((r: { tag_name: string }) => r.tag_name), ['g1']);
    assert.ok(list.json()[0].assets);
    const simple = await t.request({ url: `/api/v4/groups/${group.json().id}/releases?simple=true`, token: p.ownerToken });
    assert.deepEqual(Object.keys(simple.json()[0]), ['name', 'tag_name', 'description', 'created_at', 'released_at', 'upcoming_release']);
  });
});
