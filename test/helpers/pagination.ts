/** Reading and following the Link header as the Service's clients do (clients.md §1.2, §2). */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './app.ts';

/** gitbeaker's own pattern: `<url>; rel="name"`, spelled exactly so. */
const LINK = /<([^>]+)>; rel="([^"]+)"/g;

/** rel → URL, in the header's order. */
export function parseLink(header: unknown): Map<string, string> {
  const links = new Map<string, string>();
  if (typeof header !== 'string') return links;
  for (const m of header.matchAll(LINK)) links.set(m[2], m[1]);
  return links;
}

/** An absolute Link URL made injectable: the path and query under `base` (KILN_EXTERNAL_URL). */
export function injectable(url: string, base: string): string {
  assert.ok(url.startsWith(`${base}/`), `${url} is built from ${base}`);
  return url.slice(base.length);
}

/**
 * Requests `firstUrl`, then each rel="next" until there is none, with the same headers; returns
 * every page's response. Stops with a failure after `maxPages`, so a loop cannot hang a test.
 */
export async function followNext(t: TestApp, firstUrl: string, headers: Record<string, string>, maxPages = 200): Promise<LightMyRequestResponse[]> {
  const pages: LightMyRequestResponse[] = [];
  let url: string | undefined = firstUrl;
  while (url !== undefined) {
    assert.ok(pages.length < maxPages, `more than ${maxPages} pages`);
    const res = await t.request({ url, headers });
    assert.equal(res.statusCode, 200, url);
    pages.push(res);
    const next = parseLink(res.headers.link).get('next');
    url = next === undefined ? undefined : injectable(next, t.config.externalUrl);
  }
  return pages;
}
