/**
 * Every web_url-like link kiln hands out opens a page (issue 33, "done when"): the links are
 * taken from the API's own answers (projects, groups, users, branches, commits, pipelines,
 * releases and their assets, snippets and their raw files) and from the shapes the hooks, chat
 * messages and push refusals build (wiki pages, commit note anchors, tags, pipeline failures,
 * project members), then each is opened: a page (or the file, or the redirect) for the owner,
 * and for a stranger and an anonymous visitor of the private project the same 404 page a missing
 * path answers. The pages render user text escaped, and Markdown through the sanitising renderer.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { signedInBrowser, type Browser } from '../helpers/oauth.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { repositoryPath } from '../../src/domain/repositories/storage.ts';
import type { UserRow } from '../../src/db/types.ts';

const XSS = '<script>alert("x")</script><img src=x onerror=alert(1)>';
const CI = 'test:\n  script: [exit 1]\n';

interface Link { url: string; kind: 'page' | 'file' | 'redirect' | 'download' }

describe('every link kiln hands out opens a page', () => {
  let t: TestApp;
  let owner: UserRow;
  let token: string;
  let ownerBrowser: Browser;
  let strangerBrowser: Browser;
  let p: CiProject;
  let groupPath: string;
  let sha: string;
  const links: Link[] = [];

  const get = (url: string, b?: Browser) => t.request({ url, headers: b ? { cookie: b.cookie } : {} });
  const api = async (method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>, expected = method === 'POST' ? 201 : 200) => {
    const res = await t.request({ method, url: `/api/v4${url}`, token, ...(payload ? { payload } : {}) });
    assert.equal(res.statusCode, expected, `${method} ${url}: ${res.body}`);
    return res.json() as Record<string, any>;
  };
  const local = (url: string) => {
    assert.ok(url.startsWith(t.config.externalUrl), url);
    return url.slice(t.config.externalUrl.length);
  };
  const add = (url: string, kind: Link['kind'] = 'page') => links.push({ url: local(url), kind });
  /** The 404 page's body, without what differs by viewer (the sign-in link's return address). */
  const notFoundBody = (body: string) => body.replace(/return_to=[^"]*/g, '');

  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db, { username: 'link-owner' });
    token = await createToken(t.db, owner, { scopes: ['api'] });
    ownerBrowser = await signedInBrowser(t, owner);
    strangerBrowser = await signedInBrowser(t, await createUser(t.db, { username: 'link-stranger' }));

    const group = await api('POST', '/groups', { name: 'Linked Group', path: 'linked-group', visibility: 'private' });
    groupPath = group.full_path as string;
    const created = await api('POST', '/projects', { name: 'Linked', path: 'linked', namespace_id: group.id, visibility: 'private' });
    const row = await t.db.selectFrom('projects').selectAll().where('id', '=', created.id as number).executeTakeFirstOrThrow();
    p = { project: row, owner, ownerToken: token, fullPath: created.path_with_namespace as string,
      gitDir: repositoryPath(t.config.storages, row.repository_storage, row.disk_path) };
    sha = await pushFiles(t, p, { 'README.md': '# Linked\n', '.gitlab-ci.yml': CI }, { tag: 'v1.0', message: `Linked ${XSS}` });
    const id = p.project.id;

    const project = await api('GET', `/projects/${id}`);
    add(project.web_url);
    assert.ok(project.readme_url, 'the project names its README');
    add(project.readme_url);
    add(group.web_url);
    add((await api('GET', `/groups/${group.id}`)).web_url);
    add(`${group.web_url}/-/group_members`);
    add((await api('GET', '/user')).web_url);
    add((await api('GET', `/projects/${id}/repository/branches/main`)).web_url);
    add((await api('GET', `/projects/${id}/repository/commits/${sha}`)).web_url);
    add(`${project.web_url}/-/tags/v1.0`);
    add(`${project.web_url}/-/project_members`);

    const pipeline = await createPipeline(t, p);
    const pipelineUrl = (await api('GET', `/projects/${id}/pipelines/${pipeline.id}`)).web_url as string;
    add(pipelineUrl);
    add(`${pipelineUrl}/failures`);

    const release = await api('POST', `/projects/${id}/releases`, {
      tag_name: 'v1.0', name: 'First <b>release</b>', description: `Notes ${XSS}`,
      assets: { links: [{ name: 'binary', url: 'https://downloads.example.com/app', filepath: '/bin/app' }] },
    });
    add(release._links.self);
    add(release._links.edit_url);
    add(`${project.web_url}/-/releases`);
    add(`${t.config.externalUrl}${release.tag_path}`);
    add(`${t.config.externalUrl}${release.commit_path}`);
    add(release.assets.links[0].direct_asset_url, 'redirect');
    for (const source of release.assets.sources as { url: string }[]) add(source.url, 'download');

    await pushFiles(t, p, { 'second.txt': 'two\n' }, { message: 'Second' });
    add((await api('GET', `/projects/${id}/repository/compare?from=${sha}&to=main`)).web_url);

    const snippet = await api('POST', `/projects/${id}/snippets`, {
      title: `Snip ${XSS}`, file_name: 'snip.rb', content: `puts "${XSS}"`, visibility: 'private', description: `About ${XSS}`,
    });
    add(snippet.web_url);
    add(snippet.raw_url, 'file');
    add(snippet.files[0].raw_url, 'file');
    add(`${project.web_url}/-/snippets`);
    await api('POST', `/projects/${id}/snippets/${snippet.id}/notes`, { body: `Snippet note ${XSS}` });

    await api('POST', `/projects/${id}/wikis`, { title: 'home', content: `# Home\n\n${XSS}\n\n[a page](Sub/Page)` });
    await api('POST', `/projects/${id}/wikis`, { title: 'Sub/Page', content: 'A page below.', format: 'rdoc' });
    add(`${project.web_url}/-/wikis/home`);
    add(`${project.web_url}/-/wikis/Sub/Page`);
    add(`${project.web_url}/-/wikis/pages`);

    const environment = await api('POST', `/projects/${id}/environments`, { name: 'production', external_url: 'https://prod.example.com' });
    await api('POST', `/projects/${id}/deployments`, { environment: 'production', sha, ref: 'main', tag: false, status: 'success' });
    add(`${project.web_url}/-/environments`);
    add(`${project.web_url}/-/environments/${environment.id}`);

    await api('POST', `/projects/${id}/repository/commits/${sha}/comments`, { note: `A comment ${XSS}` });

    const upload = await t.request({
      method: 'PUT', url: `/api/v4/projects/${id}/packages/generic/tool/1.0.0/tool.bin`, token, payload: 'bytes',
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(upload.statusCode, 201, upload.body);
    const [pkg] = await api('GET', `/projects/${id}/packages`) as unknown as { _links: { web_path: string } }[];
    add(`${t.config.externalUrl}${pkg!._links.web_path}`);
    add(`${project.web_url}/-/packages`);
  });
  after(async () => { await t.close(); });

  it('opens each link for its owner: a page, the file, or the redirect to the asset', async () => {
    assert.ok(links.length >= 30, `links: ${links.length}`);
    for (const link of links) {
      const res = await get(link.url, ownerBrowser);
      if (link.kind === 'redirect') {
        assert.equal(res.statusCode, 302, link.url);
        assert.equal(res.headers.location, 'https://downloads.example.com/app');
        continue;
      }
      assert.equal(res.statusCode, 200, `${link.url}: ${res.body.slice(0, 300)}`);
      if (link.kind === 'download') {
        assert.match(String(res.headers['content-disposition']), /^attachment; filename="linked-v1\.0-[0-9a-f]{40}\./, link.url);
      } else if (link.kind === 'file') {
        assert.match(String(res.headers['content-type']), /^text\/plain/, link.url);
        assert.match(String(res.headers['content-security-policy']), /sandbox/);
        assert.equal(res.body, `puts "${XSS}"`);
      } else {
        assert.match(String(res.headers['content-type']), /^text\/html/, link.url);
        assert.doesNotMatch(res.body, /<script>alert|<img[^>]*onerror/, `${link.url} escapes user text`);
      }
    }
  });

  it('answers the same 404 page to a stranger and to an anonymous visitor as to a path that names nothing', async () => {
    const missing = notFoundBody((await get(`/${groupPath}/no-such-project/-/snippets/1`, strangerBrowser)).body);
    const missingAnonymous = notFoundBody((await get(`/${groupPath}/no-such-project/-/snippets/1`)).body);
    assert.match(missing, /Page Not Found/);
    for (const link of links) {
      if (link.url === `/${owner.username}`) continue;
      for (const [viewer, expected] of [[strangerBrowser, missing], [undefined, missingAnonymous]] as const) {
        const res = await get(link.url, viewer);
        assert.equal(res.statusCode, 404, `${link.url} for ${viewer ? 'a stranger' : 'anonymous'}`);
        assert.equal(notFoundBody(res.body), expected, link.url);
        assert.doesNotMatch(notFoundBody(res.body), /Linked|linked-group/, link.url);
      }
    }
  });

  it('renders Markdown sanitised and other text escaped on the linked pages', async () => {
    const base = `/${p.fullPath}`;
    const wiki = await get(`${base}/-/wikis/home`, ownerBrowser);
    assert.match(wiki.body, /<h1[^>]*>[\s\S]*Home/);
    assert.match(wiki.body, /id="wiki-content"/);
    const rdoc = await get(`${base}/-/wikis/Sub/Page`, ownerBrowser);
    assert.match(rdoc.body, /<pre class="plain-readme" id="wiki-content">A page below.<\/pre>/);
    const pages = await get(`${base}/-/wikis/pages`, ownerBrowser);
    assert.match(pages.body, new RegExp(`href="${base}/-/wikis/Sub/Page"`));
    const release = await get(`${base}/-/releases/v1.0`, ownerBrowser);
    assert.match(release.body, /First &lt;b&gt;release&lt;\/b&gt;/);
    assert.match(release.body, /href="https:\/\/downloads.example.com\/app"/);
    const snippets = await get(`${base}/-/snippets`, ownerBrowser);
    assert.match(snippets.body, /Snip &lt;script&gt;/);
    const snippetRow = await t.db.selectFrom('snippets').select('id').where('project_id', '=', p.project.id).executeTakeFirstOrThrow();
    const snippetNote = await t.db.selectFrom('notes').select('id').where('noteable_type', '=', 'Snippet')
      .where('noteable_id', '=', snippetRow.id).executeTakeFirstOrThrow();
    const snippet = await get(`${base}/-/snippets/${snippetRow.id}`, ownerBrowser);
    assert.match(snippet.body, new RegExp(`id="note_${snippetNote.id}"`), 'the snippet note hook\'s anchor is on the snippet page');
    assert.match(snippet.body, /Snippet note/);
    assert.match(snippet.body, /<pre|<table|class="code/);
    const commit = await get(`${base}/-/commit/${sha}`, ownerBrowser);
    const note = await t.db.selectFrom('notes').select('id').where('commit_id', '=', sha).executeTakeFirstOrThrow();
    assert.match(commit.body, new RegExp(`id="note_${note.id}"`), 'the note hook\'s anchor is on the commit page');
    assert.match(commit.body, /A comment/);
    const environment = await get(`${base}/-/environments`, ownerBrowser);
    assert.match(environment.body, /href="https:\/\/prod.example.com"/);
    assert.match(environment.body, new RegExp(`href="${base}/-/commit/${sha}"`));
    const members = await get(`/groups/${groupPath}/-/group_members`, ownerBrowser);
    assert.match(members.body, /@link-owner/);
    assert.match(members.body, /Owner/);
  });

  it('edits a release from its edit_url as PUT …/releases/:tag_name does, for those who may', async () => {
    const url = `/${p.fullPath}/-/releases/v1.0/edit`;
    const form = await get(url, ownerBrowser);
    assert.match(form.body, /id="release-form"/);
    const forged = await t.request({
      method: 'POST', url, headers: { cookie: ownerBrowser.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=forged',
    });
    assert.notEqual(forged.statusCode, 303);
    const post = (fields: Record<string, string>, b: Browser) => t.request({
      method: 'POST', url, headers: { cookie: b.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ authenticity_token: b.csrf, ...fields }).toString(),
    });
    assert.equal((await post({ name: 'x' }, strangerBrowser)).statusCode, 404);
    assert.equal((await post({ name: 'x', released_at: 'not a date' }, ownerBrowser)).statusCode, 400);
    const saved = await post({ name: 'Renamed', description: 'New notes', released_at: '2026-01-02T03:04:05Z' }, ownerBrowser);
    assert.equal(saved.statusCode, 303);
    const release = await api('GET', `/projects/${p.project.id}/releases/v1.0`);
    assert.equal(release.name, 'Renamed');
    assert.equal(release.description, 'New notes');
    assert.equal(Date.parse(release.released_at), Date.parse('2026-01-02T03:04:05Z'));
  });

  it('redirects the wiki root to its home page and shows an empty wiki\'s home', async () => {
    const root = await get(`/${p.fullPath}/-/wikis`, ownerBrowser);
    assert.equal(root.statusCode, 302);
    assert.equal(root.headers.location, `/${p.fullPath}/-/wikis/home`);
    const other = await createCiProject(t, { owner, visibility: 'private' });
    const empty = await get(`/${other.fullPath}/-/wikis/home`, ownerBrowser);
    assert.equal(empty.statusCode, 200);
    assert.match(empty.body, /id="wiki-empty"/);
    assert.equal((await get(`/${other.fullPath}/-/wikis/missing`, ownerBrowser)).statusCode, 404);
  });

  it('keeps a public project\'s private snippet, and a personal snippet, to those who may read them', async () => {
    const open = await createCiProject(t, { owner, visibility: 'public' });
    const hidden = await api('POST', `/projects/${open.project.id}/snippets`, {
      title: 'Hidden', file_name: 'a.txt', content: 'secret', visibility: 'private',
    });
    const shown = await api('POST', `/projects/${open.project.id}/snippets`, {
      title: 'Shown', file_name: 'b.txt', content: 'public text', visibility: 'public',
    });
    assert.equal((await get(local(hidden.web_url), ownerBrowser)).statusCode, 200);
    assert.equal((await get(local(hidden.web_url), strangerBrowser)).statusCode, 404);
    assert.equal((await get(local(hidden.raw_url))).statusCode, 404);
    assert.equal((await get(local(shown.web_url))).statusCode, 200);
    const list = await get(`/${open.fullPath}/-/snippets`, strangerBrowser);
    assert.match(list.body, />Shown</);
    assert.doesNotMatch(list.body, />Hidden</);

    const personal = await api('POST', '/snippets', { title: 'Mine', file_name: 'mine.md', content: XSS, visibility: 'private' });
    const publicOne = await api('POST', '/snippets', { title: 'Ours', file_name: 'ours.md', content: 'hello', visibility: 'public' });
    for (const url of [personal.web_url, personal.raw_url, personal.files[0].raw_url]) {
      assert.equal((await get(local(url), ownerBrowser)).statusCode, 200, url);
      assert.equal((await get(local(url), strangerBrowser)).statusCode, 404, url);
      assert.equal((await get(local(url))).statusCode, 404, url);
    }
    const page = await get(local(personal.web_url), ownerBrowser);
    assert.doesNotMatch(page.body, /<script>alert|<img[^>]*onerror/);
    assert.equal((await get(local(publicOne.web_url))).statusCode, 200);
    assert.equal((await get('/-/snippets/99999999', ownerBrowser)).statusCode, 404);
    assert.equal((await get('/-/snippets/1x', ownerBrowser)).statusCode, 404);
    assert.equal((await get(`${local(personal.web_url)}/raw/main/nothing.md`, ownerBrowser)).statusCode, 404);
  });

  it('answers 404 for a release, tag, environment or snippet the project does not hold', async () => {
    const base = `/${p.fullPath}`;
    for (const url of [
      `${base}/-/releases/v9`, `${base}/-/releases/v1.0/downloads/nothing`, `${base}/-/releases/v1.0/evidences/99.json`,
      `${base}/-/tags/v9`, `${base}/-/environments/99999`, `${base}/-/environments/x`, `${base}/-/snippets/99999`,
      `${base}/-/project_members/x`, `/groups/${groupPath}/-/nothing`, '/groups/no-such-group', `/groups/${groupPath}/-/group_members/x`,
    ]) {
      const res = await get(url, ownerBrowser);
      assert.equal(res.statusCode, 404, url);
      assert.match(String(res.headers['content-type']), /^text\/html/, url);
    }
  });
});
