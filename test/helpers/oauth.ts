/** OAuth test helpers: applications, signed-in browsers, codes and tokens obtained through the HTTP endpoints. */
import type { LightMyRequestResponse } from 'fastify';
import type { OauthApplicationRow, UserRow } from '../../src/db/types.ts';
import { createApplication } from '../../src/domain/oauth/create-application.ts';
import { csrfTokenFor } from '../../src/http/auth/session-token.ts';
import { createSession } from './factories.ts';
import type { TestApp } from './app.ts';

export const REDIRECT_URI = 'https://client.example/callback';

export interface TestClient {
  application: OauthApplicationRow;
  clientId: string;
  secret: string;
}

export async function registerClient(t: TestApp, o: { scopes?: string[]; confidential?: boolean; redirectUri?: string; trusted?: boolean; ownerId?: number | null; name?: string } = {}): Promise<TestClient> {
  const result = await createApplication(t.db, {
    name: o.name ?? 'Test client', redirectUri: o.redirectUri ?? REDIRECT_URI, scopes: o.scopes ?? ['api', 'read_user', 'openid', 'profile', 'email'],
    confidential: o.confidential ?? true,
  }, o.ownerId ?? null);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  let application = result.value.application;
  if (o.trusted) {
    await t.db.updateTable('oauth_applications').set({ trusted: 1 }).where('id', '=', application.id).execute();
    application = { ...application, trusted: 1 };
  }
  return { application, clientId: application.uid, secret: result.value.secret };
}

export interface Browser {
  cookie: string;
  csrf: string;
}

/** A signed-in browser: the session cookie header and the session's CSRF token. */
export async function signedInBrowser(t: TestApp, user: UserRow): Promise<Browser> {
  const raw = await createSession(t.db, user);
  return { cookie: `_service_session=${raw}`, csrf: csrfTokenFor(t.app.kiln.secretKeyBase, raw) };
}

export function form(fields: Record<string, string | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) p.set(k, v);
  return p.toString();
}

export function postForm(t: TestApp, url: string, fields: Record<string, string | undefined>, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.request({ method: 'POST', url, payload: form(fields), headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });
}

export function authorizeQuery(fields: Record<string, string | undefined>): string {
  return `/oauth/authorize?${form(fields)}`;
}

/** Approves an authorization request as `browser` and returns the Location it redirects to. */
export async function approve(t: TestApp, browser: Browser, fields: Record<string, string | undefined>): Promise<URL> {
  const res = await postForm(t, '/oauth/authorize', { ...fields, authenticity_token: browser.csrf }, { cookie: browser.cookie });
  if (res.statusCode !== 303) throw new Error(`approve answered ${res.statusCode}: ${res.body}`);
  return new URL(res.headers.location as string);
}

/** A code for `client`, approved by `browser`. */
export async function obtainCode(t: TestApp, browser: Browser, client: TestClient, extra: Record<string, string | undefined> = {}): Promise<string> {
  const location = await approve(t, browser, { client_id: client.clientId, redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'api', ...extra });
  const code = location.searchParams.get('code');
  if (!code) throw new Error(`no code in ${location}`);
  return code;
}

export function tokenRequest(t: TestApp, fields: Record<string, string | undefined>, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return postForm(t, '/oauth/token', fields, headers);
}

export function basicAuth(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

/** Code → tokens for a confidential client with its secret. */
export async function obtainTokens(t: TestApp, browser: Browser, client: TestClient, scope = 'api'): Promise<{ access_token: string; refresh_token: string; [k: string]: unknown }> {
  const code = await obtainCode(t, browser, client, { scope });
  const res = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: client.clientId, client_secret: client.secret });
  if (res.statusCode !== 200) throw new Error(`token answered ${res.statusCode}: ${res.body}`);
  return res.json();
}
