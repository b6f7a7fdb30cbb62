/**
 * The chat integrations' record events (issue 31, item 9): merge requests, comments on issues,
 * merge requests, commits and snippets (internal ones to the confidential note channel, else the
 * note channel), wiki pages and deployments post the Service's messages (ChatMessage::MergeMessage,
 * NoteMessage, WikiPageMessage, DeploymentMessage) to each event's channel; Slack carries every
 * event flag (deployment_events too) on its entity, settable with the PUT; Discord, Microsoft Teams
 * and Google Chat post the same events in their own forms, deployments aside.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createCiProject, pushFiles, type CiProject } from '../helpers/ci.ts';

interface Post { path: string; payload: any }

describe('chat integrations: merge request, comment, wiki page and deployment events', () => {
  let t: TestApp;
  let p: CiProject;
  let receiver: http.Server;
  let receiverUrl: string;
  let web: string;
  let projectName: string;
  let who: string;
  let sha: string;
  const posts: Post[] = [];

  async function waitFor(pred: () => boolean, what: string, ms = 15_000): Promise<void> {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(posts.map((x) => x.payload))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const settle = () => new Promise((r) => setTimeout(r, 800));
  const base = () => `/api/v4/projects/${p.project.id}`;
  const put = async (slug: string, payload: Record<string, unknown>) => {
    const res = await t.request({ method: 'PUT', url: `${base()}/integrations/${slug}`, token: p.ownerToken, payload: { webhook: `${receiverUrl}/${slug}`, ...payload } });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const call = async (method: 'POST' | 'PUT', url: string, payload: Record<string, unknown>, code: number) => {
    const res = await t.request({ method, url: `${base()}${url}`, token: p.ownerToken, payload });
    assert.equal(res.statusCode, code, res.body);
    return res.json();
  };
  /** The posts of one call, waited for and taken off the list. */
  async function take(n: number, what: string): Promise<Post[]> {
    await waitFor(() => posts.length >= n, what);
    await settle();
    assert.equal(posts.length, n, JSON.stringify(posts));
    return posts.splice(0);
  }

  before(async () => {
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const json = req.headers['content-type'] === 'application/json';
        posts.push({ path: req.url ?? '', payload: JSON.parse(json ? text : new URLSearchParams(text).get('payload') ?? 'null') });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    t = await startTestApp({ KILN_JOB_POLL_MS: '50' });
    p = await createCiProject(t);
    web = `http://kiln.test/${p.fullPath}`;
    const project = (await t.request({ method: 'GET', url: base(), token: p.ownerToken })).json();
    projectName = project.name_with_namespace;
    const owner = (await t.request({ method: 'GET', url: '/api/v4/user', token: p.ownerToken })).json();
    who = `${owner.name} (${owner.username})`;
    sha = await pushFiles(t, p, { 'README.md': 'hello\n' }, { message: 'Ship the readme\n\nWith a body.' });
    await pushFiles(t, p, { 'feature.txt': 'f\n' }, { message: 'A feature', branch: 'feature' });
    const res = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { allow_local_requests_from_web_hooks_and_services: true } });
    assert.equal(res.statusCode, 200, res.body);
  });

  after(async () => {
    await t.close();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  it('offers every event flag and channel on Slack, deployment_events off until set', async () => {
    let body = await put('slack', { channel: 'general' });
    assert.equal(body.deployment_events, false);
    for (const flag of ['merge_requests_events', 'note_events', 'confidential_note_events', 'wiki_page_events']) assert.equal(body[flag], true, flag);
    body = await put('slack', {
      deployment_events: true, push_events: false, issues_events: false, merge_request_channel: 'mrs', note_channel: 'notes',
      wiki_page_channel: 'wiki', deployment_channel: 'deploys',
    });
    assert.equal(body.deployment_events, true);
    assert.deepEqual(body.properties, { channel: 'general', merge_request_channel: 'mrs', note_channel: 'notes', wiki_page_channel: 'wiki', deployment_channel: 'deploys' });
    const discord = await t.request({ method: 'GET', url: `${base()}/integrations/discord`, token: p.ownerToken });
    assert.equal(discord.json().deployment_events, false);
  });

  it('posts a merge request opened and closed, not its updates', async () => {
    const mr = await call('POST', '/merge_requests', { source_branch: 'feature', target_branch: 'main', title: 'Add the [feature]\nsecond line' }, 201);
    const [opened] = await take(1, 'the opened merge request');
    const mrLink = `<${web}/-/merge_requests/${mr.iid}|!${mr.iid} *Add the feature*>`;
    assert.equal(opened.path, '/slack');
    assert.equal(opened.payload.channel, 'mrs');
    assert.equal(opened.payload.text, `${who} opened merge request ${mrLink} in <${web}|${projectName}>`);
    assert.deepEqual(opened.payload.attachments, []);
    await call('PUT', `/merge_requests/${mr.iid}`, { description: 'changed' }, 200);
    await settle();
    assert.equal(posts.length, 0, 'an update posts nothing');
    await call('PUT', `/merge_requests/${mr.iid}`, { state_event: 'close' }, 200);
    const [closed] = await take(1, 'the closed merge request');
    assert.equal(closed.payload.text, `${who} closed merge request ${mrLink} in <${web}|${projectName}>`);
    await call('PUT', `/merge_requests/${mr.iid}`, { state_event: 'reopen' }, 200);
    await take(1, 'the reopened merge request');

    const note = await call('POST', `/merge_requests/${mr.iid}/notes`, { body: 'Looks [good](http://x.example)' }, 201);
    const [comment] = await take(1, 'the merge request comment');
    assert.equal(comment.payload.channel, 'notes');
    assert.equal(
      comment.payload.text,
      `${who} <${web}/-/merge_requests/${mr.iid}#note_${note.id}|commented on merge request !${mr.iid}> in <${web}|${projectName}>: *Add the [feature]*`,
    );
    assert.deepEqual(comment.payload.attachments, [{ text: 'Looks <http://x.example|good>', color: '#334455' }]);
  });

  it('posts comments on issues (internal ones to the note channel too), commits and snippets', async () => {
    const issue = await call('POST', '/issues', { title: 'Broken build\nmore' }, 201);
    await settle();
    posts.length = 0;
    const note = await call('POST', `/issues/${issue.iid}/notes`, { body: 'See ![shot](/uploads/abc/shot.png)' }, 201);
    const [onIssue] = await take(1, 'the issue comment');
    assert.equal(onIssue.payload.text, `${who} <${web}/-/issues/${issue.iid}#note_${note.id}|commented on issue #${issue.iid}> in <${web}|${projectName}>: *Broken build*`);
    assert.deepEqual(onIssue.payload.attachments, [{ text: `See ${web}/uploads/abc/shot.png`, color: '#334455' }]);

    await call('POST', `/issues/${issue.iid}/notes`, { body: 'Only for us', internal: true }, 201);
    const [internal] = await take(1, 'the internal comment');
    assert.equal(internal.payload.channel, 'notes', 'a confidential note falls back to the note channel');
    await put('slack', { confidential_note_channel: 'secret' });
    await call('POST', `/issues/${issue.iid}/notes`, { body: 'Still for us', internal: true }, 201);
    assert.equal((await take(1, 'the second internal comment'))[0].payload.channel, 'secret');

    await call('POST', `/repository/commits/${sha}/comments`, { note: 'Nice commit' }, 201);
    const [onCommit] = await take(1, 'the commit comment');
    assert.match(onCommit.payload.text, new RegExp(`^${who.replace(/[()]/g, '\\$&')} <${web}/-/commit/${sha}#note_\\d+\\|commented on commit ${sha.slice(0, 8)}> in <${web}\\|[^>]+>: \\*Ship the readme\\*$`));

    const snippet = await call('POST', '/snippets', { title: 'Handy script', file_name: 'a.sh', content: 'echo', visibility: 'private' }, 201);
    const onSnippetNote = await call('POST', `/snippets/${snippet.id}/notes`, { body: 'Handy' }, 201);
    const [onSnippet] = await take(1, 'the snippet comment');
    assert.equal(
      onSnippet.payload.text,
      `${who} <${web}/-/snippets/${snippet.id}#note_${onSnippetNote.id}|commented on snippet $${snippet.id}> in <${web}|${projectName}>: *Handy script*`,
    );
  });

  it('posts wiki pages created and edited with their commit message', async () => {
    await call('POST', '/wikis', { title: 'Runbook', content: 'first' }, 201);
    const [created] = await take(1, 'the created page');
    assert.equal(created.payload.channel, 'wiki');
    assert.equal(created.payload.text, `${who} created <${web}/-/wikis/Runbook|wiki page> in <${web}|${projectName}>: *Runbook*`);
    assert.deepEqual(created.payload.attachments, [{ text: `${p.owner.username} created page: Runbook`, color: '#334455' }]);
    await call('PUT', '/wikis/Runbook', { content: 'second' }, 200);
    const [edited] = await take(1, 'the edited page');
    assert.match(edited.payload.text, /^.* edited <[^|]+\|wiki page> in /);
  });

  it('posts each deployment status change', async () => {
    const deployment = await call('POST', '/deployments', { environment: 'staging', sha, ref: 'main', tag: false, status: 'running' }, 201);
    const [running] = await take(1, 'the running deployment');
    assert.equal(running.payload.channel, 'deploys');
    assert.equal(running.payload.text, 'Starting deploy to staging');
    assert.deepEqual(running.payload.attachments, [{
      text: `<${web}|${projectName}> with job [#]() by <http://kiln.test/${p.owner.username}|${who}>\n<${web}/-/commit/${sha}|${sha.slice(0, 8)}>: Ship the readme`,
      color: '#334455',
    }]);
    await call('PUT', `/deployments/${deployment.id}`, { status: 'success' }, 200);
    const [done] = await take(1, 'the finished deployment');
    assert.equal(done.payload.text, 'Deploy to staging succeeded');
    assert.equal(done.payload.attachments[0].color, 'good');
  });

  it('Discord, Microsoft Teams and Google Chat post the same events in their own forms, deployments aside', async () => {
    await put('slack', { merge_requests_events: false, note_events: false, confidential_note_events: false, wiki_page_events: false, deployment_events: false });
    await put('discord', { wiki_page_events: true, note_events: false, confidential_note_events: false, merge_requests_events: false });
    await put('microsoft-teams', { merge_requests_events: true, note_events: false, confidential_note_events: false, wiki_page_events: false });
    await put('hangouts-chat', { note_events: true, merge_requests_events: false, wiki_page_events: false });
    posts.length = 0;
    await call('POST', '/wikis', { title: 'Guide', content: 'g' }, 201);
    const [wiki] = await take(1, 'the Discord wiki post');
    assert.equal(wiki.path, '/discord');
    const embed = wiki.payload.embeds[0];
    assert.equal(embed.description, `${who} created [wiki page](${web}/-/wikis/Guide) in [${projectName}](${web}): *Guide*\n${p.owner.username} created page: Guide`);
    assert.equal(embed.author.name, p.owner.username);

    await pushFiles(t, p, { 'second.txt': 's\n' }, { message: 'Second', branch: 'second' });
    const mr = await call('POST', '/merge_requests', { source_branch: 'second', target_branch: 'main', title: 'Second look' }, 201);
    const [card] = await take(1, 'the Teams merge request card');
    assert.equal(card.path, '/microsoft-teams');
    const mrLink = `[!${mr.iid} *Second look*](${web}/-/merge_requests/${mr.iid})`;
    assert.equal(card.payload.summary, `${who} opened merge request ${mrLink} in [${projectName}](${web})`);
    assert.deepEqual(card.payload.sections, [{
      activityTitle: `Merge request opened by ${who}`, activitySubtitle: `in [${projectName}](${web})`, activityText: mrLink, activityImage: null,
    }]);

    const note = await call('POST', `/merge_requests/${mr.iid}/notes`, { body: 'Agreed' }, 201);
    const [chat] = await take(1, 'the Google Chat comment');
    assert.equal(chat.path, '/hangouts-chat');
    assert.equal(
      chat.payload.text,
      `${who} <${web}/-/merge_requests/${mr.iid}#note_${note.id}|commented on merge request !${mr.iid}> in <${web}|${projectName}>: *Second look*\nAgreed`,
    );

    // None of the three hears deployments: the flag is not theirs to set.
    const res = await t.request({ method: 'GET', url: `${base()}/integrations/hangouts-chat`, token: p.ownerToken });
    assert.equal(res.json().deployment_events, false);
    await call('POST', '/deployments', { environment: 'production', sha, ref: 'main', tag: false, status: 'success' }, 201);
    await settle();
    assert.equal(posts.length, 0);
  });
});
