/**
 * A page on another origin calls kiln's API with fetch() and a PRIVATE-TOKEN header in a real
 * browser (Debian's chromium, driven by playwright-core), as gitbeaker does in a web page
 * (issue 35, item 10): Chromium sends the preflight, and the page can read the JSON and the
 * pagination headers the API exposes. Skipped only when /usr/bin/chromium is not installed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createToken, createUser } from '../helpers/factories.ts';

const CHROMIUM = '/usr/bin/chromium';

describe('the API from a page on another origin, in a real browser', () => {
  if (!fs.existsSync(CHROMIUM)) {
    it('needs chromium', (t) => t.skip(`${CHROMIUM} is not installed (apt-get install chromium)`));
    return;
  }
  let t: ListeningTestApp;
  let browser: Browser;
  let pageServer: http.Server;
  let pageOrigin: string;

  before(async () => {
    t = await startListeningApp();
    // The web application's own origin: another port on another host name than kiln's 127.0.0.1.
    pageServer = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>');
    });
    await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://localhost:${(pageServer.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
    });
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => pageServer?.close(resolve));
    await t?.close();
  });

  it('reads a page of projects with X-Total and Link through fetch() with PRIVATE-TOKEN', async () => {
    const user = await createUser(t.db);
    const token = await createToken(t.db, user);
    for (const name of ['one', 'two', 'three']) {
      const res = await fetch(`${t.url}/api/v4/projects`, {
        method: 'POST', headers: { 'private-token': token, 'content-type': 'application/json' }, body: JSON.stringify({ name }),
      });
      assert.equal(res.status, 201);
    }
    const page = await browser.newPage();
    await page.goto(`${pageOrigin}/`);
    const api = t.url;
    const answer = await page.evaluate(async ({ api, token }) => {
      const res = await fetch(`${api}/api/v4/projects?owned=true&per_page=2`, { headers: { 'PRIVATE-TOKEN': token } });
      const body = await res.json() as { name: string }[];
      // A write too: a JSON body makes the browser preflight POST with content-type.
      const created = await fetch(`${api}/api/v4/projects`, {
        method: 'POST', headers: { 'PRIVATE-TOKEN': token, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'from-the-page' }),
      });
      return {
        status: res.status, names: body.map((p) => p.name), total: res.headers.get('X-Total'), totalPages: res.headers.get('X-Total-Pages'),
        nextPage: res.headers.get('X-Next-Page'), link: res.headers.get('Link'), createdStatus: created.status,
        createdName: ((await created.json()) as { name: string }).name,
      };
    }, { api, token });
    assert.equal(answer.status, 200);
    assert.equal(answer.names.length, 2);
    assert.equal(answer.total, '3');
    assert.equal(answer.totalPages, '2');
    assert.equal(answer.nextPage, '2');
    assert.match(answer.link ?? '', /rel="next"/);
    assert.deepEqual([answer.createdStatus, answer.createdName], [201, 'from-the-page']);
    await page.close();
  });

  it('is refused by the browser where the API says nothing: a page outside /api', async () => {
    const page = await browser.newPage();
    await page.goto(`${pageOrigin}/`);
    const failed = await page.evaluate(async (url) => {
      try {
        await fetch(url, { headers: { 'PRIVATE-TOKEN': 'x' } });
        return false;
      } catch {
        return true;
      }
    }, `${t.url}/users/sign_in`);
    assert.equal(failed, true, 'the browser enforces CORS in this test');
    await page.close();
  });
});
