/**
 * The merge request pages (issue 33): the project's and the group's lists with their tabs and
 * filters, a request's Overview with its discussion and forms, its commits, pipelines and diffs
 * (a 1,000-file diff paged and large files collapsed), opening one from the new-request form and
 * merging one from its page into the real repository — each with the API's permission decisions,
 * the same 404 page for what a viewer may not see, CSRF refusals, and every text a user wrote
 * (titles, descriptions, notes, branch names, diff content) shown as text. Then a real browser
 * checks the pages for accessibility and a clean console, with screenshots.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { LightMyRequestResponse } from 'fastify';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { createSession, createToken, createUser } from '../helpers/factories.ts';
import { postForm } from '../helpers/oauth.ts';
import {
  assertAccessible, assertCleanConsole, hasChromium, launchBrowser, openPage, screenshot, signInAs,
} from '../helpers/browser.ts';
import type { UserRow } from '../../src/db/types.ts';

const XSS = '<script>alert("x")</script><img src=x onerror=alert(1)>';
const XSS_BRANCH = 'feat/<img-src=x-onerror=alert(1)>';

/** No markup a user wrote survived as markup. */
function assertNoInjection(body: string): void {
  assert.ok(!body.includes('<script>alert'), 'no script from user text');
  assert.ok(!/<img[^>]*onerror/i.test(body), 'no img with a handler from user text');
  assert.ok(!body.includes('<img-src'), 'a branch name is text');
}

