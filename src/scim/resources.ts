/**
 * The SCIM User resource (RFC 7643 §4.1) of a group's SCIM identity, and the ListResponse
 * envelope (RFC 7644 §3.4.2). As in the Service, `id` is the identity's extern_uid (the SAML
 * NameID the identity provider chose), and `externalId` the same value; `active` is the
 * identity's state in this group; the email is the account's, as the work and primary one.
 */
import { Type, type Static } from 'typebox';
import type { ScimUserRow } from '../domain/scim/scim.queries.ts';
import { invalidSyntax, invalidValue } from './errors.ts';
import { workEmail } from './patch.ts';
import { attr, isObject, readBoolean, readString } from './values.ts';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

export const ScimUserSchema = Type.Object({
  schemas: Type.Array(Type.String()),
  id: Type.String(),
  externalId: Type.String(),
  active: Type.Boolean(),
  userName: Type.String(),
  name: Type.Object({ formatted: Type.String(), givenName: Type.String(), familyName: Type.String() }),
  emails: Type.Array(Type.Object({ type: Type.String(), value: Type.String(), primary: Type.Boolean() })),
  meta: Type.Object({ resourceType: Type.String(), created: Type.String(), lastModified: Type.String(), location: Type.String() }),
}, { title: 'ScimUser' });
export type ScimUser = Static<typeof ScimUserSchema>;

export const ScimListSchema = Type.Object({
  schemas: Type.Array(Type.String()),
  totalResults: Type.Integer(),
  itemsPerPage: Type.Integer(),
  startIndex: Type.Integer(),
  Resources: Type.Array(ScimUserSchema),
}, { title: 'ScimListResponse' });

export const ScimErrorSchema = Type.Object({
  schemas: Type.Array(Type.String()),
  detail: Type.String(),
  status: Type.String(),
  scimType: Type.Optional(Type.String()),
}, { title: 'ScimError' });

/** The base of a group's SCIM resources: `<external URL>/api/scim/v2/groups/<group path>`. */
export function scimBaseUrl(externalUrl: string, groupPath: string): string {
  return `${externalUrl}/api/scim/v2/groups/${encodeURIComponent(groupPath)}`;
}

export function presentScimUser(row: ScimUserRow, baseUrl: string): ScimUser {
  const name = row.user.name;
  const [givenName = '', ...family] = name.trim().split(/\s+/);
  const lastModified = row.updated_at > row.user.updated_at ? row.updated_at : row.user.updated_at;
  return {
    schemas: [USER_SCHEMA],
    id: row.extern_uid,
    externalId: row.extern_uid,
    active: row.active === 1,
    userName: row.user.username,
    name: { formatted: name, givenName, familyName: family.join(' ') },
    emails: [{ type: 'work', value: row.user.email, primary: true }],
    meta: { resourceType: 'User', created: row.created_at, lastModified, location: `${baseUrl}/Users/${encodeURIComponent(row.extern_uid)}` },
  };
}

export interface CreateUserBody {
  externUid: string;
  userName: string;
  email: string;
  name: string | undefined;
  active: boolean;
}

/**
 * POST /Users: externalId, userName and a work (or primary) email are required, as the Service
 * requires extern_uid, username and email; the name is name.formatted, else given and family
 * names joined, else displayName.
 */
export function parseCreateBody(body: unknown): CreateUserBody {
  if (!isObject(body)) throw invalidSyntax('Request body must be a JSON object');
  const externUid = readString('externalId', attr(body, 'externalId'), { required: true })!;
  const userName = readString('userName', attr(body, 'userName'), { required: true })!;
  const email = workEmail(attr(body, 'emails'));
  if (email === undefined) throw invalidValue('emails is missing a work or primary email');
  const nameObj = attr(body, 'name');
  let name: string | undefined;
  if (isObject(nameObj)) {
    name = readString('name.formatted', attr(nameObj, 'formatted'), { required: false })?.trim() || undefined;
    if (name === undefined) {
      const given = readString('name.givenName', attr(nameObj, 'givenName'), { required: false }) ?? '';
      const family = readString('name.familyName', attr(nameObj, 'familyName'), { required: false }) ?? '';
      name = [given.trim(), family.trim()].filter(Boolean).join(' ') || undefined;
    }
  } else if (nameObj !== undefined && nameObj !== null) {
    throw invalidValue('name must be an object');
  }
  name ??= readString('displayName', attr(body, 'displayName'), { required: false })?.trim() || undefined;
  const activeValue = attr(body, 'active');
  const active = activeValue === undefined || activeValue === null ? true : readBoolean('active', activeValue);
  return { externUid, userName, email, name, active };
}
