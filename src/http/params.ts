/**
 * Declared parameters, as the Service's Grape endpoints declare them: one TypeBox object per
 * route, validated against the merged query, body and path parameters with Grape's coercions and
 * message texts (reference §6.3). The same schema documents the route in OpenAPI and types the
 * handler's input.
 *
 * Missing required attributes answer with the spec's `400 Bad request - "x" not given` shape;
 * every other failure keeps Grape's `{"error": "x is invalid, y does not have a valid value"}`
 * (DESIGN, Fidelity).
 */
import { Type, type Static, type TObject, type TProperties, type TSchema } from 'typebox';
import { invalidParams, missingAttribute } from './errors.ts';

export interface UploadedFile {
  filename: string;
  mimetype: string;
  data: Buffer;
}

export interface ParamRules {
  /** Grape `at_least_one_of`. */
  atLeastOneOf?: string[][];
  /** Grape `all_or_none_of`. */
  allOrNoneOf?: string[][];
  /** Grape `mutually_exclusive`. */
  mutuallyExclusive?: string[][];
}

export interface ParamsDefinition<T extends TObject = TObject> {
  schema: T;
  rules: ParamRules;
}

export function defineParams<P extends TProperties>(properties: P, rules: ParamRules = {}): ParamsDefinition<TObject<P>> {
  return { schema: Type.Object(properties), rules };
}

export type ParamsOf<D> = D extends ParamsDefinition<infer T> ? Static<T> : never;

interface Extra {
  [key: string | symbol]: unknown;
  description?: string;
  default?: unknown;
}

/** Builders for the Grape types kiln uses. */
export const P = {
  integer: (o: Extra & { exceptValues?: number[] } = {}) => {
    const { exceptValues, ...rest } = o;
    return Type.Integer({ ...rest, ...(exceptValues ? { 'x-except-values': exceptValues } : {}) });
  },
  number: (o: Extra = {}) => Type.Number(o),
  string: (o: Extra = {}) => Type.String(o),
  boolean: (o: Extra = {}) => Type.Boolean(o),
  /** A string limited to `values` (Grape `values:`). */
  oneOf: <const V extends readonly string[]>(values: V, o: Extra = {}) =>
    Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...o }),
  /** YYYY-MM-DD. */
  date: (o: Extra = {}) => Type.String({ format: 'date', ...o }),
  /** ISO 8601, normalised to UTC `…Z`. */
  dateTime: (o: Extra = {}) => Type.String({ format: 'date-time', ...o }),
  array: <T extends TSchema>(items: T, o: Extra & { commaSeparated?: boolean } = {}) => {
    const { commaSeparated, ...rest } = o;
    return Type.Array(items, { ...rest, ...(commaSeparated ? { 'x-comma-separated': true } : {}) });
  },
  /** A value that may be sent as one string or as an array of strings (e.g. the jobs `scope`). */
  stringOrArray: <const V extends readonly string[]>(values: V, o: Extra = {}) =>
    Type.Unsafe<V[number][]>({ type: 'array', items: { type: 'string', enum: [...values] }, 'x-wrap-string': true, ...o }),
  /** A hash `name[key]=value`. */
  hash: (o: Extra = {}) => Type.Record(Type.String(), Type.String(), o),
  object: <P2 extends TProperties>(props: P2, o: Extra = {}) => Type.Object(props, o),
  file: (o: Extra = {}) => Type.Unsafe<UploadedFile>({ type: 'string', format: 'binary', 'x-file': true, ...o }),
  optional: Type.Optional,
};

type Coerced = { value: unknown } | { error: string };
const INVALID: Coerced = { error: 'is invalid' };
const NOT_VALID_VALUE: Coerced = { error: 'does not have a valid value' };

const TRUE_WORDS = new Set(['true', 't', '1', 'yes', 'y', 'on']);
const FALSE_WORDS = new Set(['false', 'f', '0', 'no', 'n', 'off']);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);
}

function isUploadedFile(v: unknown): v is UploadedFile {
  return isPlainObject(v) && Buffer.isBuffer((v as { data?: unknown }).data) && typeof v.filename === 'string';
}

function validDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

/** Parses ISO 8601 date-times (with or without zone; a bare date means midnight UTC). */
export function parseDateTime(s: string): Date | null {
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i.test(s.trim())) return null;
  const d = new Date(s.trim().replace(' ', 'T'));
  return Number.isNaN(d.getTime()) ? null : d;
}