describe('merge request pages', () => {
  let t: ListeningTestApp;
  let p: CiProject;
  let dev: UserRow;
  let devToken: string;
  let ownerCookie: string;
  let devCookie: string;
  let reporterCookie: string;
  let strangerCookie: string;
  let featureHead: string;

  const get = (url: string, c = ownerCookie) => t.request({ method: 'GET', url, headers: c ? { cookie: c } : {} });
  const csrfOf = (res: LightMyRequestResponse) => /name="authenticity_token" value="([^"]+)"/.exec(res.body)?.[1] ?? '';
  const mrs = () => `/${p.fullPath}/-/merge_requests`;
  const api = () => `/api/v4/projects/${p.project.id}/merge_requests`;

  async function tokenOf(cookie: string, url = mrs()): Promise<string> {
    const res = await get(url, cookie);
    assert.equal(res.statusCode, 200, res.body);
    return csrfOf(res);
  }

  /** The request once the background check has given it a merge status. */
  async function checked(iid: number): Promise<Record<string, any>> {
    for (let i = 0; i < 300; i += 1) {
      const body = (await t.request({ method: 'GET', url: `${api()}/${iid}`, token: p.ownerToken })).json();
      if (body.merge_status !== 'unchecked' && body.merge_status !== 'checking') return body;
      await new Promise((r) => setTimeout(r, 30));
    }
    throw new Error('merge status never checked');
  }

  /** A branch of the project starting at main, then `files` committed on it. */
  async function pushBranch(branch: string, files: Record<string, string>, message: string): Promise<string> {
    const res = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/repository/branches`, token: p.ownerToken, payload: { branch, ref: 'main' } });
    assert.equal(res.statusCode, 201, res.body);
    return pushFiles(t, p, files, { branch, message });
  }

  async function openRequest(payload: Record<string, unknown>): Promise<Record<string, any>> {
    const res = await t.request({ method: 'POST', url: api(), token: p.ownerToken, payload });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }

  before(async () => {
    t = await startListeningApp({ KILN_JOB_POLL_MS: '20' });
    p = await createCiProject(t, { visibility: 'private', name: 'mr-pages' });
    dev = await createUser(t.db, { username: 'mrpagedev', name: 'Dev Eloper' });
    devToken = await createToken(t.db, dev, { scopes: ['api'] });
    const reporter = await createUser(t.db, { username: 'mrpagerep' });
    const stranger = await createUser(t.db, { username: 'mrpagestranger' });
    for (const [user, level] of [[dev, 30], [reporter, 20]] as const) {
      const added = await t.request({
        method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload: { user_id: user.id, access_level: level },
      });
      assert.equal(added.statusCode, 201, added.body);
    }
    ownerCookie = `_service_session=${await createSession(t.db, p.owner)}`;
    devCookie = `_service_session=${await createSession(t.db, dev)}`;
    reporterCookie = `_service_session=${await createSession(t.db, reporter)}`;
    strangerCookie = `_service_session=${await createSession(t.db, stranger)}`;
    await pushFiles(t, p, { 'README.md': '# MR pages\n', 'a.txt': 'one\n' }, { message: 'Initial commit' });
    featureHead = await pushBranch('feature', { 'a.txt': `one\ntwo ${XSS}\n`, 'b.txt': 'bee\n' }, `Feature <b>work</b> ${XSS}`);
    await pushBranch(XSS_BRANCH, { 'x.txt': 'x\n' }, 'XSS branch');
  });
  after(() => t.close());

  it('opens a merge request from the new-request form through the API\'s create, for developers', async () => {
    const form = await get(`${mrs()}/new?source_branch=feature`, devCookie);
    assert.equal(form.statusCode, 200, form.body);
    assert.match(form.body, /<option value="feature" selected>feature<\/option>/);
    assert.match(form.body, /id="mr-title" name="title" value="Feature"/);
    assertNoInjection(form.body);
    const token = csrfOf(form);
    assert.equal((await get(`${mrs()}/new`, reporterCookie)).statusCode, 403, 'reporters may not open requests');
    assert.equal((await get(`${mrs()}/new`, strangerCookie)).statusCode, 404);
    const signedOut = await get(`${mrs()}/new`, '');
    assert.equal(signedOut.statusCode, 404, 'a private project is the 404 page to the signed-out');

    const same = await postForm(t, `${mrs()}/new`, { authenticity_token: token, source_branch: 'main', target_branch: 'main', title: 'x' }, { cookie: devCookie });
    assert.equal(same.statusCode, 422);
    assert.match(same.body, /You can&#39;t use same project\/branch for source and target/);
    const blank = await postForm(t, `${mrs()}/new`, { authenticity_token: token, source_branch: 'feature', target_branch: 'main', title: '  ' }, { cookie: devCookie });
    assert.equal(blank.statusCode, 400);
    const forged = await postForm(t, `${mrs()}/new`, { authenticity_token: 'forged', source_branch: 'feature', target_branch: 'main', title: 'T' }, { cookie: devCookie });
    assert.notEqual(forged.statusCode, 303, 'a forged form opens nothing');

    const created = await postForm(t, `${mrs()}/new`, {
      authenticity_token: token, source_branch: 'feature', target_branch: 'main', title: `Add feature ${XSS}`,
      description: `Some **bold** text ${XSS}\n\n- [ ] task`, remove_source_branch: 'true',
    }, { cookie: devCookie });
    assert.equal(created.statusCode, 303, created.body);
    assert.equal(created.headers.location, `${mrs()}/1`);
    const row = await t.db.selectFrom('merge_requests').selectAll().where('project_id', '=', p.project.id).where('iid', '=', 1).executeTakeFirstOrThrow();
    assert.equal(row.author_id, dev.id);
    assert.equal(row.source_branch, 'feature');
    assert.equal(row.force_remove_source_branch, 1);
    const again = await postForm(t, `${mrs()}/new`, { authenticity_token: token, source_branch: 'feature', target_branch: 'main', title: 'again' }, { cookie: devCookie });
    assert.equal(again.statusCode, 409);
    assert.match(again.body, /Another open merge request already exists for this source branch: !1/);
  });

  it('lists requests with state tabs and counts, filters, the draft marker, and the same 404 to those who may not see them', async () => {
    await openRequest({ source_branch: XSS_BRANCH, target_branch: 'main', title: 'Draft: xss branch', labels: 'bug' });
    const list = await get(mrs());
    assert.equal(list.statusCode, 200, list.body);
    assertNoInjection(list.body);
    assert.match(list.body, /Add feature &lt;script&gt;/);
    assert.match(list.body, /<span class="badge draft">Draft<\/span>/);
    assert.match(list.body, /aria-current="page">Open <span class="badge count">2<\/span>/);
    assert.match(list.body, />Merged <span class="badge count">0<\/span>/);
    assert.match(list.body, /<span class="badge label">bug<\/span>/);
    const byLabel = await get(`${mrs()}?label_name[]=bug`);
    assert.equal((byLabel.body.match(/class="mr-row"/g) ?? []).length, 1);
    const byAuthor = await get(`${mrs()}?author_username=${dev.username}`);
    assert.match(byAuthor.body, /Add feature/);
    assert.ok(!byAuthor.body.includes('xss branch'));
    const bySearch = await get(`${mrs()}?search=xss`);
    assert.ok(bySearch.body.includes('xss branch') && !bySearch.body.includes('Add feature'));
    const byTarget = await get(`${mrs()}?target_branch=nope`);
    assert.match(byTarget.body, /No merge requests to show/);
    const sorted = await get(`${mrs()}?sort=title_asc`);
    assert.ok(sorted.body.indexOf('Add feature') < sorted.body.indexOf('xss branch'));
    const merged = await get(`${mrs()}?state=merged`);
    assert.match(merged.body, /No merge requests to show/);
    const odd = await get(`${mrs()}?state=%3Cx%3E&sort=nope&page=-3&author_username=${'a'.repeat(300)}`);
    assert.equal(odd.statusCode, 200, 'values out of bounds are no filter');
    assert.equal((await get(mrs(), reporterCookie)).statusCode, 200);
    for (const c of [strangerCookie, '']) {
      const hidden = await get(mrs(), c);
      assert.equal(hidden.statusCode, 404);
      assert.ok(!hidden.body.includes('Add feature'));
    }
    // The sidebar links the list.
    assert.match(list.body, new RegExp(`href="/${p.fullPath}/-/merge_requests" aria-current="page">Merge requests<`));
  });

  it('lists a group\'s requests, to those who may see the group', async () => {
    const groupRes = await t.request({ method: 'POST', url: '/api/v4/groups', token: devToken, payload: { name: 'mr-group', path: 'mr-group', visibility: 'public' } });
    assert.equal(groupRes.statusCode, 201, groupRes.body);
    const group = groupRes.json();
    const projRes = await t.request({
      method: 'POST', url: '/api/v4/projects', token: devToken,
      payload: { name: 'grp-proj', namespace_id: group.id, visibility: 'public', initialize_with_readme: true },
    });
    assert.equal(projRes.statusCode, 201, projRes.body);
    const project = projRes.json();
    const commit = await t.request({
      method: 'POST', url: `/api/v4/projects/${project.id}/repository/commits`, token: devToken,
      payload: { branch: 'grp-feature', start_branch: 'main', commit_message: 'g', actions: [{ action: 'create', file_path: 'g.txt', content: 'g\n' }] },
    });
    assert.equal(commit.statusCode, 201, commit.body);
    const mr = await t.request({
      method: 'POST', url: `/api/v4/projects/${project.id}/merge_requests`, token: devToken,
      payload: { source_branch: 'grp-feature', target_branch: 'main', title: `Group request ${XSS}` },
    });
    assert.equal(mr.statusCode, 201, mr.body);
    for (const url of ['/mr-group/-/merge_requests', '/groups/mr-group/-/merge_requests']) {
      const res = await get(url, '');
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      assert.match(res.body, /Group request &lt;script&gt;/);
      assert.match(res.body, /mr-group\/grp-proj!1/);
      assert.match(res.body, /href="\/mr-group\/grp-proj\/-\/merge_requests\/1"/);
      assertNoInjection(res.body);
    }
    // The private project's requests are not in a group list of another owner's; a private group is the 404 page.
    const priv = await t.request({ method: 'POST', url: '/api/v4/groups', token: devToken, payload: { name: 'mr-secret', path: 'mr-secret', visibility: 'private' } });
    assert.equal(priv.statusCode, 201);
    assert.equal((await get('/mr-secret/-/merge_requests', strangerCookie)).statusCode, 404);
    assert.equal((await get('/mr-secret/-/merge_requests', devCookie)).statusCode, 200);
    assert.equal((await get('/no-such-group/-/merge_requests', devCookie)).statusCode, 404);
  });

  it('shows the overview: rendered description, branches, people, labels, merge status in words, and 404 parity', async () => {
    const mr = await checked(1);
    const res = await get(`${mrs()}/1`);
    assert.equal(res.statusCode, 200, res.body);
    assertNoInjection(res.body);
    assert.match(res.body, /<div class="markdown" id="description">[\s\S]*<strong>bold<\/strong>/);
    assert.match(res.body, /Add feature &lt;script&gt;/);
    assert.match(res.body, /requested to merge <a href="[^"]+\/-\/tree\/feature"><code>feature<\/code><\/a> into <a href="[^"]+\/-\/tree\/main"><code>main<\/code><\/a>/);
    assert.equal(mr.detailed_merge_status, 'mergeable');
    assert.match(res.body, /<p id="merge-status" data-status="mergeable">Ready to merge\.<\/p>/);
    assert.match(res.body, new RegExp(`<input type="hidden" name="sha" value="${featureHead}">`));
    assert.match(res.body, /id="merge-form"/);
    const asReporter = await get(`${mrs()}/1`, reporterCookie);
    assert.equal(asReporter.statusCode, 200);
    assert.ok(!asReporter.body.includes('id="merge-form"') && !asReporter.body.includes('Close merge request'), 'reporters may not merge or close');
    assert.match(asReporter.body, /id="comment-form"/, 'reporters may comment');
    const signedOut404 = await get(`${mrs()}/1`, '');
    assert.equal(signedOut404.statusCode, 404);
    for (const [url, c] of [[`${mrs()}/1`, strangerCookie], [`${mrs()}/999`, ownerCookie], [`${mrs()}/abc`, ownerCookie],
      [`${mrs()}/99999999999`, ownerCookie], [`${mrs()}/1/nope`, ownerCookie], [`${mrs()}/1/diffs/x`, ownerCookie]] as const) {
      const r = await get(url, c);
      assert.equal(r.statusCode, 404, url);
      assert.ok(!r.body.includes('Add feature'));
    }
    const main = (body: string) => body.slice(body.indexOf('<main'));
    assert.equal(main((await get(`${mrs()}/999`)).body), main((await get(`${mrs()}/1`, strangerCookie)).body), 'the same 404 page');
  });

  it('takes comments, threads, replies and resolutions through the forms, with CSRF and the API\'s permissions', async () => {
    const page = `${mrs()}/1`;
    const devToken2 = await tokenOf(devCookie, page);
    const forged = await postForm(t, `${page}/notes`, { authenticity_token: 'forged', note: 'forged note' }, { cookie: devCookie });
    assert.notEqual(forged.statusCode, 303);
    const anonymous = await postForm(t, `${page}/notes`, { authenticity_token: devToken2, note: 'anon' });
    assert.equal(anonymous.statusCode, 404, 'a private project is the 404 page to the signed-out, for forms too');
    const notes = () => t.db.selectFrom('notes').selectAll().where('noteable_type', '=', 'MergeRequest').where('system', '=', 0).execute();
    assert.equal((await notes()).filter((n) => n.note.includes('forged') || n.note === 'anon').length, 0);

    const blank = await postForm(t, `${page}/notes`, { authenticity_token: devToken2, note: '   ' }, { cookie: devCookie });
    assert.equal(blank.statusCode, 400);
    assert.match(blank.body, /Note can&#39;t be blank/);

    const comment = await postForm(t, `${page}/notes`, { authenticity_token: devToken2, note: `A comment ${XSS} with **markdown**` }, { cookie: devCookie });
    assert.equal(comment.statusCode, 303, comment.body);
    const thread = await postForm(t, `${page}/notes`, { authenticity_token: devToken2, note: 'Please rename this', thread: 'true' }, { cookie: devCookie });
    assert.equal(thread.statusCode, 303);
    const threadNote = (await notes()).find((n) => n.note === 'Please rename this')!;
    assert.equal(threadNote.type, 'DiscussionNote');
    assert.equal(threadNote.resolvable, 1);

    const reporterToken = await tokenOf(reporterCookie, page);
    const reply = await postForm(t, `${page}/reply`, { authenticity_token: reporterToken, discussion_id: threadNote.discussion_id, note: `Reply ${XSS}` }, { cookie: reporterCookie });
    assert.equal(reply.statusCode, 303, reply.body);
    const replyRow = (await notes()).find((n) => n.note.startsWith('Reply '))!;
    assert.equal(replyRow.discussion_id, threadNote.discussion_id);
    const denied = await postForm(t, `${page}/resolve`, { authenticity_token: reporterToken, discussion_id: threadNote.discussion_id, resolved: 'true' }, { cookie: reporterCookie });
    assert.equal(denied.statusCode, 403, 'reporters may not resolve threads');
    const unknown = await postForm(t, `${page}/reply`, { authenticity_token: devToken2, discussion_id: 'f'.repeat(40), note: 'x' }, { cookie: devCookie });
    assert.equal(unknown.statusCode, 404);
    const notResolvable = await postForm(t, `${page}/resolve`, {
      authenticity_token: devToken2, discussion_id: (await notes()).find((n) => n.note.startsWith('A comment'))!.discussion_id, resolved: 'true',
    }, { cookie: devCookie });
    assert.equal(notResolvable.statusCode, 400);

    const resolved = await postForm(t, `${page}/resolve`, { authenticity_token: devToken2, discussion_id: threadNote.discussion_id, resolved: 'true' }, { cookie: devCookie });
    assert.equal(resolved.statusCode, 303);
    assert.ok((await notes()).filter((n) => n.discussion_id === threadNote.discussion_id).every((n) => n.resolved_by_id === dev.id));
    let shown = await get(page);
    assertNoInjection(shown.body);
    assert.match(shown.body, /A comment [\s\S]{0,400}with <strong>markdown<\/strong>/);
    assert.match(shown.body, /Resolved by <a href="\/mrpagedev">Dev Eloper<\/a>/);
    assert.match(shown.body, />Unresolve thread</);
    const unresolved = await postForm(t, `${page}/resolve`, { authenticity_token: devToken2, discussion_id: threadNote.discussion_id, resolved: 'false' }, { cookie: devCookie });
    assert.equal(unresolved.statusCode, 303);
    shown = await get(page);
    assert.match(shown.body, /Unresolved thread/);

    // A line comment made through the API shows with its file and line.
    const mr = (await t.request({ method: 'GET', url: `${api()}/1`, token: devToken })).json();
    const position = { ...mr.diff_refs, position_type: 'text', old_path: 'a.txt', new_path: 'a.txt', new_line: 2 };
    const diffNote = await t.request({ method: 'POST', url: `${api()}/1/discussions`, token: devToken, payload: { body: 'On this line', position } });
    assert.equal(diffNote.statusCode, 201, diffNote.body);
    shown = await get(page);
    assert.match(shown.body, /Comment on <a href="[^"]+\/diffs"><code>a\.txt<\/code><\/a> line 2<\/p>[\s\S]*On this line/);
  });

  it('approves and revokes, closes and reopens for those the API lets, and refuses the others', async () => {
    const page = `${mrs()}/1`;
    const token = await tokenOf(devCookie, page);
    const reporterToken = await tokenOf(reporterCookie, page);
    assert.equal((await postForm(t, `${page}/approve`, { authenticity_token: reporterToken, sha: featureHead }, { cookie: reporterCookie })).statusCode, 403);
    const stale = await postForm(t, `${page}/approve`, { authenticity_token: token, sha: 'a'.repeat(40) }, { cookie: devCookie });
    assert.equal(stale.statusCode, 409);
    const approved = await postForm(t, `${page}/approve`, { authenticity_token: token, sha: featureHead }, { cookie: devCookie });
    assert.equal(approved.statusCode, 303, approved.body);
    const approvals = (await t.request({ method: 'GET', url: `${api()}/1/approvals`, token: devToken })).json();
    assert.deepEqual(approvals.approved_by.map((a: { user: { username: string } }) => a.user.username), [dev.username]);
    const shown = await get(page, devCookie);
    assert.match(shown.body, /Approved by <a href="\/mrpagedev">Dev Eloper<\/a>/);
    assert.match(shown.body, />Revoke approval</);
    assert.equal((await postForm(t, `${page}/unapprove`, { authenticity_token: token }, { cookie: devCookie })).statusCode, 303);
    assert.equal((await postForm(t, `${page}/unapprove`, { authenticity_token: token }, { cookie: devCookie })).statusCode, 404, 'nothing to revoke, as the API');

    assert.equal((await postForm(t, `${page}/close`, { authenticity_token: reporterToken }, { cookie: reporterCookie })).statusCode, 403);
    const strangerToken = csrfOf(await get('/', strangerCookie));
    assert.equal((await postForm(t, `${page}/close`, { authenticity_token: strangerToken }, { cookie: strangerCookie })).statusCode, 404);
    assert.equal((await postForm(t, `${page}/close`, { authenticity_token: token }, { cookie: devCookie })).statusCode, 303);
    assert.equal((await t.request({ method: 'GET', url: `${api()}/1`, token: devToken })).json().state, 'closed');
    const closedList = await get(`${mrs()}?state=closed`);
    assert.match(closedList.body, /Add feature/);
    assert.equal((await postForm(t, `${page}/reopen`, { authenticity_token: token }, { cookie: devCookie })).statusCode, 303);
    assert.equal((await t.request({ method: 'GET', url: `${api()}/1`, token: devToken })).json().state, 'opened');
    assert.equal((await postForm(t, `${page}/explode`, { authenticity_token: token }, { cookie: devCookie })).statusCode, 404);
  });

  it('shows the commits, pipelines and diffs tabs', async () => {
    const commits = await get(`${mrs()}/1/commits`);
    assert.equal(commits.statusCode, 200);
    assert.match(commits.body, /1 commit</);
    assert.match(commits.body, new RegExp(`/-/commit/${featureHead}"`));
    assertNoInjection(commits.body);
    const pipelines = await get(`${mrs()}/1/pipelines`);
    assert.equal(pipelines.statusCode, 200);
    assert.match(pipelines.body, /No pipelines to show/);
    const diffs = await get(`${mrs()}/1/diffs`);
    assert.equal(diffs.statusCode, 200);
    assertNoInjection(diffs.body);
    assert.match(diffs.body, /2 changed files/);
    assert.match(diffs.body, /<tr class="add"><td class="ln"><a href="\?line_code=0_0_2#lc">2<\/a><\/td><td class="line">\+two &lt;script&gt;alert\(&quot;x&quot;\)/);
    assert.equal((diffs.body.match(/<section class="diff-file"/g) ?? []).length, 2);
    for (const c of [strangerCookie, '']) assert.equal((await get(`${mrs()}/1/diffs`, c)).statusCode, 404);
  });

  it('pages a 1,000-file diff and collapses large files', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 1005; i += 1) files[`many/f${String(i).padStart(4, '0')}.txt`] = `file ${i}\n`;
    files['many/0-big.txt'] = Array.from({ length: 3000 }, (_, i) => `line ${i} of a large file`).join('\n');
    files['.gitlab-ci.yml'] = 'test:\n  script: echo hi\n';
    await pushBranch('many-files', files, 'Many files');
    const mr = await openRequest({ source_branch: 'many-files', target_branch: 'main', title: 'Many files' });
    // Its head pipeline shows in the list and on its Pipelines tab.
    const pipeline = await createPipeline(t, p, 'many-files');
    const pipelineLink = new RegExp(`class="mr-pipeline" href="/${p.fullPath}/-/pipelines/${pipeline.id}" aria-label="Pipeline [a-z_]+"`);
    assert.match((await get(mrs())).body, pipelineLink);
    assert.ok((await get(mrs(), reporterCookie)).body.includes('class="mr-pipeline"'), 'reporters read pipelines of a private project');
    assert.match((await get(`${mrs()}/${mr.iid}`)).body, /<p id="mr-pipeline">Pipeline <a class="mr-pipeline"/);
    const tab = await get(`${mrs()}/${mr.iid}/pipelines`);
    assert.match(tab.body, new RegExp(`href="/${p.fullPath}/-/pipelines/${pipeline.id}">#${pipeline.id}</a>`));
    const url = `${mrs()}/${mr.iid}/diffs`;
    const first = await get(url);
    assert.equal(first.statusCode, 200, first.body);
    assert.match(first.body, /1000\+ changed files, showing files 1–20 of 1000/);
    assert.match(first.body, /Too many changes to show/);
    assert.equal((first.body.match(/<section class="diff-file"/g) ?? []).length, 20, 'one page of files is drawn');
    assert.ok(first.body.length < 200_000, `a bounded page (${first.body.length} bytes)`);
    // The large file is collapsed with a link that shows it alone.
    const link = /<a href="([^"]+diffs\?file=(\d+)#diff-\2)">Show the changes<\/a>/.exec(first.body);
    assert.ok(link, 'the large file is collapsed');
    assert.ok(!first.body.includes('line 2999 of a large file'));
    const expanded = await get(link[1]!.split('#')[0]!);
    assert.equal(expanded.statusCode, 200);
    assert.match(expanded.body, /line 2999 of a large file/);
    assert.equal((expanded.body.match(/<section class="diff-file"/g) ?? []).length, 1);
    const last = await get(`${url}?page=50`);
    assert.equal((last.body.match(/<section class="diff-file"/g) ?? []).length, 20);
    assert.ok(!last.body.includes('rel="next"'));
    assert.equal((await get(`${url}?page=51`)).statusCode, 200);
  });

  it('merges from the page with the sha guard, squash and source branch removal, really merging in git', async () => {
    const page = `${mrs()}/1`;
    const token = await tokenOf(ownerCookie, page);
    const reporterToken = await tokenOf(reporterCookie, page);
    assert.equal((await postForm(t, `${page}/merge`, { authenticity_token: reporterToken, sha: featureHead }, { cookie: reporterCookie })).statusCode, 403);
    // main is protected (default_branch_protection 2): Maintainers merge into it, Developers may not.
    const devPage = await get(page, devCookie);
    assert.ok(!devPage.body.includes('id="merge-form"'));
    assert.equal((await postForm(t, `${page}/merge`, { authenticity_token: csrfOf(devPage), sha: featureHead }, { cookie: devCookie })).statusCode, 403);
    const forged = await postForm(t, `${page}/merge`, { authenticity_token: 'nope', sha: featureHead }, { cookie: ownerCookie });
    assert.notEqual(forged.statusCode, 303);
    const stale = await postForm(t, `${page}/merge`, { authenticity_token: token, sha: 'b'.repeat(40) }, { cookie: ownerCookie });
    assert.equal(stale.statusCode, 409);
    assert.match(stale.body, /The source branch has changed since the page was loaded/);
    assert.equal((await t.request({ method: 'GET', url: `${api()}/1`, token: devToken })).json().state, 'opened');

    const merged = await postForm(t, `${page}/merge`, {
      authenticity_token: token, sha: featureHead, squash: 'true', should_remove_source_branch: 'true',
    }, { cookie: ownerCookie });
    assert.equal(merged.statusCode, 303, merged.body);
    const mr = (await t.request({ method: 'GET', url: `${api()}/1`, token: devToken })).json();
    assert.equal(mr.state, 'merged');
    assert.equal(mr.merged_by.username, p.owner.username);
    assert.ok(mr.squash_commit_sha, 'squashed');
    const gitOut = (...args: string[]) => execFileSync('git', ['--git-dir', p.gitDir, ...args], { encoding: 'utf8' }).trim();
    const mainHead = gitOut('rev-parse', 'refs/heads/main');
    assert.equal(mr.merge_commit_sha, mainHead);
    assert.equal(gitOut('show', `${mainHead}:b.txt`), 'bee', 'the branch\'s changes are on main');
    assert.equal(gitOut('for-each-ref', 'refs/heads/feature'), '', 'the source branch was removed');
    const shown = await get(page);
    assert.match(shown.body, new RegExp(`id="merge-status">Merged by <a href="/${p.owner.username}">`));
    assert.ok(!shown.body.includes('id="merge-form"'));
    const mergedTab = await get(`${mrs()}?state=merged`);
    assert.match(mergedTab.body, /aria-current="page">Merged <span class="badge count">1<\/span>/);
    const again = await postForm(t, `${page}/merge`, { authenticity_token: token, sha: featureHead }, { cookie: ownerCookie });
    assert.equal(again.statusCode, 405, 'a merged request cannot be merged again');
  });

  it('is accessible in a real browser, with a clean console', { skip: !hasChromium() }, async () => {
    const browser = await launchBrowser();
    try {
      await signInAs(t, browser.context, t.url, dev);
      for (const [path, name] of [[mrs(), 'mr-list'], [`${mrs()}/1`, 'mr-overview'], [`${mrs()}/2`, 'mr-overview-open'],
        [`${mrs()}/1/diffs`, 'mr-diffs'], [`${mrs()}/3/diffs`, 'mr-diffs-many'], [`${mrs()}/1/commits`, 'mr-commits'],
        [`${mrs()}/1/pipelines`, 'mr-pipelines'], [`${mrs()}/new`, 'mr-new'], ['/mr-group/-/merge_requests', 'mr-group-list']] as const) {
        const page = await openPage(browser.context);
        const res = await page.goto(`${t.url}${path}`);
        assert.equal(res?.status(), 200, path);
        await assertAccessible(page);
        assertCleanConsole(page);
        await screenshot(page, name);
        await page.close();
      }
      // A comment typed and sent in the browser shows on the page it returns to.
      const page = await openPage(browser.context);
      await page.goto(`${t.url}${mrs()}/2`);
      await page.fill('#note-body', 'Typed in a browser');
      await page.click('#comment-form button[type=submit]');
      await page.waitForSelector('text=Typed in a browser');
      assertCleanConsole(page);
      await page.close();
    } finally {
      await browser.close();
    }
  });
});
