/**
 * Project integrations (issue 31, item 9): the API under /integrations and /services with the
 * Service's entity, Maintainer-only access and secrets never returned nor stored in the clear,
 * and the integrations acting for real on a git push over HTTP: emails-on-push mails an SMTP
 * server, asana comments on and completes tasks at a local stand-in for the Asana API.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, type CiProject } from '../helpers/ci.ts';
import { pushClone, type PushClone } from '../helpers/ci-push.ts';
import { startListeningApp, freePort, type ListeningTestApp } from '../helpers/listen.ts';

interface Mail { from: string; to: string[]; data: string }
interface AsanaCall { method: string; path: string; auth: string | undefined; body: any }

describe('integrations', () => {
  let t: ListeningTestApp;
  let p: CiProject;
  let clone: PushClone;
  let smtp: SMTPServer;
  let asana: http.Server;
  const mails: Mail[] = [];
  const asanaCalls: AsanaCall[] = [];

  async function waitFor(pred: () => boolean, what: string, ms = 15_000): Promise<void> {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const base = () => `/api/v4/projects/${p.project.id}`;

  before(async () => {
    const smtpPort = await freePort();
    smtp = new SMTPServer({
      authOptional: true, disabledCommands: ['STARTTLS'], logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            // Quoted-printable undone, so the text reads as sent.
            data: Buffer.concat(chunks).toString('utf8').replace(/=\r\n/g, '')
              .replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(smtpPort, '127.0.0.1', resolve));
    asana = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        asanaCalls.push({ method: req.method ?? '', path: req.url ?? '', auth: req.headers.authorization, body: text ? JSON.parse(text) : null });
        // Task 404 does not exist; the others do.
        if (req.url?.startsWith('/api/1.0/tasks/404')) res.writeHead(404).end('{"errors":[]}');
        else res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{}}');
      });
    });
    await new Promise<void>((resolve) => asana.listen(0, '127.0.0.1', resolve));
    t = await startListeningApp({
      KILN_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, KILN_SMTP_FROM: 'kiln@kiln.example',
      KILN_ASANA_API_URL: `http://127.0.0.1:${(asana.address() as AddressInfo).port}/api/1.0`,
      KILN_JOB_POLL_MS: '50',
    });
    p = await createCiProject(t);
    clone = await pushClone(t.url, p);
    await clone.commitAndPush({ 'README.md': 'hello\n' }, { message: 'Initial commit' });
  });

  after(async () => {
    await clone.remove();
    await t.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    await new Promise<void>((resolve) => asana.close(() => resolve()));
  });

  it('reads a kind never set up as inactive, sets it up with PUT, lists the active ones, under both names', async () => {
    let res = await t.request({ method: 'GET', url: `${base()}/integrations/emails-on-push`, token: p.ownerToken });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().active, false);
    assert.equal(res.json().id, null);
    assert.equal(res.json().slug, 'emails-on-push');
    res = await t.request({ method: 'GET', url: `${base()}/services`, token: p.ownerToken });
    assert.deepEqual(res.json(), []);

    res = await t.request({ method: 'PUT', url: `${base()}/services/emails-on-push`, token: p.ownerToken, payload: { recipients: 'a@example.com' } });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.active, true);
    assert.equal(body.title, 'Emails on push');
    assert.equal(typeof body.id, 'number');
    assert.deepEqual(body.properties, { recipients: 'a@example.com' });
    for (const key of ['commit_events', 'push_events', 'issues_events', 'confidential_issues_events', 'merge_requests_events',
      'tag_push_events', 'note_events', 'confidential_note_events', 'pipeline_events', 'wiki_page_events', 'job_events',
      'comment_on_event_enabled', 'created_at', 'updated_at']) assert.ok(key in body, key);

    res = await t.request({ method: 'GET', url: `${base()}/integrations`, token: p.ownerToken });
    assert.deepEqual(res.json().map((i: any) => [i.slug, i.active]), [['emails-on-push', true]]);
    assert.equal('properties' in res.json()[0], false);
  });

  it('refuses a missing required setting, a bad choice and an unknown kind', async () => {
    let res = await t.request({ method: 'PUT', url: `${base()}/integrations/asana`, token: p.ownerToken, payload: {} });
    assert.equal(res.statusCode, 400);
    assert.match(res.body, /api_key/);
    res = await t.request({
      method: 'PUT', url: `${base()}/integrations/emails-on-push`, token: p.ownerToken,
      payload: { recipients: 'a@example.com', branches_to_be_notified: 'some' },
    });
    assert.equal(res.statusCode, 400);
    res = await t.request({ method: 'GET', url: `${base()}/integrations/jira`, token: p.ownerToken });
    assert.equal(res.statusCode, 400);
    res = await t.request({ method: 'PUT', url: `${base()}/integrations/jira`, token: p.ownerToken, payload: { url: 'x' } });
    assert.equal(res.statusCode, 404);
  });

  it('never returns nor stores a secret in the clear, and keeps it when a PUT leaves it out', async () => {
    let res = await t.request({ method: 'PUT', url: `${base()}/integrations/asana`, token: p.ownerToken, payload: { api_key: 'asana-secret-key', restrict_to_branch: 'main' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().properties, { restrict_to_branch: 'main' });
    assert.doesNotMatch(res.body, /asana-secret-key/);
    res = await t.request({ method: 'GET', url: `${base()}/integrations/asana`, token: p.ownerToken });
    assert.equal(res.json().active, true);
    assert.doesNotMatch(res.body, /asana-secret-key/);
    const row = await t.db.selectFrom('integrations').selectAll().where('project_id', '=', p.project.id).where('type', '=', 'asana').executeTakeFirstOrThrow();
    assert.doesNotMatch(JSON.stringify(row), /asana-secret-key/);
    assert.ok(row.secrets_sealed);
    // A PUT without the key keeps it (only the named settings change).
    res = await t.request({ method: 'PUT', url: `${base()}/integrations/asana`, token: p.ownerToken, payload: { api_key: 'asana-secret-key', push_events: true } });
    assert.equal(res.statusCode, 200);
  });

  it('is for Maintainers: a Developer is refused, a stranger told the project does not exist', async () => {
    const dev = await createUser(t.db);
    const devToken = await createToken(t.db, dev, { scopes: ['api'] });
    await t.request({ method: 'POST', url: `${base()}/members`, token: ROOT_TOKEN, payload: { user_id: dev.id, access_level: 30 } });
    let res = await t.request({ method: 'GET', url: `${base()}/integrations`, token: devToken });
    assert.equal(res.statusCode, 403);
    res = await t.request({ method: 'PUT', url: `${base()}/integrations/asana`, token: devToken, payload: { api_key: 'x' } });
    assert.equal(res.statusCode, 403);
    const stranger = await createUser(t.db);
    res = await t.request({ method: 'GET', url: `${base()}/integrations/asana`, token: await createToken(t.db, stranger, { scopes: ['api'] }) });
    assert.equal(res.statusCode, 404);
    res = await t.request({ method: 'GET', url: `${base()}/integrations` });
    assert.equal(res.statusCode, 401);
  });

  it('mails a push to the recipients through the SMTP server, with its commits and diff', async () => {
    let res = await t.request({
      method: 'PUT', url: `${base()}/integrations/emails-on-push`, token: p.ownerToken,
      payload: { recipients: 'one@example.com, two@example.com', branches_to_be_notified: 'all' },
    });
    assert.equal(res.statusCode, 200, res.body);
    mails.length = 0;
    const sha = await clone.commitAndPush({ 'notes.txt': 'a new line\n' }, { message: 'Add notes' });
    await waitFor(() => mails.some((m) => m.data.includes('Add notes')), 'the push mail');
    const mail = mails.find((m) => m.data.includes('Add notes'))!;
    assert.deepEqual(mail.to.sort(), ['one@example.com', 'two@example.com']);
    assert.equal(mail.from, 'kiln@kiln.example');
    assert.match(mail.data, new RegExp(`Subject: \\[Git\\]\\[${p.fullPath.replace('/', '\\/')}\\]\\[main\\] Add notes`));
    assert.match(mail.data, new RegExp(sha));
    assert.match(mail.data, /\+a new line/);

    // disable_diffs leaves the diff out; a push to a branch it does not notify sends nothing.
    res = await t.request({
      method: 'PUT', url: `${base()}/integrations/emails-on-push`, token: p.ownerToken,
      payload: { recipients: 'one@example.com two@example.com', disable_diffs: true, branches_to_be_notified: 'default' },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().properties, { recipients: 'one@example.com two@example.com', disable_diffs: true, branches_to_be_notified: 'default' });
    mails.length = 0;
    await clone.commitAndPush({ 'other.txt': 'elsewhere\n' }, { message: 'On a side branch', branch: 'side' });
    await clone.commitAndPush({ 'notes.txt': 'second line\n' }, { message: 'Change notes' });
    await waitFor(() => mails.some((m) => m.data.includes('Change notes')), 'the second push mail');
    await new Promise((r) => setTimeout(r, 300));
    // (The clone's next push to main carries the side commit too: only the side branch's own mail is absent.)
    assert.equal(mails.filter((m) => m.data.includes('branch side')).length, 0, 'the side branch is not mailed');
    assert.doesNotMatch(mails.find((m) => m.data.includes('Change notes'))!.data, /\+second line/);
  });

  it('comments on and completes the Asana tasks the pushed commits mention', async () => {
    const res = await t.request({ method: 'PUT', url: `${base()}/integrations/asana`, token: p.ownerToken, payload: { api_key: 'asana-secret-key', restrict_to_branch: '' } });
    assert.equal(res.statusCode, 200, res.body);
    // Local addresses are refused unless the instance allows them (as for webhooks).
    asanaCalls.length = 0;
    await clone.commitAndPush({ 'a.txt': 'a\n' }, { message: 'Touches #111' });
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(asanaCalls.length, 0);
    await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { allow_local_requests_from_web_hooks_and_services: true } });

    await clone.commitAndPush({ 'b.txt': 'b\n' }, { message: 'Fixes #222 and see https://app.asana.com/0/1/333 and #404' });
    await waitFor(() => asanaCalls.filter((c) => c.path.includes('/stories')).length >= 2 && asanaCalls.some((c) => c.method === 'PUT'), 'the Asana calls');
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(asanaCalls.every((c) => c.auth === 'Bearer asana-secret-key'));
    const stories = asanaCalls.filter((c) => c.method === 'POST');
    assert.deepEqual(stories.map((c) => c.path).sort(), ['/api/1.0/tasks/222/stories', '/api/1.0/tasks/333/stories']);
    assert.match(stories[0].body.data.text, new RegExp(`pushed to branch main of .* \\( ${t.url}/${p.fullPath}/-/commit/[0-9a-f]{40} \\): Fixes #222`));
    // Only the keyword's task is completed.
    assert.deepEqual(asanaCalls.filter((c) => c.method === 'PUT').map((c) => [c.path, c.body]), [['/api/1.0/tasks/222', { data: { completed: true } }]]);
  });

  it('DELETE turns an integration off and clears its settings; it then acts no more', async () => {
    let res = await t.request({ method: 'DELETE', url: `${base()}/services/asana`, token: p.ownerToken });
    assert.equal(res.statusCode, 204);
    res = await t.request({ method: 'GET', url: `${base()}/services/asana`, token: p.ownerToken });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().active, false);
    assert.deepEqual(res.json().properties, {});
    const row = await t.db.selectFrom('integrations').selectAll().where('project_id', '=', p.project.id).where('type', '=', 'asana').executeTakeFirstOrThrow();
    assert.equal(row.secrets_sealed, null);
    res = await t.request({ method: 'GET', url: `${base()}/integrations`, token: p.ownerToken });
    assert.deepEqual(res.json().map((i: any) => i.slug), ['emails-on-push']);
    asanaCalls.length = 0;
    await clone.commitAndPush({ 'c.txt': 'c\n' }, { message: 'Closes #555' });
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(asanaCalls.length, 0);
  });
});
