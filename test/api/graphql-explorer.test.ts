/**
 * The GraphiQL explorer at /-/graphql-explorer in a real browser (Debian's chromium through
 * playwright-core): it loads from kiln alone under its CSP (every other host is refused and
 * recorded), introspects the schema, and runs a query and a mutation with the session's cookie
 * and CSRF token. Skipped only when /usr/bin/chromium is not installed (CI installs `chromium`).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { createSession, createUser } from '../helpers/factories.ts';

const CHROMIUM = '/usr/bin/chromium';

describe('GraphiQL explorer in a real browser', () => {
  if (!fs.existsSync(CHROMIUM)) {
    it('needs chromium', (t) => t.skip(`${CHROMIUM} is not installed (apt-get install chromium)`));
    return;
  }
  let t: ListeningTestApp;
  let browser: Browser;

  before(async () => {
    t = await startListeningApp();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
    });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('loads offline, introspects, and runs a query and a mutation as the signed-in user', async () => {
    const user = await createUser(t.db, { username: 'explorer' });
    const session = await createSession(t.db, user);
    const context = await browser.newContext();
    await context.addCookies([{ name: '_service_session', value: session, url: t.url }]);
    const page = await context.newPage();
    const outside: string[] = [];
    const problems: string[] = [];
    await page.route('**/*', (route) => {
      if (route.request().url().startsWith(t.url)) return route.continue();
      outside.push(route.request().url());
      return route.abort();
    });
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
    page.on('pageerror', (e) => problems.push(String(e)));

    const introspected = page.waitForResponse((r) => r.url().endsWith('/api/graphql') && r.request().postData()?.includes('__schema') === true);
    await page.goto(`${t.url}/-/graphql-explorer`);
    await page.waitForSelector('.graphiql-container');
    const schema = await introspected;
    assert.equal(schema.status(), 200, `${await schema.text()} ${JSON.stringify(schema.request().headers())} ${schema.request().postData()?.slice(0, 300)}`);
    assert.ok(((await schema.json()) as { data?: { __schema?: unknown } }).data?.__schema, 'introspection answered');

    const run = async (query: string, expect: string) => {
      await page.click('.graphiql-query-editor .CodeMirror');
      await page.keyboard.press('Control+A');
      await page.keyboard.press('Delete');
      await page.keyboard.type(query);
      await page.keyboard.press('Control+Enter');
      // Runs in the page: its `document`, which this file's (Node) types do not know.
      type Page = { document: { querySelector(s: string): { textContent: string | null } | null } };
      await page.waitForFunction((text) => (globalThis as unknown as Page).document.querySelector('.graphiql-response')?.textContent?.includes(text), expect);
    };
    await run('{ currentUser { username', '"explorer"');
    // The editor closes brackets itself; typing a closing one steps over it.
    await run('mutation { echoCreate(input: { messages: ["from the explorer"] }) { echoes', '"from the explorer"');
    assert.deepEqual(outside, []);
    assert.deepEqual(problems, []);
    await context.close();
  });
});
