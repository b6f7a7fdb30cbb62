/**
 * Declared parameters, as the Service's Grape endpoints declare them: one TypeBox object per
 * route, validated against the merged query, body and path parameters with Grape's coercions and
 * message texts (reference §6.3). The same schema documents the route in OpenAPI and types the
 * handler's input.
 *
 * Missing required attributes answer with the spec's `400 Bad request - "x" not given` shape;
 * every other failure keeps Grape's `{"error": "x is invalid, y does not have a valid value"}`
 * (DESIGN, Fidelity).
 *
 * Bounds (issue 13), so that no value reaches the database, the file system or a child process
 * unchecked: every string refuses NUL and text that is not well-formed UTF-16 (PostgreSQL cannot
 * store NUL: `invalid byte sequence for encoding "UTF8"`) and has a length bound (`maxLength`,
 * by default DEFAULT_MAX_STRING); every integer has the range of the column it is compared with
 * (`minimum`/`maximum`, by default PostgreSQL `integer`). Beyond the range, a body value is
 * 400 "x is invalid" and a query value (a filter) is clamped to the bound it passed, so it
 * compares as the Service's ActiveRecord compares an out-of-range value. A path segment that
 * fails these names no row: an out-of-range id is looked up as 0 and a string with NUL or beyond
 * its bound as '' (no row has either), so the route answers its own 404.
 */
import {
  Type, type Static, type TArray, type TBoolean, type TInteger, type TNumber, type TObject, type TOptional, type TProperties, type TSchema,
  type TString, type TUnsafe,
} from 'typebox';
import { isStorableText } from '../../db/constraints.ts';
import type { UploadedFile } from '../../domain/uploaded-file.ts';
import { invalidParams, missingAttribute, validationFailed } from '../errors.ts';
import { coerceDate, DATE_PARSE_LIMIT, parseDateTime } from './dates.ts';

/** PostgreSQL `integer`, the type of every id and integer column kiln has (and SQLite's ids). */
export const INT32_MIN = -2_147_483_648;
export const INT32_MAX = 2_147_483_647;
/**
 * The longest string a parameter takes unless it declares its own `maxLength`: the Service's
 * largest text fields (descriptions, notes of issues) stop at 1,048,576 characters.
 */
export const DEFAULT_MAX_STRING = 1_048_576;
/** Names, paths, titles, emails and most other strings: the Service's `varchar(255)` columns. */
export const NAME_MAX = 255;

export type { UploadedFile } from '../../domain/uploaded-file.ts';

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

declare const DEFAULTED: unique symbol;
/**
 * Phantom mark of a parameter declared with a `default`: validation fills it in when it is not
 * given, so the handler's input has it even when it is optional (P.optional keeps the mark).
 */
export interface HasDefault { readonly [DEFAULTED]: true }
type WithDefault<T extends TSchema, O> = O extends { default: infer D } ? (undefined extends D ? T : T & HasDefault) : T;

type DefaultedKeys<Props> = { [K in keyof Props]: Props[K] extends HasDefault ? K : never }[keyof Props];
type Flat<T> = { [K in keyof T]: T[K] };
/** A definition's validated input: its Static type, with defaulted parameters always present. */
export type InputOfProperties<Props extends TProperties> =
  Flat<Omit<Static<TObject<Props>>, DefaultedKeys<Props>> & { [K in DefaultedKeys<Props>]-?: Static<Props[K]> }>;
export type ParamsOf<D> = D extends ParamsDefinition<TObject<infer Props>> ? InputOfProperties<Props> : never;

interface Extra {
  [key: string | symbol]: unknown;
  description?: string;
  default?: unknown;
}

interface StringExtra extends Extra {
  /** Characters (code points, as Ruby's `length` counts them); default DEFAULT_MAX_STRING. */
  maxLength?: number;
  /**
   * The route checks this value itself (NUL, length) and answers in its own words (a SCIM error,
   * `Branch name is invalid`): the layer passes it through. The route must then bound it before
   * it reaches the database, the file system or git.
   */
  ownErrors?: boolean;
}

/** Schema keywords of a string's options: `ownErrors` becomes `x-own-errors`. */
function stringSchema(o: StringExtra, maxLength: number): Record<string, unknown> {
  const { ownErrors, ...rest } = o;
  return { maxLength, ...rest, ...(ownErrors ? { 'x-own-errors': true } : {}) };
}

