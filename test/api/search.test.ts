/**
 * The search API at its three levels (instance, group, project): each scope kiln serves, what a
 * viewer may see, the Elasticsearch-only scopes' 400, parameter errors, the rate limit, and the
 * repository scopes over real commits (blobs by content and by name with their filters, commits
 * by message), including a search text that starts with `-`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';

describe('search', () => {
  let t: TestApp;
  let alice: UserRow;
  let aliceToken: string;
  let bob: UserRow;
  let bobToken: string;
  let groupId: number;
  let subgroupId: number;
  let projectId: number;
  let privateProjectId: number;
  let commitSha: string;

  const get = (url: string, token: string | undefined = aliceToken) => t.request({ method: 'GET', url: `/api/v4${url}`, token });
  const q = encodeURIComponent;

  async function ok(url: string, token?: string) {
    const res = await get(url, token);
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    return { body: res.json() as Record<string, unknown>[], res };
  }

  async function post(url: string, token: string, payload: Record<string, unknown>) {
    const res = await t.request({ method: 'POST', url: `/api/v4${url}`, token, payload });
    assert.equal(res.statusCode, 201, `${url}: ${res.body}`);
    return res.json() as Record<string, unknown>;
  }

  before(async () => {
    t = await startTestApp();
    // Searches are rate limited per user (30 a minute by default): off until the rate limit test.
    const settings = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { search_rate_limit: 0 } });
    assert.equal(settings.statusCode, 200, settings.body);
    alice = await createUser(t.db, { name: 'Alice Quartz', username: 'alicequartz' });
    aliceToken = await createToken(t.db, alice);
    bob = await createUser(t.db, { name: 'Bob Outsider', username: 'bobquartzless' });
    bobToken = await createToken(t.db, bob);

    groupId = (await post('/groups', aliceToken, { name: 'Zircon group', path: 'zircon', visibility: 'public' })).id as number;
    subgroupId = (await post('/groups', aliceToken, { name: 'Zircon sub', path: 'zircon-sub', parent_id: groupId, visibility: 'public' })).id as number;
    projectId = (await post('/projects', aliceToken, {
      name: 'Zircon tools', path: 'zircon-tools', namespace_id: subgroupId, visibility: 'public', description: 'tools for gems',
    })).id as number;
    privateProjectId = (await post('/projects', aliceToken, {
      name: 'Zircon secrets', path: 'zircon-secrets', namespace_id: groupId, visibility: 'private',
    })).id as number;

    const commit = await post(`/projects/${projectId}/repository/commits`, aliceToken, {
      branch: 'main', commit_message: 'Add the polishing guide\n\nExplains how to polish zircon.',
      actions: [
        { action: 'create', file_path: 'README.md', content: 'line one\nline two\nline three\nPolish the gem gently\nline five\nline six\nline seven\n' },
        { action: 'create', file_path: 'lib/polish.rb', content: 'def polish\n  "--force shine"\nend\n' },
        { action: 'create', file_path: 'docs/gemstones.txt', content: 'nothing to see\n' },
        { action: 'create', file_path: 'images/logo.png', encoding: 'base64', content: Buffer.from('\x89PNG\0polish\0').toString('base64') },
      ],
    });
    commitSha = commit.id as string;
    await post(`/projects/${projectId}/repository/commits`, aliceToken, {
      branch: 'feature', start_branch: 'main', commit_message: 'Sapphire support',
      actions: [{ action: 'create', file_path: 'sapphire.md', content: 'sapphire facets\n' }],
    });

    await post('/snippets', aliceToken, { title: 'Zircon cutting notes', file_name: 'cut.md', content: 'x', visibility: 'public' });
    await post('/snippets', aliceToken, { title: 'Zircon private notes', file_name: 'priv.md', content: 'x', visibility: 'private' });
    await post('/snippets', bobToken, { title: 'Other', file_name: 'zircon-list.txt', content: 'x', visibility: 'internal' });
  });
  after(async () => { await t.close(); });

  describe('parameters', () => {
    it('needs a signed-in user', async () => {
      const res = await t.request({ method: 'GET', url: '/api/v4/search?scope=projects&search=zircon' });
      assert.equal(res.statusCode, 401);
    });

    it('answers 400 without search or with a scope the level does not offer', async () => {
      const missing = await get('/search?scope=projects');
      assert.equal(missing.statusCode, 400);
      assert.deepEqual(missing.json(), { message: '400 Bad request - "search" not given' });
      const noScope = await get('/search?search=zircon');
      assert.equal(noScope.statusCode, 400);
      assert.deepEqual(noScope.json(), { message: '400 Bad request - "scope" not given' });
      for (const url of ['/search?scope=nope&search=x', `/groups/${groupId}/search?scope=snippet_titles&search=x`,
        `/projects/${projectId}/search?scope=projects&search=x`]) {
        const res = await get(url);
        assert.equal(res.statusCode, 400, url);
        assert.deepEqual(res.json(), { error: 'scope does not have a valid value' }, url);
      }
    });

    it('refuses the Elasticsearch-only scopes at the instance and group levels', async () => {
      for (const scope of ['blobs', 'commits', 'wiki_blobs', 'notes']) {
        for (const url of [`/search?scope=${scope}&search=zircon`, `/groups/${groupId}/search?scope=${scope}&search=zircon`]) {
          const res = await get(url);
          assert.equal(res.statusCode, 400, url);
          assert.deepEqual(res.json(), { message: { error: 'Scope not supported without Elasticsearch!' } }, url);
        }
      }
    });

    it('bounds the search text: its length and its number of terms', async () => {
      const long = await get(`/search?scope=projects&search=${'a'.repeat(4097)}`);
      assert.equal(long.statusCode, 400);
      assert.deepEqual(long.json(), { message: { search: ['is too long (maximum is 4096 characters)'] } });
      const many = await get(`/search?scope=projects&search=${q(Array.from({ length: 65 }, (_, i) => `t${i}`).join(' '))}`);
      assert.equal(many.statusCode, 400);
      assert.deepEqual(many.json(), { message: { search: ['has too many terms (maximum is 64)'] } });
    });

    it('answers 404 for a group or project the viewer may not see', async () => {
      assert.equal((await get(`/projects/${privateProjectId}/search?scope=commits&search=x`, bobToken)).statusCode, 404);
      assert.equal((await get('/groups/999999/search?scope=projects&search=x')).statusCode, 404);
    });
  });

  describe('instance level', () => {
    it('projects: the projects the viewer may see whose name, path or description matches', async () => {
      const mine = await ok('/search?scope=projects&search=ZIRCON');
      assert.deepEqual(mine.body.map((p) => p.id), [privateProjectId, projectId]);
      assert.equal(mine.res.headers['x-total'], '2');
      assert.equal(mine.res.headers['x-page'], '1');
      // BasicProjectDetails: no links, permissions or settings.
      assert.equal(mine.body[1].path_with_namespace, 'zircon/zircon-sub/zircon-tools');
      assert.ok(!('_links' in mine.body[1]) && !('permissions' in mine.body[1]) && !('visibility' in mine.body[1]));
      const byDescription = await ok('/search?scope=projects&search=gems');
      assert.deepEqual(byDescription.body.map((p) => p.id), [projectId]);
      const theirs = await ok('/search?scope=projects&search=zircon', bobToken);
      assert.deepEqual(theirs.body.map((p) => p.id), [projectId]);
    });

    it('paginates with the offset headers', async () => {
      const page = await ok('/search?scope=projects&search=zircon&per_page=1&page=2');
      assert.deepEqual(page.body.map((p) => p.id), [projectId]);
      assert.equal(page.res.headers['x-total'], '2');
      assert.equal(page.res.headers['x-prev-page'], '1');
      assert.match(String(page.res.headers.link), /rel="first"/);
    });

    it('snippet_titles: personal snippets the viewer may see by title, description or file name', async () => {
      const mine = await ok('/search?scope=snippet_titles&search=zircon');
      assert.deepEqual(mine.body.map((s) => s.title), ['Other', 'Zircon private notes', 'Zircon cutting notes']);
      assert.equal((mine.body[0].author as { id: number }).id, bob.id);
      assert.equal(mine.body[0].file_name, 'zircon-list.txt');
      const theirs = await ok('/search?scope=snippet_titles&search=zircon', bobToken);
      assert.deepEqual(theirs.body.map((s) => s.title), ['Other', 'Zircon cutting notes']);
    });

    it('users: users whose name or username matches, as UserBasic', async () => {
      const found = await ok('/search?scope=users&search=quartz');
      assert.deepEqual(found.body.map((u) => u.id), [bob.id, alice.id]);
      assert.deepEqual(Object.keys(found.body[0]).sort(), ['avatar_url', 'id', 'name', 'state', 'username', 'web_url']);
      assert.equal(found.body[1].web_url, 'http://kiln.test/alicequartz');
    });

    it('merge_requests: an empty page when none matches', async () => {
      const found = await ok('/search?scope=merge_requests&search=zircon&state=merged');
      assert.deepEqual(found.body, []);
      assert.equal(found.res.headers['x-total'], '0');
    });
  });

  describe('group level', () => {
    it('projects: the group\'s and its sub-groups\' projects the viewer may see', async () => {
      assert.deepEqual((await ok(`/groups/${groupId}/search?scope=projects&search=zircon`)).body.map((p) => p.id), [privateProjectId, projectId]);
      assert.deepEqual((await ok(`/groups/${subgroupId}/-/search?scope=projects&search=zircon`)).body.map((p) => p.id), [projectId]);
      assert.deepEqual((await ok(`/groups/zircon/search?scope=projects&search=zircon`, bobToken)).body.map((p) => p.id), [projectId]);
    });

    it('users: members of the group\'s hierarchy only', async () => {
      assert.deepEqual((await ok(`/groups/${groupId}/search?scope=users&search=quartz`)).body.map((u) => u.id), [alice.id]);
      assert.deepEqual((await ok(`/groups/${subgroupId}/search?scope=users&search=quartz`)).body.map((u) => u.id), [alice.id]);
    });

    it('merge_requests: an empty page when none matches', async () => {
      assert.deepEqual((await ok(`/groups/${groupId}/search?scope=merge_requests&search=x`)).body, []);
    });
  });

  describe('project level', () => {
    it('users: the project\'s members, direct or through its groups', async () => {
      assert.deepEqual((await ok(`/projects/${projectId}/search?scope=users&search=quartz`)).body.map((u) => u.id), [alice.id]);
      assert.deepEqual((await ok(`/projects/${projectId}/search?scope=users&search=outsider`)).body, []);
    });

    it('commits: messages matching on the default branch or a ref, as CommitDetail', async () => {
      const found = await ok(`/projects/${projectId}/search?scope=commits&search=POLISH%20ZIRCON`);
      assert.equal(found.body.length, 1);
      const c = found.body[0];
      assert.equal(c.id, commitSha);
      assert.equal(c.title, 'Add the polishing guide');
      assert.equal(c.project_id, projectId);
      assert.equal(c.last_pipeline, null);
      assert.equal(c.status, null);
      assert.equal(found.res.headers['x-total'], '1');
      assert.deepEqual((await ok(`/projects/${projectId}/-/search?scope=commits&search=sapphire`)).body, []);
      const onRef = await ok(`/projects/${projectId}/search?scope=commits&search=sapphire&ref=feature`);
      assert.deepEqual(onRef.body.map((x) => x.title), ['Sapphire support']);
      assert.deepEqual((await ok(`/projects/${projectId}/search?scope=commits&search=x&ref=no-such-branch`)).body, []);
    });

    it('blobs: matching lines with two lines around them, and files found by name', async () => {
      const found = await ok(`/projects/zircon%2Fzircon-sub%2Fzircon-tools/search?scope=blobs&search=polish`);
      assert.deepEqual(found.body, [
        {
          basename: 'README', data: 'line two\nline three\nPolish the gem gently\nline five\nline six\n', path: 'README.md',
          filename: 'README.md', id: null, ref: 'main', startline: 2, project_id: projectId,
        },
        {
          basename: 'lib/polish', data: 'def polish\n  "--force shine"\nend\n', path: 'lib/polish.rb',
          filename: 'lib/polish.rb', id: null, ref: 'main', startline: 1, project_id: projectId,
        },
      ]);
      const byName = await ok(`/projects/${projectId}/search?scope=blobs&search=gemstones`);
      assert.deepEqual(byName.body.map((b) => [b.path, b.startline, b.data]), [['docs/gemstones.txt', 1, 'nothing to see\n']]);
      // A binary file is never a content match, and found by its name it shows no data.
      const binary = await ok(`/projects/${projectId}/search?scope=blobs&search=logo`);
      assert.deepEqual(binary.body.map((b) => [b.path, b.data]), [['images/logo.png', '']]);
      const onRef = await ok(`/projects/${projectId}/search?scope=blobs&search=facets&ref=feature`);
      assert.deepEqual(onRef.body.map((b) => [b.path, b.ref]), [['sapphire.md', 'feature']]);
    });

    it('blobs: the filename:, path: and extension: filters', async () => {
      const paths = async (search: string) => (await ok(`/projects/${projectId}/search?scope=blobs&search=${q(search)}`)).body.map((b) => b.path);
      assert.deepEqual(await paths('polish extension:rb'), ['lib/polish.rb']);
      assert.deepEqual(await paths('polish filename:README.md'), ['README.md']);
      assert.deepEqual(await paths('polish path:lib/'), ['lib/polish.rb']);
      assert.deepEqual(await paths('polish filename:*.MD'), ['README.md']);
      assert.deepEqual(await paths('extension:rb'), []);
    });

    it('a search text starting with "-" is searched for, never read as an option', async () => {
      const blobs = await ok(`/projects/${projectId}/search?scope=blobs&search=${q('--force')}`);
      assert.deepEqual(blobs.body.map((b) => b.path), ['lib/polish.rb']);
      assert.deepEqual((await ok(`/projects/${projectId}/search?scope=blobs&search=${q('-v')}`)).body, []);
      assert.deepEqual((await ok(`/projects/${projectId}/search?scope=commits&search=${q('--all')}`)).body, []);
      assert.deepEqual((await ok(`/projects/${projectId}/search?scope=commits&search=${q('-i')}`)).body, []);
      // Each line of a text with a line break is not a pattern of its own: no single line holds the text.
      assert.deepEqual((await ok(`/projects/${projectId}/search?scope=blobs&search=${q('polish\nnothing')}`)).body, []);
      assert.deepEqual((await ok(`/projects/${projectId}/search?scope=commits&search=${q('polish\nsapphire')}`)).body, []);
    });

    it('answers no repository results to a viewer who may not read the code (a guest of a private project)', async () => {
      await post(`/projects/${privateProjectId}/repository/commits`, aliceToken, {
        branch: 'main', commit_message: 'Secret polish',
        actions: [{ action: 'create', file_path: 'secret.txt', content: 'polish in secret\n' }],
      });
      await post(`/projects/${privateProjectId}/members`, aliceToken, { user_id: bob.id, access_level: 10 });
      assert.equal((await ok(`/projects/${privateProjectId}/search?scope=blobs&search=polish`)).body.length, 1);
      assert.equal((await ok(`/projects/${privateProjectId}/search?scope=commits&search=polish`)).body.length, 1);
      assert.deepEqual((await ok(`/projects/${privateProjectId}/search?scope=blobs&search=polish`, bobToken)).body, []);
      assert.deepEqual((await ok(`/projects/${privateProjectId}/search?scope=commits&search=polish`, bobToken)).body, []);
      // A guest sees the project's members.
      assert.deepEqual((await ok(`/projects/${privateProjectId}/search?scope=users&search=outsider`, bobToken)).body.map((u) => u.id), [bob.id]);
    });

    it('wiki_blobs and merge_requests: empty pages (a wiki never written, no merge requests yet)', async () => {
      assert.deepEqual((await ok(`/projects/${projectId}/search?scope=wiki_blobs&search=polish`)).body, []);
      assert.deepEqual((await ok(`/projects/${projectId}/search?scope=merge_requests&search=polish`)).body, []);
    });
  });

  describe('rate limit', () => {
    it('answers 429 past search_rate_limit searches a minute, before checking parameters', async () => {
      const carol = await createUser(t.db);
      const carolToken = await createToken(t.db, carol);
      const settings = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { search_rate_limit: 2 } });
      assert.equal(settings.statusCode, 200, settings.body);
      assert.equal((await get('/search?scope=projects&search=zircon', carolToken)).statusCode, 200);
      assert.equal((await get(`/projects/${projectId}/search?scope=users&search=zircon`, carolToken)).statusCode, 200);
      const limited = await get('/search?scope=projects&search=zircon', carolToken);
      assert.equal(limited.statusCode, 429);
      assert.deepEqual(limited.json(), { message: { error: 'This endpoint has been requested too many times. Try again later.' } });
      assert.equal((await get('/search?scope=nope', carolToken)).statusCode, 429);
      // Counted per user: another user still searches.
      assert.equal((await get('/search?scope=projects&search=zircon', bobToken)).statusCode, 200);
    });
  });

  describe('issues, milestones and notes', () => {
    let openIssue: Record<string, unknown>;
    let secretIssue: Record<string, unknown>;
    // Bob became a guest of the private project above; Carol is a member of nothing.
    let carolToken: string;
    before(async () => {
      carolToken = await createToken(t.db, await createUser(t.db, { username: 'carolnone' }));
      const settings = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { search_rate_limit: 0 } });
      assert.equal(settings.statusCode, 200, settings.body);
      openIssue = await post(`/projects/${projectId}/issues`, aliceToken, { title: 'Zircon crack on the table', description: 'a flaw' });
      secretIssue = await post(`/projects/${projectId}/issues`, aliceToken, { title: 'Secret crack', confidential: true });
      await post(`/projects/${privateProjectId}/issues`, aliceToken, { title: 'Private crack' });
      await post(`/projects/${projectId}/milestones`, aliceToken, { title: 'Crack release' });
      await post(`/projects/${privateProjectId}/milestones`, aliceToken, { title: 'Hidden crack release' });
      await post(`/groups/${groupId}/milestones`, aliceToken, { title: 'Group crack plan' });
      await post(`/projects/${projectId}/issues/${openIssue.iid}/notes`, aliceToken, { body: 'a crackling comment' });
      await post(`/projects/${projectId}/issues/${secretIssue.iid}/notes`, aliceToken, { body: 'a secret crackling comment' });
    });

    it('issues: what the viewer may see at every level, confidential ones to those who may read them', async () => {
      const titles = (body: Record<string, unknown>[]) => body.map((i) => i.title).sort();
      assert.deepEqual(titles((await ok('/search?scope=issues&search=crack', carolToken)).body), ['Zircon crack on the table']);
      assert.deepEqual(titles((await ok('/search?scope=issues&search=crack')).body), ['Private crack', 'Secret crack', 'Zircon crack on the table']);
      assert.deepEqual(titles((await ok(`/groups/${subgroupId}/search?scope=issues&search=crack`)).body), ['Secret crack', 'Zircon crack on the table']);
      const inProject = await ok(`/projects/${projectId}/search?scope=issues&search=FLAW`, carolToken);
      assert.deepEqual(inProject.body.map((i) => i.iid), [openIssue.iid]);
      assert.equal(inProject.body[0].subscribed, undefined, 'IssueBasic');
      assert.deepEqual((await ok(`/projects/${projectId}/search?scope=issues&search=crack&confidential=true`)).body.map((i) => i.iid),
        [secretIssue.iid]);
      assert.deepEqual((await ok(`/projects/${projectId}/search?scope=issues&search=crack&state=closed`)).body, []);
    });

    it('milestones: of the projects and groups the viewer may read', async () => {
      const titles = (body: Record<string, unknown>[]) => body.map((m) => m.title).sort();
      assert.deepEqual(titles((await ok('/search?scope=milestones&search=crack', carolToken)).body), ['Crack release']);
      assert.deepEqual(titles((await ok('/search?scope=milestones&search=crack')).body), ['Crack release', 'Group crack plan', 'Hidden crack release']);
      assert.deepEqual(titles((await ok(`/groups/${groupId}/search?scope=milestones&search=crack`, carolToken)).body), ['Crack release', 'Group crack plan']);
      const inProject = (await ok(`/projects/${projectId}/search?scope=milestones&search=release`, carolToken)).body;
      assert.deepEqual(titles(inProject), ['Crack release']);
      assert.match(String(inProject[0].web_url), /\/zircon\/zircon-sub\/zircon-tools\/-\/milestones\/1$/);
    });

    it('notes: comments on what the viewer may read, never on a confidential issue hidden from them', async () => {
      const bodies = (body: Record<string, unknown>[]) => body.map((n) => n.body).sort();
      assert.deepEqual(bodies((await ok(`/projects/${projectId}/search?scope=notes&search=crackling`, carolToken)).body), ['a crackling comment']);
      const all = (await ok(`/projects/${projectId}/search?scope=notes&search=crackling`)).body;
      assert.deepEqual(bodies(all), ['a crackling comment', 'a secret crackling comment']);
      assert.equal(all.find((n) => n.body === 'a crackling comment')!.noteable_iid, openIssue.iid);
      const refused = await get(`/search?scope=notes&search=crackling`);
      assert.deepEqual([refused.statusCode, refused.json()], [400, { message: { error: 'Scope not supported without Elasticsearch!' } }]);
    });
  });
});
