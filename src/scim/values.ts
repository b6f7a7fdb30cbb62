/**
 * Reading SCIM request values with bounds (every string is checked before it reaches the
 * database): attribute names case-insensitively (RFC 7643 §2.1), strings without NUL bytes or
 * lone surrogates (text no column holds) and at most 255 characters (the Service's limits on
 * names, usernames, emails and extern_uid), and booleans as JSON booleans or the strings
 * "True"/"False" that Entra ID sends (the Service's Scim::ValueParser accepts both).
 */
import { isStorableText } from '../db/constraints.ts';
import { invalidValue } from './errors.ts';

export const MAX_VALUE_LENGTH = 255;
/** How deep a request body may nest: a SCIM User is three levels deep at most. */
const MAX_DEPTH = 8;

/** The value of `name` in `obj`, the name compared without regard to case. */
export function attr(obj: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(obj, name)) return obj[name];
  const lower = name.toLowerCase();
  for (const key of Object.keys(obj)) if (key.toLowerCase() === lower) return obj[key];
  return undefined;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A string value's problem, or null. */
export function stringProblem(v: string, max = MAX_VALUE_LENGTH): string | null {
  if (v.includes('\0')) return 'contains a NUL byte';
  if (!isStorableText(v)) return 'is not valid UTF-8';
  if (v.length > max) return `is too long (maximum is ${max} characters)`;
  return null;
}

export function readString(name: string, v: unknown, opts: { required: boolean }): string | undefined {
  if (v === undefined || v === null) {
    if (opts.required) throw invalidValue(`${name} is missing`);
    return undefined;
  }
  if (typeof v !== 'string') throw invalidValue(`${name} must be a string`);
  const problem = stringProblem(v);
  if (problem) throw invalidValue(`${name} ${problem}`);
  if (opts.required && v.trim() === '') throw invalidValue(`${name} is missing`);
  return v;
}

export function readBoolean(name: string, v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (s === 'true') return true;
    if (s === 'false') return false;
  }
  throw invalidValue(`${name} must be a boolean`);
}

/** Rejects a body holding a NUL byte or a lone surrogate in any string, key or value, or nested too deep. */
export function checkBody(v: unknown, depth = 0): void {
  if (depth > MAX_DEPTH) throw invalidValue('Request body is nested too deeply');
  if (typeof v === 'string') {
    if (!isStorableText(v)) throw invalidValue(unstorable(v));
  } else if (Array.isArray(v)) {
    for (const item of v) checkBody(item, depth + 1);
  } else if (isObject(v)) {
    for (const [k, item] of Object.entries(v)) {
      if (!isStorableText(k)) throw invalidValue(unstorable(k));
      checkBody(item, depth + 1);
    }
  }
}

function unstorable(s: string): string {
  return s.includes('\0') ? 'Request body contains a NUL byte' : 'Request body is not valid UTF-8';
}