function coerce(schema: any, value: unknown): Coerced {
  if (schema['x-file']) return isUploadedFile(value) ? { value } : INVALID;
  switch (schema.type) {
    case 'integer': {
      let n: number;
      if (typeof value === 'number') n = value;
      else if (typeof value === 'string' && /^\s*[-+]?\d+\s*$/.test(value)) n = Number(value);
      else return INVALID;
      if (!Number.isSafeInteger(n)) return INVALID;
      if (schema['x-except-values']?.includes(n)) return { error: 'has a value not allowed' };
      return { value: n };
    }
    case 'number': {
      const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
      return Number.isFinite(n) ? { value: n } : INVALID;
    }
    case 'boolean': {
      if (typeof value === 'boolean') return { value };
      const word = String(value).toLowerCase();
      if (typeof value !== 'object' && TRUE_WORDS.has(word)) return { value: true };
      if (typeof value !== 'object' && FALSE_WORDS.has(word)) return { value: false };
      return INVALID;
    }
    case 'string': {
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return INVALID;
      const s = String(value);
      if (schema.format === 'date') return validDate(s) ? { value: s } : INVALID;
      if (schema.format === 'date-time') {
        const d = parseDateTime(s);
        return d ? { value: d.toISOString() } : INVALID;
      }
      if (schema.enum && !schema.enum.includes(s)) return NOT_VALID_VALUE;
      return { value: s };
    }
    case 'array': {
      let items: unknown[];
      if (Array.isArray(value)) items = value;
      else if (typeof value === 'string' && schema['x-comma-separated']) items = value.split(',').map((s) => s.trim()).filter(Boolean);
      else if (typeof value === 'string' && schema['x-wrap-string']) items = [value];
      else if (isPlainObject(value) && schema['x-wrap-string']) items = Object.values(value);
      else if (isPlainObject(value) && Object.keys(value).every((k) => /^\d+$/.test(k))) items = Object.values(value);
      else return INVALID;
      const out: unknown[] = [];
      let valueError: Coerced | null = null;
      for (const item of items) {
        const r = coerce(schema.items ?? {}, item);
        if ('error' in r) {
          if (r.error !== NOT_VALID_VALUE_TEXT) return INVALID;
          valueError = r;
        } else out.push(r.value);
      }
      return valueError ?? { value: out };
    }
    case 'object': {
      if (!isPlainObject(value)) return INVALID;
      if (schema.properties) {
        const out: Record<string, unknown> = {};
        for (const [k, sub] of Object.entries<any>(schema.properties)) {
          if (value[k] === undefined) {
            if (schema.required?.includes(k)) return INVALID;
            continue;
          }
          const r = coerce(sub, value[k]);
          if ('error' in r) return r;
          out[k] = r.value;
        }
        return { value: out };
      }
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        const r = coerce(schema.additionalProperties ?? { type: 'string' }, v);
        if ('error' in r) return INVALID;
        out[k] = r.value;
      }
      return { value: out };
    }
    default:
      return { value };
  }
}
const NOT_VALID_VALUE_TEXT = 'does not have a valid value';


interface Field {
  key: string;
  sub: any;
  required: boolean;
}

// A definition's fields, listed once: validation runs on every request of its routes.
const fieldLists = new WeakMap<ParamsDefinition, Field[]>();
function fieldsOf(def: ParamsDefinition): Field[] {
  let fields = fieldLists.get(def);
  if (!fields) {
    const schema = def.schema as any;
    const required: string[] = schema.required ?? [];
    fields = Object.entries<any>(schema.properties).map(([key, sub]) => ({ key, sub, required: required.includes(key) }));
    fieldLists.set(def, fields);
  }
  return fields;
}

/** A parameter's value from the first source that has it (path, then body, then query, as Grape merges them). */
function lookup(sources: Record<string, unknown>[], key: string): unknown {
  for (const source of sources) if (Object.hasOwn(source, key)) return source[key];
  return undefined;
}

/**
 * Validates parameters against a definition and returns only the declared ones, coerced, with
 * defaults filled in. Throws the Service's 400 bodies. `sources` are read in order, the first that
 * has a name winning (declared-params.ts passes path, body, query), without merging them into a
 * new object on every request.
 */
export function validateParams(def: ParamsDefinition, ...sources: Record<string, unknown>[]): Record<string, unknown> {
  const given = (key: string) => lookup(sources, key) !== undefined;
  const out: Record<string, unknown> = {};
  const errors: string[] = [];
  let missing: string | undefined;
  for (const { key, sub, required } of fieldsOf(def)) {
    const value = lookup(sources, key);
    if (value === undefined) {
      if (required) missing ??= key;
      else if (sub.default !== undefined) out[key] = typeof sub.default === 'object' && sub.default !== null ? structuredClone(sub.default) : sub.default;
      continue;
    }
    // An empty string for a non-string type is Grape's nil: given, but without a value.
    if (value === '' && sub.type !== 'string' && !sub['x-file']) {
      out[key] = null;
      continue;
    }
    const r = coerce(sub, value);
    if ('error' in r) errors.push(`${key} ${r.error}`);
    else out[key] = r.value;
  }
  for (const group of def.rules.atLeastOneOf ?? []) {
    if (!group.some(given)) errors.push(`${group.join(', ')} are missing, at least one parameter must be provided`);
  }
  for (const group of def.rules.allOrNoneOf ?? []) {
    const count = group.filter(given).length;
    if (count > 0 && count < group.length) errors.push(`${group.join(', ')} provide all or none of parameters`);
  }
  for (const group of def.rules.mutuallyExclusive ?? []) {
    if (group.filter(given).length > 1) errors.push(`${group.join(', ')} are mutually exclusive`);
  }
  if (missing !== undefined) throw missingAttribute(missing);
  if (errors.length > 0) throw invalidParams(errors);
  return out;
}