interface IntegerExtra extends Extra {
  exceptValues?: number[];
  /** Default INT32_MIN / INT32_MAX: an integer column's range. Widen for values that are not stored. */
  minimum?: number;
  maximum?: number;
}

/** Builders for the Grape types kiln uses. */
export const P = {
  /** An integer within its column's range (INT32 unless `minimum`/`maximum` say otherwise). */
  integer: <O extends IntegerExtra>(o: O = {} as O) => {
    const { exceptValues, ...rest } = o;
    const extra = exceptValues ? { 'x-except-values': exceptValues } : {};
    return Type.Integer({ minimum: INT32_MIN, maximum: INT32_MAX, ...rest, ...extra }) as WithDefault<TInteger, O>;
  },
  number: <O extends Extra>(o: O = {} as O) => Type.Number(o) as WithDefault<TNumber, O>,
  /** A string without NUL, at most `maxLength` characters (default DEFAULT_MAX_STRING). */
  string: <O extends StringExtra>(o: O = {} as O) => Type.String(stringSchema(o, DEFAULT_MAX_STRING)) as WithDefault<TString, O>,
  /** A name, path, title or other `varchar(255)` value: at most NAME_MAX characters. */
  name: <O extends StringExtra>(o: O = {} as O) => Type.String(stringSchema(o, NAME_MAX)) as WithDefault<TString, O>,
  boolean: <O extends Extra>(o: O = {} as O) => Type.Boolean(o) as WithDefault<TBoolean, O>,
  /** A string limited to `values` (Grape `values:`). */
  oneOf: <const V extends readonly string[], O extends Extra = Extra>(values: V, o: O = {} as O) =>
    Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...o }) as WithDefault<TUnsafe<V[number]>, O>,
  /** Grape `Date`: what Ruby's Date.parse takes of the forms clients send (dates.ts), as `YYYY-MM-DD`. */
  date: <O extends Extra>(o: O = {} as O) => Type.String({ format: 'date', maxLength: DATE_PARSE_LIMIT, ...o }) as WithDefault<TString, O>,
  /** Grape `DateTime` (dates.ts), normalised to UTC `…Z`. */
  dateTime: <O extends Extra>(o: O = {} as O) =>
    Type.String({ format: 'date-time', maxLength: DATE_PARSE_LIMIT, ...o }) as WithDefault<TString, O>,
  array: <T extends TSchema, O extends Extra & { commaSeparated?: boolean } = Extra>(items: T, o: O = {} as O) => {
    const { commaSeparated, ...rest } = o;
    return Type.Array(items, { ...rest, ...(commaSeparated ? { 'x-comma-separated': true } : {}) }) as WithDefault<TArray<T>, O>;
  },
  /** A value that may be sent as one string or as an array of strings (e.g. the jobs `scope`). */
  stringOrArray: <const V extends readonly string[], O extends Extra = Extra>(values: V, o: O = {} as O) =>
    Type.Unsafe<V[number][]>({ type: 'array', items: { type: 'string', enum: [...values] }, 'x-wrap-string': true, ...o }) as
      WithDefault<TUnsafe<V[number][]>, O>,
  /** A hash `name[key]=value`. */
  hash: (o: Extra & { valueMaxLength?: number; ownErrors?: boolean } = {}) => {
    const { valueMaxLength, ownErrors, ...rest } = o;
    return Type.Record(
      Type.String(),
      Type.String(stringSchema({ ownErrors }, valueMaxLength ?? DEFAULT_MAX_STRING)),
      { ...rest, ...(ownErrors ? { 'x-own-errors': true } : {}) },
    );
  },
  object: <P2 extends TProperties>(props: P2, o: Extra = {}) => Type.Object(props, o),
  file: (o: Extra = {}) => Type.Unsafe<UploadedFile>({ type: 'string', format: 'binary', 'x-file': true, ...o }),
  /** Not required; keeps the mark of a parameter with a default (always present after validation). */
  optional: <T extends TSchema>(schema: T) => Type.Optional(schema) as unknown as TOptional<T>,
};

