/**
 * Pushes to a project wiki over HTTP (issue 31, item 5), as the Service's Git::WikiPushService
 * 15.2 handles them: each page file changed on the wiki's default branch becomes a project
 * activity event (created, updated, destroyed) by the pusher, pointing at the page's
 * WikiPage::Meta with its title; files that are no page make none; and a wiki push runs no
 * wiki_page webhook (the Service fires those only for edits through the API and the UI).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startListeningApp, git, tempDir, cloneUrl } from '../helpers/git.ts';
import { ROOT_TOKEN, type TestApp } from '../helpers/app.ts';
import { createPeople, createProject, type People } from '../helpers/noteables.ts';

describe('wiki pushes', () => {
  let t: TestApp & { baseUrl: string };
  let people: People;
  let project: number;
  let fullPath: string;
  let dir: string;
  let work: string;
  let receiver: http.Server;
  const received: string[] = [];

  const wikiEvents = async () => {
    const res = await t.request({ method: 'GET', url: `/api/v4/projects/${project}/events?target_type=wiki&sort=asc`, token: people.tokens.owner });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { action_name: string; target_type: string; target_title: string; author_username: string; target_id: number }[];
  };
  async function waitForEvents(n: number) {
    const end = Date.now() + 15_000;
    while ((await wikiEvents()).length < n) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${n} wiki events: ${JSON.stringify(await wikiEvents())}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  async function commitAndPush(message: string) {
    assert.equal((await git(['add', '-A', '.'], work)).code, 0);
    assert.equal((await git(['commit', '-m', message], work)).code, 0);
    const push = await git(['push', 'origin', 'HEAD:main'], work);
    assert.equal(push.code, 0, push.stderr);
  }

  before(async () => {
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => { received.push(String(req.headers['x-gitlab-event'])); res.writeHead(200).end(); });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    t = await startListeningApp({ KILN_JOB_POLL_MS: '50' });
    people = await createPeople(t);
    project = await createProject(t, people);
    fullPath = (await t.request({ method: 'GET', url: `/api/v4/projects/${project}`, token: people.tokens.owner })).json().path_with_namespace;
    let res = await t.request({
      method: 'PUT', url: '/api/v4/application/settings', token: ROOT_TOKEN, payload: { allow_local_requests_from_web_hooks_and_services: true },
    });
    assert.equal(res.statusCode, 200);
    res = await t.request({
      method: 'POST', url: `/api/v4/projects/${project}/hooks`, token: people.tokens.owner,
      payload: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, push_events: true, wiki_page_events: true },
    });
    assert.equal(res.statusCode, 201, res.body);
    dir = await tempDir();
    const url = cloneUrl(t.baseUrl, `${fullPath}.wiki`, { username: people.users.developer.username, password: people.tokens.developer });
    const clone = await git(['clone', url, 'wiki'], dir);
    assert.equal(clone.code, 0, clone.stderr);
    work = path.join(dir, 'wiki');
  });

  after(async () => {
    await fs.rm(dir, { recursive: true, force: true });
    await t.close();
    receiver.close();
  });

  it('records a created event per new page, none for other files, and no wiki page webhook', async () => {
    await fs.mkdir(path.join(work, 'guides'), { recursive: true });
    await fs.writeFile(path.join(work, 'Home.md'), 'home');
    await fs.writeFile(path.join(work, 'guides', 'Set-Up.asciidoc'), 'set up');
    await fs.writeFile(path.join(work, 'logo.png'), 'not a page');
    await commitAndPush('Two pages and a picture');
    await waitForEvents(2);
    await new Promise((r) => setTimeout(r, 800));
    const events = await wikiEvents();
    assert.equal(events.length, 2);
    assert.deepEqual(events.map((e) => [e.action_name, e.target_type, e.target_title]).sort(), [
      ['created', 'WikiPage::Meta', 'Home'], ['created', 'WikiPage::Meta', 'Set Up'],
    ]);
    assert.ok(events.every((e) => e.author_username === people.users.developer.username));
    assert.deepEqual(received, [], 'a wiki push runs no webhook');
  });

  it('records updated and destroyed events on the same page records, a rename following its slug', async () => {
    const before = await wikiEvents();
    const home = before.find((e) => e.target_title === 'Home')!;
    const setUp = before.find((e) => e.target_title === 'Set Up')!;
    await fs.writeFile(path.join(work, 'Home.md'), 'home, changed');
    await fs.rm(path.join(work, 'guides', 'Set-Up.asciidoc'));
    await commitAndPush('Change one, drop one');
    await waitForEvents(4);
    const after = (await wikiEvents()).slice(2);
    const byAction = Object.fromEntries(after.map((e) => [e.action_name, e]));
    assert.equal(byAction.updated.target_id, home.target_id);
    assert.equal(byAction.destroyed.target_id, setUp.target_id);
    assert.equal(byAction.destroyed.target_title, 'Set Up');

    await git(['mv', 'Home.md', 'Start-Here.md'], work);
    await commitAndPush('Rename the home page');
    await waitForEvents(5);
    const renamed = (await wikiEvents())[4];
    assert.deepEqual([renamed.action_name, renamed.target_id, renamed.target_title], ['updated', home.target_id, 'Start Here']);
  });

  it('shows wiki events only to those who may read the wiki', async () => {
    const res = await t.request({ method: 'GET', url: `/api/v4/projects/${project}/events?target_type=wiki`, token: people.tokens.nonMember });
    assert.equal(res.statusCode, 404);
    const guest = await t.request({ method: 'GET', url: `/api/v4/projects/${project}/events?target_type=wiki`, token: people.tokens.guest });
    assert.equal(guest.statusCode, 200);
    assert.equal(guest.json().length, 5);
  });
});
