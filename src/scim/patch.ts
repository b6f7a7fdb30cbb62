/**
 * PATCH /Users/:id bodies (RFC 7644 §3.5.2) as identity providers send them, to the changes
 * kiln applies. Entra ID names the attribute in `path` (`"path": "active", "value": "False"`);
 * Okta leaves `path` out and sends an object of attributes (`"value": {"active": false}`). Both,
 * and `op` in any case, are read the same way. The attributes mapped are the Service's
 * (Scim::AttributeTransform): active, externalId / id, userName, name.formatted / displayName,
 * `emails[type eq "work"].value`; plus `name` as a whole and name.givenName / name.familyName
 * (which Entra ID sends by default). Other attributes are ignored, as the Service ignores them,
 * and so is `remove` (none of these attributes may be removed from a provisioned user).
 */
import { invalidSyntax, invalidValue } from './errors.ts';
import { attributeName } from './filter.ts';
import { attr, isObject, readBoolean, readString } from './values.ts';

export const PATCH_OP_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const MAX_OPERATIONS = 100;

export interface PatchChanges {
  active?: boolean;
  externUid?: string;
  userName?: string;
  name?: string;
  givenName?: string;
  familyName?: string;
  email?: string;
}

/** `emails[type eq "work"].value` however it is spaced or cased. */
const WORK_EMAIL_PATH = /^emails\[\s*type\s+eq\s+"work"\s*\]\.value$/;

export function parsePatch(body: unknown): PatchChanges {
  if (!isObject(body)) throw invalidSyntax('Request body must be a JSON object');
  const operations = attr(body, 'Operations');
  if (!Array.isArray(operations) || operations.length === 0) throw invalidSyntax('Operations must be a non-empty array');
  if (operations.length > MAX_OPERATIONS) throw invalidSyntax(`At most ${MAX_OPERATIONS} operations are accepted`);
  const changes: PatchChanges = {};
  for (const operation of operations) {
    if (!isObject(operation)) throw invalidSyntax('Each operation must be an object');
    const op = attr(operation, 'op');
    if (typeof op !== 'string' || !['add', 'replace', 'remove'].includes(op.toLowerCase())) {
      throw invalidSyntax('op must be one of add, replace, remove');
    }
    if (op.toLowerCase() === 'remove') continue;
    const path = attr(operation, 'path');
    const value = attr(operation, 'value');
    if (path === undefined || path === null) {
      if (!isObject(value)) throw invalidValue('value must be an object of attributes when path is not given');
      for (const [key, v] of Object.entries(value)) apply(changes, key, v);
    } else {
      if (typeof path !== 'string' || path.length > 200) throw invalidValue('path is invalid');
      apply(changes, path, value);
    }
  }
  return changes;
}

function apply(changes: PatchChanges, path: string, value: unknown): void {
  const name = attributeName(path);
  switch (name) {
    case 'active': changes.active = readBoolean('active', value); break;
    case 'externalid':
    case 'id': changes.externUid = readString(name === 'id' ? 'id' : 'externalId', value, { required: true }); break;
    case 'username': changes.userName = readString('userName', value, { required: true }); break;
    case 'displayname':
    case 'name.formatted': changes.name = readString(path, value, { required: true }); break;
    case 'name.givenname': changes.givenName = readString('name.givenName', value, { required: false }) ?? ''; break;
    case 'name.familyname': changes.familyName = readString('name.familyName', value, { required: false }) ?? ''; break;
    case 'name': applyName(changes, value); break;
    case 'emails': changes.email = workEmail(value) ?? changes.email; break;
    default:
      if (WORK_EMAIL_PATH.test(name)) changes.email = readString('emails[type eq "work"].value', value, { required: true });
  }
}

function applyName(changes: PatchChanges, value: unknown): void {
  if (!isObject(value)) throw invalidValue('name must be an object');
  for (const [key, v] of Object.entries(value)) apply(changes, `name.${key}`, v);
}

/** The work email of an `emails` array, or its primary one (the Service's parse_emails). */
export function workEmail(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length > 20) throw invalidValue('emails must be an array');
  const entries = value.filter(isObject);
  const isPrimary = (e: (typeof entries)[number]) => attr(e, 'primary') === true || attr(e, 'primary') === 'true';
  const chosen = entries.find((e) => attr(e, 'type') === 'work') ?? entries.find(isPrimary);
  return chosen ? readString('emails.value', attr(chosen, 'value'), { required: true }) : undefined;
}

/** The account name after a patch of its parts: given names first, then family names. */
export function nameAfter(current: string, changes: PatchChanges): string | undefined {
  if (changes.name !== undefined) return changes.name;
  if (changes.givenName === undefined && changes.familyName === undefined) return undefined;
  const [given, ...family] = current.trim().split(/\s+/);
  return [changes.givenName ?? given ?? '', changes.familyName ?? family.join(' ')].map((s) => s.trim()).filter(Boolean).join(' ');
}
