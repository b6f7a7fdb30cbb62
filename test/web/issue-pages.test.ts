/**
 * The issue pages (issue 33): a project's and a group's issue lists, an issue with its discussion,
 * the new issue form, labels and milestones — at the API's web_urls, with the API's permission
 * decisions (a confidential issue is the 404 page to whoever may not read it, as the API's 404),
 * forms that take a session and its CSRF token and write through the API's domain functions,
 * text from users escaped or sanitised everywhere, and a real browser finding them accessible.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { postForm, signedInBrowser, type Browser } from '../helpers/oauth.ts';
import {
  assertAccessible, assertCleanConsole, hasChromium, launchBrowser, openPage, screenshot, signInAs,
} from '../helpers/browser.ts';
import type { UserRow } from '../../src/db/types.ts';

const XSS = '<script>alert("x")</script><img src=x onerror=alert(1)>';

interface ApiIssue { id: number; iid: number; web_url: string; title: string }

describe('issue pages', () => {
  let t: ListeningTestApp;
  let root: UserRow;
  let rootB: Browser;
  let reporter: UserRow;
  let reporterB: Browser;
  let guestB: Browser;
  let author: UserRow;
  let authorB: Browser;
  let authorToken: string;
  let stranger: UserRow;
  let strangerB: Browser;
  let group: { id: number; full_path: string };
  let projectId: number;
  let fullPath: string;
  let privatePath: string;
  let privateGroupPath: string;
  let issueA: ApiIssue;
  let issueB: ApiIssue;
  let secret: ApiIssue;
  let closed: ApiIssue;
  let privateIssue: ApiIssue;
  let milestone: { id: number; iid: number; web_url: string };
  let groupMilestone: { id: number; iid: number; web_url: string };
  let hostileLabel: string;

  const api = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: Record<string, unknown>, token = ROOT_TOKEN) => {
    const res = await t.request({ method, url: `/api/v4${url}`, token, payload });
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const get = (url: string, b?: Browser) => t.request({ method: 'GET', url, headers: b ? { cookie: b.cookie } : {} });
  const post = (url: string, b: Browser | null, fields: Record<string, string | undefined>) =>
    postForm(t, url, { authenticity_token: b?.csrf, ...fields }, b ? { cookie: b.cookie } : {});
  const path = (webUrl: string) => new URL(webUrl).pathname;
  const base = () => `/${fullPath}`;
  const member = async (userId: number, level: number) => api('POST', `/projects/${projectId}/members`, { user_id: userId, access_level: level });
  /** The 404 page, whatever asked for it: the same status and heading, no trace of the object. */
  const assertNotFound = (res: LightMyRequestResponse, hidden?: string) => {
    assert.equal(res.statusCode, 404, res.body.slice(0, 200));
    assert.match(res.body, /Page Not Found/);
    if (hidden) assert.ok(!res.body.includes(hidden), `the 404 page shows nothing of ${hidden}`);
  };

  before(async () => {
    t = await startListeningApp();
    root = await t.db.selectFrom('users').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    rootB = await signedInBrowser(t, root);
    reporter = await createUser(t.db, { name: 'Rita Reporter' });
    reporterB = await signedInBrowser(t, reporter);
    const guest = await createUser(t.db);
    guestB = await signedInBrowser(t, guest);
    author = await createUser(t.db, { name: 'Ann Author' });
    authorB = await signedInBrowser(t, author);
    authorToken = await createToken(t.db, author, { scopes: ['api'] });
    stranger = await createUser(t.db);
    strangerB = await signedInBrowser(t, stranger);

    group = await api('POST', '/groups', { name: 'Issue Group', path: 'issue-group', visibility: 'public' });
    const project = await api('POST', '/projects', { name: 'tracker', namespace_id: group.id, visibility: 'public' });
    projectId = project.id;
    fullPath = project.path_with_namespace;
    await member(reporter.id, 20);
    await member(guest.id, 10);

    await api('POST', `/projects/${projectId}/labels`, { name: 'bug', color: '#cc0000' });
    // The Service stores a label's title as Sanitize.clean leaves it with entities unescaped, so markup
    // written as entities becomes markup in the title: what the pages must show as text.
    const hostile = await api('POST', `/projects/${projectId}/labels`, {
      name: '&lt;img src=x onerror=alert(9)&gt; &quot;q&quot;', color: '#ffff00', description: 'yellow &lt;b&gt;label&lt;/b&gt;',
    });
    hostileLabel = hostile.name;
    assert.equal(hostileLabel, '<img src=x onerror=alert(9)> "q"');
    milestone = await api('POST', `/projects/${projectId}/milestones`, { title: 'v1 <i>one</i>', description: 'Milestone **one**' });
    groupMilestone = await api('POST', `/groups/${group.id}/milestones`, { title: 'Q4', description: 'group *goal*' });

    issueB = await api('POST', `/projects/${projectId}/issues`, { title: 'Second issue' });
    issueA = await api('POST', `/projects/${projectId}/issues`, {
      title: `First ${XSS}`, description: `Some **bold** text, see #${issueB.iid}.\n\n${XSS}\n\n[link](javascript:alert(2))`,
      labels: `bug,${hostileLabel}`, milestone_id: milestone.id, assignee_ids: [reporter.id], due_date: '2030-01-31',
    });
    await api('PUT', `/projects/${projectId}/issues/${issueB.iid}`, { milestone_id: groupMilestone.id });
    secret = await api('POST', `/projects/${projectId}/issues`, { title: 'Secret plan', confidential: true }, authorToken);
    closed = await api('POST', `/projects/${projectId}/issues`, { title: 'Old news' });
    await api('PUT', `/projects/${projectId}/issues/${closed.iid}`, { state_event: 'close' });
    await api('POST', `/projects/${projectId}/issues/${issueA.iid}/award_emoji`, { name: 'thumbsup' });

    const privateGroup = await api('POST', '/groups', { name: 'Hidden Group', path: 'hidden-group', visibility: 'private' });
    privateGroupPath = privateGroup.full_path;
    const privateProject = await api('POST', '/projects', { name: 'vault', namespace_id: privateGroup.id, visibility: 'private' });
    privatePath = privateProject.path_with_namespace;
    privateIssue = await api('POST', `/projects/${privateProject.id}/issues`, { title: 'Private matter' });
  });
  after(() => t.close());

  it('lists the issues with state tabs and counts, confidential ones only for those the API shows them to', async () => {
    const res = await get(`${base()}/-/issues`, rootB);
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.headers['content-security-policy'] as string, /style-src 'self'/);
    assert.match(res.body, />Open <span class="badge">3<\/span>/);
    assert.match(res.body, />Closed <span class="badge">1<\/span>/);
    assert.match(res.body, />All <span class="badge">4<\/span>/);
    assert.ok(res.body.includes(`href="${path(issueA.web_url)}"`), 'rows link to the API web_url');
    assert.ok(res.body.includes('Secret plan'));
    assert.ok(!res.body.includes('Old news'), 'the open tab leaves closed issues out');
    // Titles and label names are text.
    assert.ok(!res.body.includes('<script>alert') && !res.body.includes('<img src=x'));
    assert.ok(res.body.includes('&lt;script&gt;alert'));
    // Label chips: their colour as an SVG fill, the text tone by the Service's contrast rule.
    assert.match(res.body, /class="label-chip label-on-light"[^>]*><svg class="label-fill"[^>]*><rect width="1" height="1" fill="#cc0000"\/><\/svg><span class="label-text">bug<\/span>/);
    assert.match(res.body, /class="label-chip label-on-dark"[^>]*><svg[^>]*><rect[^>]*fill="#ffff00"/);
    assert.match(res.body, /<nav class="sidebar"[\s\S]*href="\/issue-group\/tracker\/-\/issues" aria-current="page">List<\/a>[\s\S]*href="\/issue-group\/tracker\/-\/labels">Labels</);

    for (const [who, b] of [['reporter', reporterB], ['author', authorB]] as const) {
      const seen = await get(`${base()}/-/issues`, b);
      assert.ok(seen.body.includes('Secret plan'), `the ${who} sees the confidential issue`);
      assert.match(seen.body, />Open <span class="badge">3</);
    }
    for (const [who, b] of [['guest', guestB], ['stranger', strangerB], ['anonymous', undefined]] as const) {
      const seen = await get(`${base()}/-/issues`, b);
      assert.equal(seen.statusCode, 200);
      assert.ok(!seen.body.includes('Secret plan'), `the ${who} does not see the confidential issue`);
      assert.match(seen.body, />Open <span class="badge">2</, `the ${who}'s counts leave it out too`);
    }
  });

  it('filters, searches, sorts and pages as the Service list does, and reads bad addresses as the defaults', async () => {
    const q = async (query: string) => (await get(`${base()}/-/issues?${query}`, rootB)).body;
    const closedTab = await q('state=closed');
    assert.ok(closedTab.includes('Old news') && !closedTab.includes('Second issue'));
    const byLabel = await q('label_name[]=bug');
    assert.ok(byLabel.includes('First &lt;script') && !byLabel.includes('Second issue'));
    const noLabel = await q(`label_name[]=None&state=all`);
    assert.ok(noLabel.includes('Second issue') && !noLabel.includes('First &lt;script'));
    const byMilestone = await q(`milestone_title=${encodeURIComponent('v1 <i>one</i>')}`);
    assert.ok(byMilestone.includes('First &lt;script') && !byMilestone.includes('Second issue'));
    const byAuthor = await q(`author_username=${author.username}`);
    assert.ok(byAuthor.includes('Secret plan') && !byAuthor.includes('Second issue'));
    const byAssignee = await q(`assignee_username=${reporter.username}`);
    assert.ok(byAssignee.includes('First &lt;script') && !byAssignee.includes('Secret plan'));
    const unassigned = await q('assignee_username=None');
    assert.ok(!unassigned.includes('First &lt;script') && unassigned.includes('Secret plan'));
    const search = await q('search=second');
    assert.ok(search.includes('Second issue') && !search.includes('Secret plan'));
    assert.match(search, /value="second"/);
    const byTitle = await q('sort=title_asc');
    const at = (title: string) => byTitle.indexOf(`>${title}`);
    assert.ok(at('First &lt;script') < at('Second issue') && at('Second issue') < at('Secret plan'), 'titles in ascending order');
    assert.match(byTitle, /<option value="title_asc" selected>/);
    assert.match(await q('page=2'), /No issues to show/);
    for (const bad of ['state=bogus', 'sort=nope', 'page=abc', `search=${'x'.repeat(300)}`, 'label_name=a&label_name[x]=b', 'page=99999999']) {
      const res = await get(`${base()}/-/issues?${bad}`, rootB);
      assert.equal(res.statusCode, 200, bad);
    }
    // A NUL is refused before any page, as the Service's HandleMalformedStrings does, or read as no value.
    for (const nul of ['sort=%00', 'label_name[]=%00', 'search=a%00b']) {
      assert.ok([200, 400].includes((await get(`${base()}/-/issues?${nul}`, rootB)).statusCode), nul);
    }
  });

  it('shows an issue: sanitised description with references, labels, milestone, assignee, due date, awards and the discussion', async () => {
    const note = await api('POST', `/projects/${projectId}/issues/${issueA.iid}/notes`, { body: `A note **strong** ${XSS}` });
    await api('PUT', `/projects/${projectId}/issues/${issueA.iid}`, { description: `Some **bold** text, see #${issueB.iid}.\n\n${XSS}` });
    const res = await get(path(issueA.web_url), rootB);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.body;
    assert.match(body, /<h1 class="issue-title">First &lt;script&gt;/);
    assert.match(body, /<strong>bold<\/strong>/);
    assert.doesNotMatch(body, /<script>alert|<img[^>]*onerror|href="javascript:/);
    assert.ok(body.includes(`/-/issues/${issueB.iid}"`), 'the #reference is linked');
    assert.match(body, /<dt>Milestone<\/dt><dd><a href="\/issue-group\/tracker\/-\/milestones\/1">v1 &lt;i&gt;one&lt;\/i&gt;<\/a>/);
    assert.ok(body.includes(`href="/${reporter.username}">Rita Reporter</a>`));
    assert.match(body, /<time datetime="2030-01-31">/);
    assert.match(body, /<ul class="awards"[^>]*><li title="thumbsup"><span aria-hidden="true">👍<\/span><span class="visually-hidden">thumbsup<\/span> 1<\/li>/);
    assert.match(body, new RegExp(`<li class="note" id="note_${note.id}">[\\s\\S]*?<strong>strong</strong>`));
    assert.match(body, /<li class="note system-note" id="note_\d+">[\s\S]*?changed the description/);
    assert.match(body, /<button type="submit">Close issue<\/button>/);
    // Label and milestone changes take their place among the notes, as the Service merges its resource events.
    assert.match(body, /id="label-event-\d+"[\s\S]*?added <a class="label-chip[\s\S]*?<\/a> labels<\/p>/);
    assert.match(body, /id="milestone-event-\d+"[\s\S]*?changed milestone to <a href="\/issue-group\/tracker\/-\/milestones\/1">/);
    // The signed-out read it too (public project), with no forms.
    const anonymous = await get(path(issueA.web_url));
    assert.equal(anonymous.statusCode, 200);
    assert.doesNotMatch(anonymous.body, /<form method="post"/);
    assert.match(anonymous.body, /sign in<\/a> to comment/);
  });

  it('answers a confidential issue with the 404 page to whoever may not read it, as the API does', async () => {
    for (const b of [guestB, strangerB, undefined]) {
      const page = await get(path(secret.web_url), b);
      assertNotFound(page, 'Secret plan');
      const missing = await get(`${base()}/-/issues/9999`, b);
      assertNotFound(missing);
      const strip = (text: string) => text.replace(/(\/|%2F)-(\/|%2F)issues(\/|%2F)\d+/g, '');
      assert.equal(strip(page.body), strip(missing.body), 'the same page as a missing issue');
      const apiRes = await t.request({ url: `/api/v4/projects/${projectId}/issues/${secret.iid}`, headers: b ? { cookie: b.cookie } : {} });
      assert.equal(apiRes.statusCode, 404);
    }
    for (const b of [reporterB, authorB, rootB]) assert.equal((await get(path(secret.web_url), b)).statusCode, 200);
    for (const bad of ['abc', '0x1', '99999999999', '1/extra']) assertNotFound(await get(`${base()}/-/issues/${bad}`, rootB));
    // A private project's issue pages are the 404 page to those who may not read the project.
    for (const b of [strangerB, undefined]) {
      for (const url of [`/${privatePath}/-/issues`, path(privateIssue.web_url), `/${privatePath}/-/issues/new`, `/${privatePath}/-/labels`,
        `/${privatePath}/-/milestones`, `/groups/${privateGroupPath}/-/issues`, `/groups/${privateGroupPath}/-/milestones`]) {
        assertNotFound(await get(url, b), 'Private matter');
      }
    }
    assert.equal((await get(path(privateIssue.web_url), rootB)).statusCode, 200);
  });

  it('takes comments and replies through the API\'s note writes, with a session and its CSRF token only', async () => {
    const url = `${path(issueA.web_url)}/notes`;
    const forged = await post(url, { ...strangerB, csrf: 'forged' }, { note: 'forged' });
    assert.equal(forged.statusCode, 422);
    const signedOut = await post(url, null, { note: 'anonymous' });
    assert.equal(signedOut.statusCode, 302);
    assert.match(signedOut.headers.location as string, /^\/users\/sign_in\?return_to=/);

    const ok = await post(url, strangerB, { note: `From a stranger ${XSS}` });
    assert.equal(ok.statusCode, 303, ok.body);
    const noteId = Number(/#note_(\d+)$/.exec(ok.headers.location as string)?.[1]);
    const row = await t.db.selectFrom('notes').selectAll().where('id', '=', noteId).executeTakeFirstOrThrow();
    assert.equal(row.author_id, stranger.id);
    assert.equal(row.noteable_id, issueA.id);
    assert.equal(row.type, null);
    const page = await get(path(issueA.web_url), strangerB);
    assert.match(page.body, new RegExp(`id="note_${noteId}"`));
    assert.ok(page.body.includes('From a stranger &lt;script&gt;') || page.body.includes('From a stranger'));
    assert.doesNotMatch(page.body, /<script>alert/);

    const reply = await post(url, reporterB, { note: 'A reply', discussion_id: row.discussion_id });
    assert.equal(reply.statusCode, 303, reply.body);
    const replies = await t.db.selectFrom('notes').selectAll().where('discussion_id', '=', row.discussion_id).orderBy('id').execute();
    assert.deepEqual(replies.map((n) => n.type), ['DiscussionNote', 'DiscussionNote'], 'a reply turns the note into a thread');
    assert.equal((await post(url, reporterB, { note: 'x', discussion_id: 'f'.repeat(40) })).statusCode, 404);

    const blank = await post(url, reporterB, { note: '   ' });
    assert.equal(blank.statusCode, 400);
    assert.match(blank.body, /Note can&#39;t be blank/);
    // A confidential issue takes no comment from whoever may not read it.
    assertNotFound(await post(`${path(secret.web_url)}/notes`, guestB, { note: 'peek' }));
    // A locked discussion takes comments from members only (IssuablePolicy).
    await api('PUT', `/projects/${projectId}/issues/${issueB.iid}`, { discussion_locked: true });
    assert.equal((await post(`${path(issueB.web_url)}/notes`, strangerB, { note: 'locked out' })).statusCode, 403);
    assert.equal((await post(`${path(issueB.web_url)}/notes`, guestB, { note: 'member' })).statusCode, 303);
    assert.match((await get(path(issueB.web_url), strangerB)).body, /discussion is locked/);
  });

  it('closes and reopens for those the API lets update the issue', async () => {
    const close = (b: Browser, issue: ApiIssue) => post(`${path(issue.web_url)}/close`, b, {});
    assert.equal((await close(strangerB, issueA)).statusCode, 403);
    assert.equal((await post(`${path(issueA.web_url)}/close`, { ...rootB, csrf: 'nope' }, {})).statusCode, 422);
    const byAuthor = await close(authorB, secret);
    assert.equal(byAuthor.statusCode, 303, 'the author may close their own issue');
    let row = await t.db.selectFrom('issues').selectAll().where('id', '=', secret.id).executeTakeFirstOrThrow();
    assert.equal(row.state, 'closed');
    assert.equal(row.closed_by_id, author.id);
    const reopen = await post(`${path(secret.web_url)}/reopen`, reporterB, {});
    assert.equal(reopen.statusCode, 303);
    row = await t.db.selectFrom('issues').selectAll().where('id', '=', secret.id).executeTakeFirstOrThrow();
    assert.equal(row.state, 'opened');
    assert.match((await get(path(secret.web_url), reporterB)).body, /id="state-event-\d+"[\s\S]*?<p>closed<\/p>[\s\S]*?<p>reopened<\/p>/);
    assert.equal((await post(`${path(issueA.web_url)}/explode`, rootB, {})).statusCode, 404);
  });

  it('opens issues from the form for those who may, keeping labels for triagers only', async () => {
    const newUrl = `${base()}/-/issues/new`;
    const signedOut = await get(newUrl);
    assert.equal(signedOut.statusCode, 302);
    const form = await get(newUrl, strangerB);
    assert.equal(form.statusCode, 200);
    assert.ok(!form.body.includes('name="labels"'), 'non-members set no labels');
    assert.match((await get(newUrl, rootB)).body, /name="labels"/);

    const blank = await post(`${base()}/-/issues`, rootB, { title: ' ' });
    assert.equal(blank.statusCode, 400);
    assert.match(blank.body, /Title can&#39;t be blank/);
    assert.equal((await post(`${base()}/-/issues`, { ...rootB, csrf: 'x' }, { title: 'forged' })).statusCode, 422);
    assert.equal((await post(`${base()}/-/issues`, rootB, { title: 'x'.repeat(256) })).statusCode, 400);

    const made = await post(`${base()}/-/issues`, rootB, {
      title: `Made ${XSS}`, description: 'From **the form**', labels: 'bug, fresh', confidential: 'true',
    });
    assert.equal(made.statusCode, 303, made.body);
    const iid = Number(/\/-\/issues\/(\d+)$/.exec(made.headers.location as string)?.[1]);
    const apiIssue = await api('GET', `/projects/${projectId}/issues/${iid}`);
    assert.equal(apiIssue.title, `Made ${XSS}`);
    assert.deepEqual(apiIssue.labels.sort(), ['bug', 'fresh']);
    assert.equal(apiIssue.confidential, true);
    assert.equal(path(apiIssue.web_url), made.headers.location);

    const byStranger = await post(`${base()}/-/issues`, strangerB, { title: 'Stranger report', labels: 'bug' });
    assert.equal(byStranger.statusCode, 303);
    const strangerIid = Number(/(\d+)$/.exec(byStranger.headers.location as string)?.[1]);
    assert.deepEqual((await api('GET', `/projects/${projectId}/issues/${strangerIid}`)).labels, [], 'labels dropped as the API drops them');
    assertNotFound(await post(`/${privatePath}/-/issues`, strangerB, { title: 'no' }));
  });

  it('lists the labels with their open issue counts, and the milestones with their pages at the API web_urls', async () => {
    const labels = await get(`${base()}/-/labels`, rootB);
    assert.equal(labels.statusCode, 200);
    assert.match(labels.body, /fill="#cc0000"/);
    assert.ok(!labels.body.includes('<img src=x') && labels.body.includes('&lt;img src=x onerror=alert(9)&gt; &quot;q&quot;'));
    assert.ok(labels.body.includes('yellow &lt;b&gt;label&lt;/b&gt;'));
    assert.match(labels.body, /label_name%5B%5D=bug">2 open issues<\/a>/);
    assert.match((await get(`${base()}/-/labels?search=bug`, rootB)).body, /bug/);

    const list = await get(`${base()}/-/milestones`);
    assert.equal(list.statusCode, 200);
    assert.ok(list.body.includes(`href="${path(milestone.web_url)}"`));
    assert.ok(list.body.includes(`href="${path(groupMilestone.web_url)}"`), 'group milestones listed with their own page');
    const show = await get(path(milestone.web_url), rootB);
    assert.equal(show.statusCode, 200, show.body);
    assert.match(show.body, /<h1>v1 &lt;i&gt;one&lt;\/i&gt;<\/h1>/);
    assert.match(show.body, /Milestone <strong>one<\/strong>/);
    assert.ok(show.body.includes(path(issueA.web_url)));
    assertNotFound(await get(`${base()}/-/milestones/999`));

    const groupShow = await get(path(groupMilestone.web_url));
    assert.equal(groupShow.statusCode, 200, groupShow.body);
    assert.match(groupShow.body, /group <em>goal<\/em>/);
    assert.ok(groupShow.body.includes(path(issueB.web_url)));
    assert.match(groupShow.body, /issue-group\/tracker#\d+/);
    assert.match((await get(`/groups/${group.full_path}/-/milestones`)).body, /Q4/);
  });

  it('lists a group\'s issues across its projects, and shows the group\'s page at /groups/<group>', async () => {
    const res = await get(`/groups/${group.full_path}/-/issues?state=all`, reporterB);
    assert.equal(res.statusCode, 200, res.body);
    assert.ok(res.body.includes(path(issueA.web_url)));
    assert.match(res.body, /issue-group\/tracker#\d+/);
    assert.ok(res.body.includes('Secret plan'));
    assert.ok(!(await get(`/groups/${group.full_path}/-/issues?state=all`, guestB)).body.includes('Secret plan'));
    // The group entity's web_url: the group's page itself (router.ts answerGroup).
    const groupPage = await get(`/groups/${group.full_path}`);
    assert.equal(groupPage.statusCode, 200);
    assert.ok(groupPage.body.includes('Issue Group'));
    assertNotFound(await get(`/groups/${group.full_path}/-/nothing`));
    const malformed = await get('/groups/%ff/-/issues');
    assert.ok([400, 404].includes(malformed.statusCode), `a path that is no UTF-8 names no group (${malformed.statusCode})`);
  });

  it('renders the pages accessibly in a real browser with a clean console, and comments through the form', { skip: !hasChromium() }, async () => {
    // An issue as people write them: the hostile corpus above has images without text, as its author made them.
    const written = await api('POST', `/projects/${projectId}/issues`, {
      title: 'Dark mode for the pages', labels: 'bug', milestone_id: milestone.id, assignee_ids: [reporter.id],
      description: `## Why\n\nThe pages are **too bright** at night, see #${issueB.iid}.\n\n- [ ] a toggle\n- [x] the colours\n\n\`\`\`ts\nconst dark = true;\n\`\`\``,
    }) as ApiIssue;
    await api('POST', `/projects/${projectId}/issues/${written.iid}/notes`, { body: 'Agreed, @root will look.' });
    await api('POST', `/projects/${projectId}/issues/${written.iid}/award_emoji`, { name: 'tada' });
    const browser = await launchBrowser();
    try {
      await signInAs(t, browser.context, t.url, reporter);
      const page = await openPage(browser.context);
      for (const [url, name] of [
        [`${base()}/-/issues`, 'issues-list'], [path(written.web_url), 'issue-show'], [`${base()}/-/issues/new`, 'issue-new'],
        [`${base()}/-/labels`, 'labels'], [path(milestone.web_url), 'milestone'], [`/groups/${group.full_path}/-/issues`, 'group-issues'],
      ] as const) {
        const res = await page.goto(`${t.url}${url}`);
        assert.equal(res?.status(), 200, url);
        await assertAccessible(page);
        await screenshot(page, name);
      }
      await page.goto(`${t.url}${path(written.web_url)}`);
      await page.fill('#note-body', 'Typed in a **browser**');
      await page.click('button:has-text("Comment")');
      await page.waitForURL(/#note_\d+$/);
      assert.match(await page.content(), /Typed in a <strong>browser<\/strong>/);
      assertCleanConsole(page);
    } finally {
      await browser.close();
    }
    // Dark mode and a phone-sized screen, as the other pages are checked.
    for (const [o, name] of [[{ colorScheme: 'dark' as const }, 'dark'], [{ viewport: { width: 375, height: 740 } }, 'phone']] as const) {
      const other = await launchBrowser(o);
      try {
        await signInAs(t, other.context, t.url, reporter);
        const page = await openPage(other.context);
        for (const url of [`${base()}/-/issues`, path(written.web_url)]) {
          assert.equal((await page.goto(`${t.url}${url}`))?.status(), 200);
          await assertAccessible(page);
          await screenshot(page, `issue-${name}-${url.endsWith('/-/issues') ? 'list' : 'show'}`);
        }
        assertCleanConsole(page);
      } finally {
        await other.close();
      }
    }
  });
});
