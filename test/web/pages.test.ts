/**
 * The web interface's foundation at the HTTP boundary (issue 33): the frame and its static
 * stylesheet, the strict policy, the 404 page a private project answers to everyone who may not
 * see it, paths that stay the API's, git's and the badges', old project paths, and the pages
 * `/`, /explore/projects and /explore/groups.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createUser } from '../helpers/factories.ts';
import { signedInBrowser, type Browser } from '../helpers/oauth.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import type { UserRow } from '../../src/db/types.ts';

describe('web interface: frame, paths and permissions', () => {
  let t: TestApp;
  let owner: UserRow;
  let stranger: UserRow;
  let ownerBrowser: Browser;
  let strangerBrowser: Browser;
  let secret: CiProject;
  let open: CiProject;

  const get = (url: string, b?: Browser) => t.request({ url, headers: b ? { cookie: b.cookie } : {} });

  before(async () => {
    t = await startTestApp();
    owner = await createUser(t.db, { username: 'page-owner' });
    stranger = await createUser(t.db, { username: 'page-stranger' });
    ownerBrowser = await signedInBrowser(t, owner);
    strangerBrowser = await signedInBrowser(t, stranger);
    secret = await createCiProject(t, { owner, name: 'hidden-things', visibility: 'private' });
    open = await createCiProject(t, { owner, name: 'open-things', visibility: 'public' });
    await pushFiles(t, open, { 'README.md': '# Open things\n', '.gitlab-ci.yml': 'test:\n  script: echo hi\n' });
    await pushFiles(t, secret, { 'README.md': '# Hidden\n', '.gitlab-ci.yml': 'test:\n  script: echo hi\n' });
    await createPipeline(t, secret);
  });
  after(async () => { await t.close(); });

  it('serves the stylesheet under a hashed name with a long cache, linked from every page', async () => {
    const page = await get('/explore/projects');
    assert.equal(page.statusCode, 200);
    const href = /<link rel="stylesheet" href="(\/-\/assets\/kiln-[0-9a-f]{16}\.css)">/.exec(page.body)?.[1];
    assert.ok(href, 'the page links the stylesheet');
    const css = await get(href);
    assert.equal(css.statusCode, 200);
    assert.match(String(css.headers['content-type']), /^text\/css/);
    assert.equal(css.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.match(css.body, /prefers-color-scheme:dark/);
    assert.equal((await get('/-/assets/kiln-0000000000000000.css')).statusCode, 404);
  });

  it('sends pages under a policy without inline script or style, out of frames and caches', async () => {
    const res = await get('/explore/projects');
    const csp = String(res.headers['content-security-policy']);
    assert.match(csp, /script-src 'self'/);
    assert.match(csp, /style-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.doesNotMatch(res.body, /<script>|<style>| style="/);
  });

  it('shows the top bar: a sign-in link signed out, the user menu with a CSRF-guarded sign-out signed in', async () => {
    const anonymous = await get('/explore/projects');
    assert.match(anonymous.body, /id="sign-in-link"/);
    const signed = await get('/explore/projects', ownerBrowser);
    assert.match(signed.body, /id="user-menu">page-owner</);
    assert.ok(signed.body.includes(`name="authenticity_token" value="${ownerBrowser.csrf}"`));
  });

  it('answers the same 404 page for a private project to strangers, signed in or not, and for nothing at all', async () => {
    const bodies: string[] = [];
    for (const [url, b] of [
      [`/${secret.fullPath}`, undefined], [`/${secret.fullPath}`, strangerBrowser],
      [`/${secret.fullPath}/-/tree/main`, strangerBrowser], ['/page-owner/no-such-project', strangerBrowser],
    ] as const) {
      const res = await get(url, b);
      assert.equal(res.statusCode, 404, url);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      bodies.push(res.body.replace(/return_to=[^"]*/, '').replace(/<details[\s\S]*<\/details>|<a href="\/users\/sign_in"[^>]*>Sign in<\/a>/, ''));
    }
    assert.match(bodies[0]!, /Page Not Found/);
    assert.equal(new Set(bodies.slice(1)).size, 1, 'a private project and a missing one answer alike');
    assert.doesNotMatch(bodies.join(''), /hidden-things/);
  });

  it('leaves the API, git, badges and unknown asset paths to their own answers', async () => {
    const api = await get('/api/v4/no-such-resource');
    assert.equal(api.statusCode, 404);
    assert.deepEqual(api.json(), { error: '404 Not Found' });
    const git = await t.request({ url: `/${open.fullPath}.git/info/refs?service=git-upload-pack` });
    assert.equal(git.statusCode, 200);
    assert.match(String(git.headers['content-type']), /git-upload-pack-advertisement/);
    const badge = await get(`/${open.fullPath}/badges/main/pipeline.svg`);
    assert.match(String(badge.headers['content-type']), /^image\/svg\+xml/);
    const oauth = await get('/oauth/nothing-here');
    assert.deepEqual(oauth.json(), { error: '404 Not Found' });
  });

  it('sends `<project>.git` and an old path of a moved project to the project of now', async () => {
    const git = await get(`/${open.fullPath}.git`);
    assert.equal(git.statusCode, 302);
    assert.equal(git.headers.location, `/${open.fullPath}`);
    const moving = await createCiProject(t, { owner, name: 'moving-things', visibility: 'public' });
    const renamed = await t.request({
      method: 'PUT', url: `/api/v4/projects/${moving.project.id}`, token: moving.ownerToken, payload: { path: 'moved-things' },
    });
    assert.equal(renamed.statusCode, 200, renamed.body);
    const old = await get(`/${moving.fullPath}?x=1`);
    assert.equal(old.statusCode, 302);
    assert.equal(old.headers.location, `/${owner.username}/moved-things?x=1`);
    // Another letter case is the same project, addressed as it is spelled.
    const upper = await get(`/${owner.username.toUpperCase()}/moved-things`);
    assert.equal(upper.statusCode, 302);
    assert.equal(upper.headers.location, `/${owner.username}/moved-things`);
  });

  it('/ signed out: the public projects and a sign-in link; signed in: your projects and recent pipelines', async () => {
    const anonymous = await get('/');
    assert.equal(anonymous.statusCode, 200);
    assert.match(anonymous.body, /Public projects/);
    assert.match(anonymous.body, new RegExp(`href="/${open.fullPath}"`));
    assert.doesNotMatch(anonymous.body, /hidden-things/);
    assert.match(anonymous.body, /href="\/users\/sign_in"/);

    const mine = await get('/', ownerBrowser);
    assert.match(mine.body, /Your projects/);
    assert.match(mine.body, new RegExp(`href="/${secret.fullPath}"`));
    assert.match(mine.body, /<table id="pipelines">/);
    assert.match(mine.body, /status-(pending|created|running)/);

    const theirs = await get('/', strangerBrowser);
    assert.doesNotMatch(theirs.body, /hidden-things/);
    assert.match(theirs.body, /No pipelines yet/);
  });

  it('/explore/projects and /explore/groups list what the API lists for the viewer, filtered by name', async () => {
    const group = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'Pub (group) café', path: 'pub-group', visibility: 'public' } });
    assert.equal(group.statusCode, 201, group.body);
    const priv = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'Private group', path: 'priv-group', visibility: 'private' } });
    assert.equal(priv.statusCode, 201, priv.body);

    const projects = await get('/explore/projects', strangerBrowser);
    assert.match(projects.body, /open-things/);
    assert.doesNotMatch(projects.body, /hidden-things/);
    assert.match((await get('/explore/projects', ownerBrowser)).body, /hidden-things/);
    const filtered = await get('/explore/projects?search=nomatch', strangerBrowser);
    assert.match(filtered.body, /No projects match/);

    const groups = await get('/explore/groups');
    assert.match(groups.body, /Pub \(group\) café/);
    assert.doesNotMatch(groups.body, /Private group/);
    assert.match((await get('/explore/groups', { cookie: (await signedInBrowser(t, await t.db.selectFrom('users').selectAll().where('id', '=', 1).executeTakeFirstOrThrow())).cookie, csrf: '' })).body, /Private group/);
  });

  it('/:user and /:group (with sub-groups) list what the viewer may see; a private group is the 404 page', async () => {
    const profile = await get(`/${owner.username}`, strangerBrowser);
    assert.equal(profile.statusCode, 200);
    assert.match(profile.body, /@page-owner/);
    assert.match(profile.body, /open-things/);
    assert.doesNotMatch(profile.body, /hidden-things/);
    assert.match((await get(`/${owner.username}`, ownerBrowser)).body, /hidden-things/);

    const parent = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'Top', path: 'top-web', visibility: 'public' } });
    const parentId = (parent.json() as { id: number }).id;
    const child = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'Child', path: 'child-web', parent_id: parentId, visibility: 'public' } });
    assert.equal(child.statusCode, 201, child.body);
    const hiddenChild = await t.request({ method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN, payload: { name: 'Hidden child', path: 'hidden-child', parent_id: parentId, visibility: 'private' } });
    assert.equal(hiddenChild.statusCode, 201, hiddenChild.body);
    const top = await get('/top-web');
    assert.equal(top.statusCode, 200);
    assert.match(top.body, /href="\/top-web\/child-web"/);
    assert.doesNotMatch(top.body, /Hidden child/);
    const sub = await get('/top-web/child-web');
    assert.equal(sub.statusCode, 200);
    assert.match(sub.body, /<h1>Child<\/h1>/);
    const hidden = await get('/top-web/hidden-child', strangerBrowser);
    assert.equal(hidden.statusCode, 404);
  });
});
