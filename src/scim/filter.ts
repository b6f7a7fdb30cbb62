/**
 * The `filter` of GET /Users (RFC 7644 §3.4.2.2), parsed by scim2-parse-filter, a maintained
 * parser of the RFC's grammar whose operators come out in lower case (they are case-insensitive).
 * kiln answers what the Service's ScimFinder answers: `eq` on `id` or `externalId` (the
 * identity's extern_uid) and on `userName`; attribute names compare without regard to case and
 * may carry the core User schema's URN. Anything else is `400 invalidFilter` (RFC 7644 §3.12).
 */
import { parse } from 'scim2-parse-filter';
import { isStorableText } from '../db/constraints.ts';
import { invalidFilter } from './errors.ts';
import { stringProblem } from './values.ts';

export type UserFilter = { kind: 'all' } | { kind: 'externUid'; value: string } | { kind: 'userName'; value: string };

/** A filter longer than this is no filter an identity provider sends. */
const MAX_FILTER_LENGTH = 1000;
const USER_SCHEMA_PREFIX = 'urn:ietf:params:scim:schemas:core:2.0:user:';

const SUPPORTED: Record<string, 'externUid' | 'userName'> = { id: 'externUid', externalid: 'externUid', username: 'userName' };

export function attributeName(path: string): string {
  const lower = path.toLowerCase();
  return lower.startsWith(USER_SCHEMA_PREFIX) ? lower.slice(USER_SCHEMA_PREFIX.length) : lower;
}

export function parseUserFilter(text: unknown): UserFilter {
  if (text === undefined || text === '') return { kind: 'all' };
  if (typeof text !== 'string') throw invalidFilter('filter must be given once, as a string');
  if (text.length > MAX_FILTER_LENGTH || !isStorableText(text)) throw invalidFilter('Unsupported Filter');
  let ast;
  try {
    ast = parse(text);
  } catch {
    throw invalidFilter(`Invalid filter: ${text}`);
  }
  if (ast.op !== 'eq') throw invalidFilter('Unsupported Filter');
  const kind = SUPPORTED[attributeName(ast.attrPath)];
  if (!kind || typeof ast.compValue !== 'string') throw invalidFilter('Unsupported Filter');
  if (stringProblem(ast.compValue)) throw invalidFilter('Unsupported Filter');
  return { kind, value: ast.compValue };
}