type Coerced = { value: unknown } | { error: string; outOfRange?: true; tooLong?: number; unstorable?: true };
const INVALID: Coerced = { error: 'is invalid' };
/** An integer beyond its column's range: 400 in a query or body, no row (404) in a path. */
const OUT_OF_RANGE: Coerced = { error: 'is invalid', outOfRange: true };
/** Text no column can hold (NUL, lone surrogates): 400 in a query or body, 404 in a path. */
const UNSTORABLE: Coerced = { error: 'is invalid', unstorable: true };
const NOT_VALID_VALUE: Coerced = { error: 'does not have a valid value' };

const TRUE_WORDS = new Set(['true', 't', '1', 'yes', 'y', 'on']);
const FALSE_WORDS = new Set(['false', 'f', '0', 'no', 'n', 'off']);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);
}

function isUploadedFile(v: unknown): v is UploadedFile {
  return isPlainObject(v) && Buffer.isBuffer((v as { data?: unknown }).data) && typeof v.filename === 'string';
}

/** More than `max` code points; counts no further than it must (a 1 MB value stops at max + 1). */
function longerThan(s: string, max: number): boolean {
  if (s.length <= max) return false;
  let n = 0;
  for (const _ of s) if (++n > max) return true;
  return false;
}

function coerce(schema: any, value: unknown, clamp = false): Coerced {
  if (schema['x-file']) return isUploadedFile(value) ? { value } : INVALID;
  switch (schema.type) {
    case 'integer': {
      let n: number;
      if (typeof value === 'number') n = value;
      else if (typeof value === 'string' && /^\s*[-+]?\d+\s*$/.test(value)) n = Number(value);
      else return INVALID;
      if (typeof value === 'number' && !Number.isInteger(value)) return INVALID;
      const min = schema.minimum ?? INT32_MIN;
      const max = schema.maximum ?? INT32_MAX;
      if (!Number.isSafeInteger(n) || n < min || n > max) {
        // A query filter beyond the column compares as the column's bound: `id_before=2^31` is
        // every row, `id_after=2^31` none, as the Service's ActiveRecord answers (no 400).
        // Past JavaScript's safe integers a number is not exact: that stays invalid, as before.
        if (clamp && Number.isSafeInteger(n)) return { value: n < min ? min : max };
        return OUT_OF_RANGE;
      }
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
      if (schema.format === 'date' || schema.format === 'date-time') {
        // Date.parse takes strings only (a JSON number is "not a string") and at most 128
        // characters; past that it raises, which Grape answers as invalid, not as too long.
        if (typeof value !== 'string' || !isStorableText(value)) return typeof value === 'string' ? UNSTORABLE : INVALID;
        if (schema.format === 'date') {
          const day = coerceDate(value);
          return day === null ? INVALID : { value: day };
        }
        const d = parseDateTime(value);
        return d ? { value: d.toISOString() } : INVALID;
      }
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return INVALID;
      const s = String(value);
      if (schema['x-own-errors']) return schema.enum && !schema.enum.includes(s) ? NOT_VALID_VALUE : { value: s };
      if (!isStorableText(s)) return UNSTORABLE;
      if (longerThan(s, schema.maxLength ?? DEFAULT_MAX_STRING)) {
        return { error: 'is invalid', tooLong: schema.maxLength ?? DEFAULT_MAX_STRING };
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
      // Lists become `in (…)` lists: both engines cap a statement's parameters (SQLite 32766).
      if (items.length > (schema.maxItems ?? MAX_ITEMS)) return INVALID;
      const out: unknown[] = [];
      let valueError: Coerced | null = null;
      for (const item of items) {
        const r = coerce(schema.items ?? {}, item, clamp);
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
          // A JSON null is not given, as at the top level (lookup below).
          if (value[k] === undefined || value[k] === null) {
            if (schema.required?.includes(k)) return INVALID;
            continue;
          }
          const r = coerce(sub, value[k], clamp);
          if ('error' in r) return r;
          out[k] = r.value;
        }
        return { value: out };
      }
      const out: Record<string, unknown> = {};
      // A hash (TypeBox Record) keeps its value schema under patternProperties.
      const valueSchema = schema.additionalProperties
        ?? Object.values<any>(schema.patternProperties ?? {})[0]
        ?? { type: 'string', maxLength: DEFAULT_MAX_STRING };
      for (const [k, v] of Object.entries(value)) {
        // A hash's keys are stored or compared as values too (custom attribute keys).
        if (!schema['x-own-errors'] && (!isStorableText(k) || k.length > NAME_MAX)) return INVALID;
        const r = coerce(valueSchema, v);
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
/** The most items an array parameter takes unless it declares `maxItems` (qs's arrayLimit too). */
const MAX_ITEMS = 1000;


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

/**
 * A parameter's value from the first source that has it (path, then body, then query, as Grape
 * merges them). A JSON `null` is "not given" (the spec: `private_profile` "null converted to
 * false", i.e. the default), so it neither fails a typed parameter nor hides a query value.
 */
function lookup(sources: Record<string, unknown>[], key: string): unknown {
  for (const source of sources) if (Object.hasOwn(source, key) && source[key] !== null) return source[key];
  return undefined;
}

/**
 * Validates parameters against a definition and returns only the declared ones, coerced, with
 * defaults filled in. Throws the Service's 400 bodies. `sources` are read in order, the first that
 * has a name winning (declared-params.ts passes path, body, query), without merging them into a
 * new object on every request.
 */
export function validateParams(def: ParamsDefinition, ...sources: Record<string, unknown>[]): Record<string, unknown> {
  return validate(def, null, sources);
}

/**
 * validateParams for a request: `path` (the route's path parameters) wins over `body`, then
 * `query`. A path parameter that cannot name a row answers as a missing row (see the header).
 */
export function validateRequestParams(
  def: ParamsDefinition, path: Record<string, unknown>, body: Record<string, unknown>, query: Record<string, unknown>,
): Record<string, unknown> {
  return validate(def, path, [path, body, query]);
}

function validate(
  def: ParamsDefinition,
  path: Record<string, unknown> | null,
  sources: Record<string, unknown>[],
): Record<string, unknown> {
  const given = (key: string) => lookup(sources, key) !== undefined;
  const out: Record<string, unknown> = {};
  const errors: string[] = [];
  let tooLong: Record<string, string[]> | undefined;
  let missing: string | undefined;
  for (const { key, sub, required } of fieldsOf(def)) {
    const value = lookup(sources, key);
    if (value === undefined) {
      if (required) missing ??= key;
      else if (sub.default !== undefined) {
        out[key] = typeof sub.default === 'object' && sub.default !== null ? structuredClone(sub.default) : sub.default;
      }
      continue;
    }
    // An empty string for a non-string type is Grape's nil: given, but without a value. Dates
    // and times are strings to the schema but Date and DateTime to Grape.
    if (value === '' && (sub.type !== 'string' || sub.format === 'date' || sub.format === 'date-time') && !sub['x-file']) {
      out[key] = null;
      continue;
    }
    const fromPath = path !== null && Object.hasOwn(path, key);
    const fromQuery = path !== null && !fromPath && lookup(sources.slice(1, 2), key) === undefined;
    const r = coerce(sub, value, fromQuery);
    if (!('error' in r)) {
      out[key] = r.value;
    } else if (fromPath && (r.outOfRange || r.unstorable || r.tooLong !== undefined)) {
      // Names no row: 0 for an id, '' for a path or name; the route answers its own 404.
      out[key] = r.outOfRange ? 0 : '';
    } else if (r.tooLong !== undefined) {
      tooLong ??= {};
      tooLong[key] = [`is too long (maximum is ${r.tooLong} characters)`];
    } else {
      errors.push(`${key} ${r.error}`);
    }
  }
  for (const group of def.rules.atLeastOneOf ?? []) {
    if (!group.some(given)) errors.push(`${group.join(', ')} are missing, at least one parameter must be provided`);
  }
  for (const group of def.rules.allOrNoneOf ?? []) {
    const count = group.filter(given).length;
    if (count > 0 && count < group.length) errors.push(`${group.join(', ')} provide all or none of parameters`);
  }
  for (const group of def.rules.mutuallyExclusive ?? []) {
    // Grape's MutualExclusionValidator names the parameters of the group that were given.
    const both = group.filter(given);
    if (both.length > 1) errors.push(`${both.join(', ')} are mutually exclusive`);
  }
  if (missing !== undefined) throw missingAttribute(missing);
  if (errors.length > 0) throw invalidParams(errors);
  // The Service's length validators answer as model errors (`is too long (maximum is N characters)`).
  if (tooLong) throw validationFailed(tooLong);
  return out;
}
