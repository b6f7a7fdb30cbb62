/**
 * The SCIM tests' world: a kiln with an owner, two top-level groups each with a SCIM token, a
 * request helper that speaks `application/scim+json` with a group's bearer token, and the check
 * that a response is an RFC 7644 §3.12 error.
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { UserRow } from '../../src/db/types.ts';
import { startTestApp, type TestApp } from './app.ts';
import { createToken, createUser } from './factories.ts';

export const SCIM_JSON = 'application/scim+json';
export const ERROR_URN = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const PATCH_URN = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

export interface ScimRequestOptions {
  /** The bearer token; the fixture's group token by default, null for none. */
  token?: string | null;
  payload?: unknown;
  /** The group path of the URL; the fixture's group by default. */
  group?: string;
  contentType?: string;
}

export interface ScimFixture {
  t: TestApp;
  owner: UserRow;
  ownerToken: string;
  groupId: number;
  groupPath: string;
  /** The group's current SCIM token (a test that replaces it sets it here). */
  scimToken: string;
  otherGroupPath: string;
  otherScimToken: string;
  scim(method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', path: string, opts?: ScimRequestOptions): Promise<LightMyRequestResponse>;
}

export async function startScimFixture(): Promise<ScimFixture> {
  const t = await startTestApp();
  const owner = await createUser(t.db);
  const ownerToken = await createToken(t.db, owner);
  const group = async (name: string, path: string) => {
    const id = (await t.request({ method: 'POST', url: '/api/v4/groups', token: ownerToken, payload: { name, path } })).json().id as number;
    const created = await t.request({ method: 'POST', url: `/api/v4/groups/${id}/scim_token`, token: ownerToken });
    assert.equal(created.statusCode, 201, created.body);
    return { id, token: created.json().token as string };
  };
  const groupPath = `acme-${owner.id}`;
  const otherGroupPath = `other-${owner.id}`;
  const main = await group('Acme', groupPath);
  const other = await group('Other', otherGroupPath);
  const f: ScimFixture = {
    t, owner, ownerToken, groupId: main.id, groupPath, scimToken: main.token, otherGroupPath, otherScimToken: other.token,
    scim: (method, path, opts = {}) => {
      const token = opts.token === undefined ? f.scimToken : opts.token;
      const headers: Record<string, string> = {};
      if (token !== null) headers.authorization = `Bearer ${token}`;
      if (opts.payload !== undefined) headers['content-type'] = opts.contentType ?? SCIM_JSON;
      return t.app.inject({
        method, url: `/api/scim/v2/groups/${encodeURIComponent(opts.group ?? groupPath)}${path}`, headers,
        ...(opts.payload !== undefined ? { payload: typeof opts.payload === 'string' ? opts.payload : JSON.stringify(opts.payload) } : {}),
      });
    },
  };
  return f;
}

export function assertScimError(res: LightMyRequestResponse, status: number, scimType?: string): void {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(res.headers['content-type'], SCIM_JSON);
  const body = res.json();
  assert.deepEqual(body.schemas, [ERROR_URN]);
  assert.equal(body.status, String(status));
  assert.equal(typeof body.detail, 'string');
  if (scimType) assert.equal(body.scimType, scimType);
}
