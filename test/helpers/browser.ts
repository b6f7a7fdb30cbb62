/**
 * The web interface in a real browser (issue 33): Debian's chromium driven by playwright-core,
 * with a fresh profile per run, the accessibility check of axe-core in the page, and screenshots
 * for review under test/.screenshots/ (git-ignored). Chromium's flags keep it off the network
 * (no component updates, sync or background fetches) and out of a sandbox the CI container lacks.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { UserRow } from '../../src/db/types.ts';
import type { TestApp } from './app.ts';
import { createSession } from './factories.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = path.join(import.meta.dirname, '..', '.screenshots');

export const hasChromium = () => fs.existsSync(CHROMIUM);

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A browser with a profile of its own (a temp --user-data-dir, removed on close). */
export async function launchBrowser(o: { viewport?: { width: number; height: number }; colorScheme?: 'light' | 'dark' } = {}): Promise<TestBrowser> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
    viewport: o.viewport ?? { width: 1280, height: 800 },
    colorScheme: o.colorScheme ?? 'light',
  });
  return {
    context,
    close: async () => {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Signs the browser in as `user` by the session cookie a sign-in would have set. */
export async function signInAs(t: TestApp, context: BrowserContext, baseUrl: string, user: UserRow): Promise<void> {
  const raw = await createSession(t.db, user);
  await context.addCookies([{ name: '_service_session', value: raw, url: baseUrl, httpOnly: true, sameSite: 'Lax' }]);
}

/**
 * A page that records what the strict policy refused (an inline script or style would show up
 * here) and every script error, for `assertCleanConsole`.
 */
export async function openPage(context: BrowserContext): Promise<Page & { problems: string[] }> {
  const page = await context.newPage() as Page & { problems: string[] };
  page.problems = [];
  page.on('console', (m) => {
    if (m.type() === 'error') page.problems.push(m.text());
  });
  page.on('pageerror', (e) => page.problems.push(String(e)));
  return page;
}

export function assertCleanConsole(page: Page & { problems: string[] }): void {
  assert.deepEqual(page.problems, [], 'no policy violations or script errors in the console');
}

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }

/**
 * axe-core's WCAG 2 A/AA rules in the page: no serious or critical violation. The script is
 * evaluated through the debugging protocol, which the page's policy does not govern, so the page
 * is checked as it is served.
 */
export async function assertAccessible(page: Page): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(ctx: unknown, o: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => ({ target: n.target })) }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(serious, [], `accessibility violations on ${page.url()}`);
}

/** Saves a full-page screenshot as test/.screenshots/<name>.png for review. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name.replace(/[^A-Za-z0-9._-]+/g, '-')}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
