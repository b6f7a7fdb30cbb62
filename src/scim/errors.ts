/**
 * SCIM error responses (RFC 7644 §3.12): `{"schemas": [Error URN], "detail", "status"}` with
 * `status` the HTTP status as a string and, for 400s, a `scimType` naming the kind of problem.
 * They are ApiErrors, so the SCIM scope's error handler sends them like any other failure.
 */
import { ApiError } from '../http/errors.ts';

export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

export type ScimType =
  | 'invalidFilter' | 'invalidSyntax' | 'invalidValue' | 'invalidPath' | 'uniqueness' | 'tooMany' | 'mutability' | 'noTarget';

export interface ScimErrorBody {
  schemas: string[];
  detail: string;
  status: string;
  scimType?: ScimType;
}

export function scimErrorBody(status: number, detail: string, scimType?: ScimType): ScimErrorBody {
  return { schemas: [ERROR_SCHEMA], detail, status: String(status), ...(scimType ? { scimType } : {}) };
}

export const scimError = (status: number, detail: string, scimType?: ScimType, headers: Record<string, string> = {}) =>
  new ApiError(status, scimErrorBody(status, detail, scimType), headers);

export const invalidValue = (detail: string) => scimError(400, detail, 'invalidValue');
export const invalidFilter = (detail: string) => scimError(400, detail, 'invalidFilter');
export const invalidSyntax = (detail: string) => scimError(400, detail, 'invalidSyntax');
export const scimConflict = (detail: string) => scimError(409, detail, 'uniqueness');
export const scimNotFound = (detail: string) => scimError(404, detail);
/** A missing or wrong token: the same answer whether or not the group exists (RFC 7644 §2). */
export const scimUnauthorized = () => scimError(401, '401 Unauthorized', undefined, { 'www-authenticate': 'Bearer realm="SCIM"' });

/**
 * SCIM's answer to a path under its prefix that the router cannot read (app.ts): a percent escape
 * that is not UTF-8 is invalid syntax (400), a segment longer than any group path or id names no
 * resource (404). In SCIM's shape, as every other SCIM failure.
 */
export function unroutableScimAnswer(status: 400 | 404): { status: number; type: string; body: string } {
  const body = status === 400
    ? scimErrorBody(400, 'Request path is not valid UTF-8', 'invalidSyntax')
    : scimErrorBody(404, 'Resource not found');
  return { status, type: 'application/scim+json', body: JSON.stringify(body) };
}

export function isScimErrorBody(body: unknown): body is ScimErrorBody {
  if (typeof body !== 'object' || body === null) return false;
  const { schemas } = body as ScimErrorBody;
  return Array.isArray(schemas) && schemas[0] === ERROR_SCHEMA;
}
