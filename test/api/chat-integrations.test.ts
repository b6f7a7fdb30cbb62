/**
 * The chat integrations (issue 31, item 9): Slack and Mattermost (and Discord, in Markdown as an embed) set up with a PUT post the
 * Service's messages (Slack's form field `payload`, text + attachments) to their webhook for a
 * real git push over HTTP, an issue and a pipeline, to the event's channel; the webhook URL is a
 * secret and passes the webhooks' local-address check; pipelines are posted only when broken
 * unless notify_only_broken_pipelines is off; pushes only for the branches chosen.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { createCiProject, createPipeline, type CiProject } from '../helpers/ci.ts';
import { pushClone, type PushClone } from '../helpers/ci-push.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';

interface Post { path: string; contentType: string | undefined; payload: any }

describe('chat integrations', () => {
  let t: ListeningTestApp;
  let p: CiProject;
  let clone: PushClone;
  let receiver: http.Server;
  let receiverUrl: string;
  let web: string;
  let owner: { name: string; username: string };
  const posts: Post[] = [];

  async function waitFor(pred: () => boolean, what: string, ms = 15_000): Promise<void> {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(posts.map((x) => x.payload.text))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const settle = () => new Promise((r) => setTimeout(r, 800));
  const base = () => `/api/v4/projects/${p.project.id}`;
  // Every PUT names the required webhook (the Service's API requires it each time).
  const put = async (slug: string, payload: Record<string, unknown>) => {
    const res = await t.request({ method: 'PUT', url: `${base()}/integrations/${slug}`, token: p.ownerToken, payload: { webhook: `${receiverUrl}/${slug}`, ...payload } });
    assert.equal(res.statusCode, 200, res.body);
    return res;
  };

  before(async () => {
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const json = req.headers['content-type'] === 'application/json';
        const payload = JSON.parse(json ? text : new URLSearchParams(text).get('payload') ?? 'null');
        posts.push({ path: req.url ?? '', contentType: req.headers['content-type'], payload });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    t = await startListeningApp({ KILN_JOB_POLL_MS: '50', KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    p = await createCiProject(t);
    web = `${t.url}/${p.fullPath}`;
    owner = (await t.request({ method: 'GET', url: '/api/v4/user', token: p.ownerToken })).json();
    clone = await pushClone(t.url, p);
    await clone.commitAndPush({ 'README.md': 'hello\n' }, { message: 'Initial commit' });
  });

  after(async () => {
    // Whatever before() got to: a set-up that failed half-way must not keep the receiver open.
    await clone?.remove();
    await t?.close();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  const allowLocal = async (on: boolean) => {
    const res = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { allow_local_requests_from_web_hooks_and_services: on } });
    assert.equal(res.statusCode, 200, res.body);
  };

  it('refuses a webhook URL that is not a valid public URL, local ones unless the instance allows them', async () => {
    for (const webhook of [`${receiverUrl}/slack`, 'http://localhost:9/x', 'http://10.1.2.3/x', 'http://[::1]/x', 'not a url', 'ftp://chat.example/x']) {
      const res = await t.request({ method: 'PUT', url: `${base()}/integrations/slack`, token: p.ownerToken, payload: { webhook } });
      assert.equal(res.statusCode, 400, webhook);
      assert.deepEqual(res.json(), { message: '400 Bad Request' });
    }
    const none = await t.request({ method: 'GET', url: `${base()}/integrations`, token: p.ownerToken });
    assert.deepEqual(none.json(), []);
    const ok = await t.request({ method: 'PUT', url: `${base()}/integrations/discord`, token: p.ownerToken, payload: { webhook: 'https://chat.example/hooks/1' } });
    assert.equal(ok.statusCode, 200, ok.body);
    const off = await t.request({ method: 'DELETE', url: `${base()}/integrations/discord`, token: p.ownerToken });
    assert.equal(off.statusCode, 204);
    await allowLocal(true);
  });

  it('sets Slack up with a PUT, never returning nor storing the webhook in the clear', async () => {
    const res = await put('slack', { username: 'kiln-bot', channel: 'general', push_channel: 'pushes, code' });
    const body = res.json();
    assert.equal(body.slug, 'slack');
    assert.equal(body.active, true);
    assert.deepEqual(body.properties, { username: 'kiln-bot', channel: 'general', push_channel: 'pushes, code' });
    assert.doesNotMatch(res.body, /\/slack/);
    const got = await t.request({ method: 'GET', url: `${base()}/integrations/slack`, token: p.ownerToken });
    assert.doesNotMatch(got.body, new RegExp(receiverUrl));
    const row = await t.db.selectFrom('integrations').selectAll().where('project_id', '=', p.project.id).where('type', '=', 'slack').executeTakeFirstOrThrow();
    assert.doesNotMatch(JSON.stringify(row), new RegExp(receiverUrl));
    const missing = await t.request({ method: 'PUT', url: `${base()}/integrations/mattermost`, token: p.ownerToken, payload: { channel: 'x' } });
    assert.equal(missing.statusCode, 400);
    assert.match(missing.body, /webhook/);
  });

  it('posts nothing to a local address once the instance no longer allows it', async () => {
    await allowLocal(false);
    posts.length = 0;
    await clone.commitAndPush({ 'a.txt': 'a\n' }, { message: 'Blocked push' });
    // The integration's job has run (and posted nothing) before local requests are allowed again.
    const pending = async () => (await t.db.selectFrom('background_jobs').select('id').where('kind', '=', 'integrations.execute')
      .where('state', 'in', ['queued', 'running']).execute()).length;
    await settle();
    const end = Date.now() + 15_000;
    while (await pending() > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    assert.equal(await pending(), 0);
    assert.equal(posts.length, 0);
    await allowLocal(true);
  });

  it('posts a push with its commits, once per channel of the push channel', async () => {
    posts.length = 0;
    const sha = await clone.commitAndPush({ 'b.txt': 'b\n' }, { message: 'Add the [b] file' });
    await waitFor(() => posts.length >= 2, 'the push posts');
    await settle();
    assert.equal(posts.length, 2);
    assert.deepEqual(posts.map((x) => x.payload.channel).sort(), ['code', 'pushes']);
    const { payload, contentType, path } = posts[0];
    assert.equal(path, '/slack');
    assert.equal(contentType, 'application/x-www-form-urlencoded');
    assert.equal(payload.username, 'kiln-bot');
    assert.match(payload.text, new RegExp(`^${owner.name} pushed to branch <${web}/-/commits/main\\|main> of <${web}\\|[^>]+> \\(<${web}/-/compare/[0-9a-f]{40}\\.\\.\\.${sha}\\|Compare changes>\\)$`));
    assert.equal(payload.fallback, payload.text);
    const author = (await clone.run(['log', '-1', '--format=%an'])).trim();
    assert.deepEqual(payload.attachments, [{ text: `<${web}/-/commit/${sha}|${sha.slice(0, 8)}>: Add the b file - ${author}`, color: '#334455' }]);
  });

  it('posts pushes only for the branches chosen (the default branch unless told)', async () => {
    posts.length = 0;
    await clone.commitAndPush({ 'c.txt': 'c\n' }, { message: 'On the side', branch: 'side' });
    await settle();
    assert.equal(posts.length, 0, 'a new side branch is not posted by default');
    await put('slack', { branches_to_be_notified: 'all' });
    await clone.commitAndPush({ 'd.txt': 'd\n' }, { message: 'A new feature', branch: 'feature' });
    await waitFor(() => posts.length >= 2, 'the new branch posts');
    assert.match(posts[0].payload.text, new RegExp(`^${owner.name} pushed new branch <${web}/-/commits/feature\\|feature> to <${web}\\|`));
    assert.deepEqual(posts[0].payload.attachments, []);
    await put('slack', { branches_to_be_notified: 'protected', push_events: true });
    posts.length = 0;
    await clone.commitAndPush({ 'e.txt': 'e\n' }, { message: 'More feature', branch: 'feature' });
    await clone.commitAndPush({ 'f.txt': 'f\n' }, { message: 'On main' });
    await waitFor(() => posts.length >= 2, 'the protected branch posts');
    await settle();
    assert.ok(posts.every((x) => x.payload.text.includes('|main>')), 'only main (protected) is posted');
    await put('slack', { push_events: false });
  });

  it('posts an opened and a closed issue to the default channel, and not its updates', async () => {
    posts.length = 0;
    let res = await t.request({ method: 'POST', url: `${base()}/issues`, token: p.ownerToken, payload: { title: 'Broken <build>', description: 'It fails [here](https://example.com/x)' } });
    assert.equal(res.statusCode, 201, res.body);
    const issue = res.json();
    await waitFor(() => posts.length >= 1, 'the issue post');
    let { payload } = posts[0];
    assert.equal(payload.channel, 'general');
    const issueLink = `<${issue.web_url}|#${issue.iid} Broken build>`;
    assert.match(payload.text, new RegExp(`^\\[<${web}\\|[^>]+>\\] Issue ${issueLink.replace(/[|]/g, '\\|')} opened by ${owner.name} \\(${owner.username}\\)$`));
    assert.deepEqual(payload.attachments, [{
      title: `#${issue.iid} Broken build`, title_link: issue.web_url, text: 'It fails <https://example.com/x|here>', color: '#C95823',
    }]);
    res = await t.request({ method: 'PUT', url: `${base()}/issues/${issue.iid}`, token: p.ownerToken, payload: { title: 'Broken build' } });
    assert.equal(res.statusCode, 200);
    await settle();
    assert.equal(posts.length, 1, 'an update posts nothing');
    res = await t.request({ method: 'PUT', url: `${base()}/issues/${issue.iid}`, token: p.ownerToken, payload: { state_event: 'close' } });
    assert.equal(res.statusCode, 200);
    await waitFor(() => posts.length >= 2, 'the close post');
    ({ payload } = posts[1]);
    assert.match(payload.text, / closed by /);
    assert.deepEqual(payload.attachments, []);
  });

  it('posts a broken pipeline, and a passed one only once notify_only_broken_pipelines is off', async () => {
    await put('slack', { pipeline_events: true, issues_events: false, pipeline_channel: 'ci' });
    const runner = await TestRunner.register(t, { tags: ['chat'], runUntagged: false });
    posts.length = 0;
    await clone.commitAndPush({ '.gitlab-ci.yml': 'unit:\n  tags: [chat]\n  script: echo hi\n' }, { message: 'Add CI' });
    let job = await (async () => {
      for (let i = 0; i < 100; i++) {
        const j = await runner.request();
        if (j) return j;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error('no job');
    })();
    assert.equal((await runner.update(job, 'success')).statusCode, 200);
    await settle();
    assert.equal(posts.length, 0, 'a passed pipeline is not posted by default');

    const failing = await createPipeline(t, p);
    job = await runner.requestJob();
    assert.equal((await runner.update(job, 'failed', 'script_failure')).statusCode, 200);
    await waitFor(() => posts.length >= 1, 'the failed pipeline post');
    const { payload } = posts[0];
    assert.equal(payload.channel, 'ci');
    assert.equal(payload.text, '');
    const failures = `${web}/-/pipelines/${failing.id}/failures`;
    const [att] = payload.attachments;
    assert.equal(att.color, 'danger');
    assert.match(att.title, new RegExp(`^Pipeline #${failing.id} has failed in \\d\\d:\\d\\d$`));
    assert.equal(att.title_link, failures);
    assert.match(att.fallback, new RegExp(`: Pipeline <${failures}\\|#${failing.id}> of branch <${web}/-/commits/main\\|main> by ${owner.name} \\(${owner.username}\\) has failed in `));
    assert.deepEqual(att.fields.map((f: any) => f.title), ['Branch', 'Commit', 'Failed stage', 'Failed job']);
    assert.equal(att.fields[1].value, `<${web}/-/commit/${failing.sha}|Add CI>`);
    assert.equal(att.fields[3].value, `<${web}/-/jobs/${job.id}|unit>`);

    await put('slack', { notify_only_broken_pipelines: false });
    posts.length = 0;
    const passing = await createPipeline(t, p);
    job = await runner.requestJob();
    assert.equal((await runner.update(job, 'success')).statusCode, 200);
    await waitFor(() => posts.length >= 1, 'the passed pipeline post');
    assert.equal(posts[0].payload.attachments[0].color, 'good');
    assert.match(posts[0].payload.attachments[0].title, new RegExp(`^Pipeline #${passing.id} has passed in `));
  });

  it('Mattermost posts the same messages to its own webhook', async () => {
    await put('slack', { push_events: false, pipeline_events: false });
    const res = await put('mattermost', { branches_to_be_notified: 'all' });
    assert.doesNotMatch(res.body, /\/mattermost/);
    posts.length = 0;
    await clone.commitAndPush({ 'g.txt': 'g\n' }, { message: 'For Mattermost' });
    await waitFor(() => posts.some((x) => x.path === '/mattermost'), 'the Mattermost post');
    const post = posts.find((x) => x.path === '/mattermost')!;
    assert.match(post.payload.text, new RegExp(`^${owner.name} pushed to branch <${web}/-/commits/main\\|main>`));
    assert.equal('channel' in post.payload, false);
  });

  it('Discord posts the Markdown message as an embed', async () => {
    await put('mattermost', { push_events: false, issues_events: false });
    const res = await put('discord', { branches_to_be_notified: 'all' });
    assert.doesNotMatch(res.body, /\/discord/);
    assert.deepEqual(res.json().properties, { branches_to_be_notified: 'all' });
    posts.length = 0;
    const sha = await clone.commitAndPush({ 'h.txt': 'h\n' }, { message: 'For Discord' });
    await waitFor(() => posts.some((x) => x.path === '/discord'), 'the Discord post');
    await settle();
    assert.deepEqual(posts.map((x) => x.path), ['/discord']);
    const { payload, contentType } = posts[0];
    assert.equal(contentType, 'application/json');
    assert.equal(payload.embeds.length, 1);
    const [embed] = payload.embeds;
    assert.equal(embed.color, 0xfc6d26);
    assert.equal(embed.author.name, owner.name);
    assert.match(embed.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const author = (await clone.run(['log', '-1', '--format=%an'])).trim();
    const compare = `\\(\\[Compare changes\\]\\(${web}/-/compare/[0-9a-f]{40}\\.\\.\\.${sha}\\)\\)`;
    assert.match(embed.description, new RegExp(`^${owner.name} pushed to branch \\[main\\]\\(${web}/-/commits/main\\) of \\[[^\\]]+\\]\\(${web}\\) ${compare}\n`));
    assert.ok(embed.description.endsWith(`\n[${sha.slice(0, 8)}](${web}/-/commit/${sha}): For Discord - ${author}`), embed.description);

    posts.length = 0;
    const created = await t.request({
      method: 'POST', url: `${base()}/issues`, token: p.ownerToken, payload: { title: 'Seen on Discord', description: 'Details' },
    });
    const issue = created.json();
    await waitFor(() => posts.length >= 1, 'the Discord issue post');
    assert.equal(posts[0].payload.embeds[0].author.name, owner.username);
    const opened = `\\] Issue \\[#${issue.iid} Seen on Discord\\]\\(${issue.web_url}\\) opened by ${owner.name} \\(${owner.username}\\)`;
    assert.match(posts[0].payload.embeds[0].description, new RegExp(`${opened}\nDetails$`));
  });

  it('Google Chat posts one text: the message, then the first attachment', async () => {
    await put('discord', { push_events: false, issues_events: false });
    const res = await put('hangouts-chat', { branches_to_be_notified: 'all' });
    assert.doesNotMatch(res.body, /\/hangouts-chat/);
    posts.length = 0;
    const sha = await clone.commitAndPush({ 'i.txt': 'i\n' }, { message: 'For Google Chat' });
    await waitFor(() => posts.some((x) => x.path === '/hangouts-chat'), 'the Google Chat post');
    await settle();
    assert.deepEqual(posts.map((x) => x.path), ['/hangouts-chat']);
    const { payload, contentType } = posts[0];
    assert.equal(contentType, 'application/json');
    const author = (await clone.run(['log', '-1', '--format=%an'])).trim();
    const lines = payload.text.split('\n');
    assert.match(lines[0], new RegExp(`^${owner.name} pushed to branch <${web}/-/commits/main\\|main> of `));
    assert.equal(lines[1], `<${web}/-/commit/${sha}|${sha.slice(0, 8)}>: For Google Chat - ${author}`);

    posts.length = 0;
    const created = await t.request({
      method: 'POST', url: `${base()}/issues`, token: p.ownerToken, payload: { title: 'Seen in the room', description: 'More' },
    });
    const issue = created.json();
    await waitFor(() => posts.length >= 1, 'the Google Chat issue post');
    assert.ok(posts[0].payload.text.endsWith(`\n<${issue.web_url}|#${issue.iid} Seen in the room>\nMore`), posts[0].payload.text);
  });

  it('Microsoft Teams posts a MessageCard with the activity and the Markdown commits', async () => {
    await put('hangouts-chat', { push_events: false, issues_events: false });
    const res = await put('microsoft-teams', { branches_to_be_notified: 'all' });
    assert.doesNotMatch(res.body, /\/microsoft-teams/);
    posts.length = 0;
    const sha = await clone.commitAndPush({ 'j.txt': 'j\n' }, { message: 'For Teams' });
    await waitFor(() => posts.some((x) => x.path === '/microsoft-teams'), 'the Teams post');
    await settle();
    assert.deepEqual(posts.map((x) => x.path), ['/microsoft-teams']);
    const { payload, contentType } = posts[0];
    assert.equal(contentType, 'application/json');
    assert.match(payload.title, / \/ /);
    assert.match(payload.summary, new RegExp(`^${owner.name} pushed to branch \\[main\\]\\(${web}/-/commits/main\\) of `));
    const author = (await clone.run(['log', '-1', '--format=%an'])).trim();
    assert.deepEqual(payload.sections[0].activityTitle, `${owner.name} pushed to branch [main](${web}/-/commits/main)`);
    assert.match(payload.sections[0].activitySubtitle, new RegExp(`^in \\[[^\\]]+\\]\\(${web}\\)$`));
    assert.match(payload.sections[0].activityText, new RegExp(`^\\[Compare changes\\]\\(${web}/-/compare/[0-9a-f]{40}\\.\\.\\.${sha}\\)$`));
    assert.deepEqual(payload.sections[1], { text: `[${sha.slice(0, 8)}](${web}/-/commit/${sha}): For Teams - ${author}` });
  });
});
