/**
 * `spec: inputs` and `$[[ inputs.name ]]` interpolation (the Service's Config::Yaml::Interpolator,
 * Config::Header::*, Config::Interpolation::*): a file whose first YAML document is a `spec:`
 * header declares its inputs (`default`, `type` string/number/boolean/array, `options`, `regex`,
 * `description`); the values an `include:` passes (`inputs:`) are checked against them and
 * replace each `$[[ inputs.name ]]` block of the second document, keys and values alike,
 * optionally through the functions `expand_vars` and `truncate(offset, length)`.
 *
 * Messages: the header's as its Entry nodes word them (`header:spec:inputs:name …`), each
 * input's as Interpolation::Inputs::*Input words them ("`name` input: …"), the template's as
 * Interpolation::Template/Block/Access/Functions word them; at most three joined by ", "
 * (Interpolator#error_message). A file with neither header nor inputs is returned untouched,
 * without walking it, so the common case costs nothing.
 *
 * Bounds: at most MAX_BLOCKS distinct blocks a file and MAX_INTERPOLATED_BYTES of text put in
 * by interpolation ("too many interpolation blocks", "config too large"); one string node at
 * most MAX_NODE_BYTES before and after ("config node too large"); an access of at most 1 KB;
 * at most three functions a block. A `regex` is compiled by RE2 (re2js), linear in its input,
 * as the Service's UntrustedRegexp is.
 */
import { RE2JS } from 're2js';
import { ConfigError, isHash, Reference, type Hash } from './config-error.ts';
import type { Variables } from './expression.ts';
import { expandVariables } from './merge.ts';

/** Distinct interpolation blocks one file may have (issue 28's bound; the Service allows more). */
export const MAX_BLOCKS = 100;
/** Bytes interpolation may put into one file, and the size of one string node. */
export const MAX_INTERPOLATED_BYTES = 1024 * 1024;
export const MAX_NODE_BYTES = 1024 * 1024;
/** Interpolation::Access::MAX_ACCESS_BYTESIZE, Block::MAX_FUNCTIONS, Header::Input::ALLOWED_OPTIONS_LIMIT. */
const MAX_ACCESS_BYTES = 1024;
const MAX_FUNCTIONS = 3;
const MAX_OPTIONS = 50;
const INPUT_KEYS = ['default', 'description', 'options', 'regex', 'type'];
const INPUT_TYPES = ['array', 'boolean', 'number', 'string'];
const BLOCK = /\$\[\[\s*(\S.*?\S)\s*\]\]/g;

/** Errors of one stage: the first three become the message (Interpolator#error_message). */
function failWith(errors: string[]): void {
  if (errors.length === 0) return;
  const joined = errors.slice(0, 3).join(', ');
  throw new ConfigError(joined);
}

type InputSpec = Hash | null;

function checkHeader(header: unknown): Map<string, InputSpec> {
  const errors: string[] = [];
  const bad = (m: string) => errors.push(m);
  const specs = new Map<string, InputSpec>();
  // load-yaml.ts only takes a first document whose keys are all `spec` as a header.
  const spec = isHash(header) ? header.spec : undefined;
  if (spec !== undefined && spec !== null) {
    if (!isHash(spec)) bad('header:spec config should be a hash');
    else {
      const unknown = Object.keys(spec).filter((k) => k !== 'inputs');
      if (unknown.length > 0) bad(`header:spec config contains unknown keys: ${unknown.join(', ')}`);
      const inputs = spec.inputs;
      if (inputs !== undefined && inputs !== null && !isHash(inputs)) bad('header:spec:inputs config should be a hash');
      for (const [name, value] of Object.entries(isHash(inputs) ? inputs : {})) {
        const at = `header:spec:inputs:${name}`;
        if (value === null) { specs.set(name, null); continue; }
        if (!isHash(value)) { bad(`${at} config should be a hash`); continue; }
        const extra = Object.keys(value).filter((k) => !INPUT_KEYS.includes(k));
        if (extra.length > 0) bad(`${at} config contains unknown keys: ${extra.join(', ')}`);
        const d = value.description;
        if (d !== undefined && d !== null && typeof d !== 'string' && !Number.isInteger(d)) {
          bad(`${at} input description must be an alphanumeric string`);
        }
        if (value.regex !== undefined && value.regex !== null && typeof value.regex !== 'string') bad(`${at} input regex should be a string`);
        const type = value.type;
        if (type !== undefined && type !== null && !INPUT_TYPES.includes(String(type))) bad(`${at} input type unknown value: ${String(type)}`);
        const options = value.options;
        if (options !== undefined && options !== null && !Array.isArray(options)) bad(`${at} input options should be an array`);
        if (Array.isArray(options) && options.length > MAX_OPTIONS) bad(`${at} config cannot define more than ${MAX_OPTIONS} options`);
        specs.set(name, value);
      }
    }
  }
  failWith(errors);
  return specs;
}

function typeOf(spec: InputSpec): string {
  return spec === null || spec.type === undefined || spec.type === null ? 'string' : String(spec.type);
}

function isType(value: unknown, type: string): boolean {
  // A string input's `default: null` is a default of no value (StringInput#valid_value? takes
  // nil): interpolated as nothing inside a longer string, as null where it is the whole node.
  // Real components rely on it (GNOME's citemplates declare their optional options so).
  if (type === 'string') return typeof value === 'string' || value === null;
  if (type === 'number') return typeof value === 'number';
  if (type === 'boolean') return typeof value === 'boolean';
  return Array.isArray(value);
}

/** One input's value, or its errors (Interpolation::Inputs::BaseInput#validate! and the type's overrides). */
function checkInput(name: string, spec: InputSpec, given: unknown, errors: string[]): unknown {
  const bad = (m: string) => errors.push(m);
  const p = `\`${name}\` input: `;
  const s = spec ?? {};
  const required = !Object.hasOwn(s, 'default');
  const value = given === undefined ? null : given;
  if (required && value === null) { bad(`${p}required value has not been provided`); return null; }
  const type = typeOf(spec);
  const before = errors.length;
  const validate = (v: unknown, isDefault: boolean) => {
    const which = isDefault ? 'default' : 'provided';
    if (!isType(v, type)) bad(`${p}${which} value is not ${type === 'array' ? 'an' : 'a'} ${type}`);
    const options = s.options;
    if (options !== undefined && options !== null) {
      if (type === 'string' || type === 'number') {
        if (v !== null && v !== false && Array.isArray(options) && !options.includes(v)) {
          bad(`${p}\`${String(v)}\` cannot be used because it is not in the list of ${type === 'number' ? 'the ' : ''}allowed options`);
        }
      } else {
        bad(`${p}Options can only be used with string and number inputs`);
      }
    }
    if (Object.hasOwn(s, 'regex')) {
      if (type !== 'string') bad(`${p}RegEx validation can only be used with string inputs`);
      else if (typeof v === 'string') {
        let re: RE2JS | null = null;
        try {
          re = RE2JS.compile(String(s.regex));
        } catch {
          bad(`${p}invalid regular expression`);
        }
        if (re && !re.matcher(v).find()) bad(`${p}${which} value does not match required RegEx pattern`);
      }
    }
  };
  if (!required) validate(s.default, true);
  if (value !== null) validate(value, false);
  if (errors.length > before) return null;
  return value === null ? s.default : value;
}

function checkInputs(specs: Map<string, InputSpec>, args: Hash): Map<string, unknown> {
  const errors: string[] = [];
  const unknown = Object.keys(args).filter((k) => !specs.has(k));
  const bad = (m: string) => errors.push(m);
  if (unknown.length > 0) bad(`unknown input arguments: ${unknown.join(', ')}`);
  const values = new Map<string, unknown>();
  for (const [name, spec] of specs) values.set(name, checkInput(name, spec, args[name], errors));
  failWith(errors);
  return values;
}

/** Ruby's `to_s` of a value put inside a longer string. */
function asText(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((i) => (typeof i === 'string' ? JSON.stringify(i) : asText(i))).join(', ')}]`;
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function applyFunction(expr: string, value: unknown, vars: Variables): unknown {
  if (expr === 'expand_vars') {
    if (typeof value !== 'string') {
      throw new ConfigError('error in `expand_vars` function: invalid input type: expand_vars can only be used with string inputs');
    }
    // ExpandVariables.expand_existing: variables the pipeline does not know stay as written. The
    // variables handed to the loader are predefined and pipeline ones, never masked project ones.
    return expandVariables(value, vars, true);
  }
  const t = /^truncate\(\s*(\d+)\s*,\s*(\d+)\s*\)?$/.exec(expr);
  if (t) {
    if (typeof value !== 'string') {
      throw new ConfigError('error in `truncate` function: invalid input type: truncate can only be used with string inputs');
    }
    const chars = Array.from(value);
    const offset = Number(t[1]);
    return offset > chars.length ? '' : chars.slice(offset, offset + Number(t[2])).join('');
  }
  throw new ConfigError(`no function matching \`${expr}\`: check that the function name, arguments, and types are correct`);
}

interface Walk {
  inputs: Map<string, unknown>;
  vars: Variables;
  blocks: Map<string, unknown>;
  bytes: number;
}

function blockValue(data: string, w: Walk): unknown {
  const [access, ...functions] = data.split('|').map((p) => p.trim());
  const objects = access.split('.');
  const errors: string[] = [];
  const bad = (m: string) => errors.push(m);
  if (objects.length <= 1) bad('invalid interpolation access pattern');
  if (Buffer.byteLength(access) > MAX_ACCESS_BYTES) bad('maximum interpolation expression size exceeded');
  failWith(errors);
  if (objects[0] !== 'inputs') throw new ConfigError(`unknown interpolation key: \`${objects[0]}\``);
  if (!w.inputs.has(objects[1])) throw new ConfigError(`unknown interpolation key: \`${objects[1]}\``);
  // Inputs are one level deep: a further key reads into a scalar, which has none.
  if (objects.length > 2) throw new ConfigError(`unknown interpolation key: \`${objects[2]}\``);
  if (functions.length > MAX_FUNCTIONS) throw new ConfigError('too many functions in interpolation block');
  let value = w.inputs.get(objects[1]);
  for (const f of functions) value = applyFunction(f, value, w.vars);
  return value;
}

function spend(w: Walk, value: unknown): void {
  w.bytes += Buffer.byteLength(typeof value === 'string' ? value : asText(value));
  if (w.bytes > MAX_INTERPOLATED_BYTES) throw new ConfigError('config too large');
}

function interpolateString(node: string, w: Walk): unknown {
  if (!node.includes('$[[')) return node;
  if (Buffer.byteLength(node) > MAX_NODE_BYTES) throw new ConfigError('config node too large');
  const valueOf = (block: string, data: string): unknown => {
    if (!w.blocks.has(block)) {
      if (w.blocks.size >= MAX_BLOCKS) throw new ConfigError('too many interpolation blocks');
      w.blocks.set(block, blockValue(data, w));
    }
    return w.blocks.get(block);
  };
  BLOCK.lastIndex = 0;
  const whole = BLOCK.exec(node);
  if (whole && whole[0].length === node.length) {
    // A node that is one block takes the input's value with its type (Template#get_block_value!).
    const value = valueOf(whole[0], whole[1]);
    spend(w, value);
    return value;
  }
  const out = node.replace(BLOCK, (block: string, data: string) => {
    const text = asText(valueOf(block, data));
    spend(w, text);
    return text;
  });
  if (Buffer.byteLength(out) > MAX_NODE_BYTES) throw new ConfigError('config node too large');
  return out;
}

function walk(node: unknown, w: Walk): unknown {
  if (typeof node === 'string') return interpolateString(node, w);
  if (Array.isArray(node)) return node.map((n) => walk(n, w));
  if (node instanceof Reference) return node;
  if (isHash(node)) {
    const out = Object.create(null) as Hash;
    for (const [k, v] of Object.entries(node)) {
      const key = interpolateString(k, w);
      out[typeof key === 'string' ? key : asText(key)] = walk(v, w);
    }
    return out;
  }
  return node;
}

/**
 * The configuration document of a file after its header's inputs are checked and interpolated;
 * throws the Service's message (without the file's name, which includes.ts adds).
 * `header` is undefined when the file has none; `args` undefined when no inputs were given.
 */
export function interpolateInputs(header: unknown, content: unknown, args: unknown, vars: Variables): unknown {
  if (header === undefined && args === undefined) return content;
  if (args !== undefined && args !== null && !isHash(args)) throw new ConfigError('Given inputs must be a hash');
  const given = isHash(args) ? args : {};
  if (header === undefined) {
    if (Object.keys(given).length > 0) {
      throw new ConfigError('Given inputs not defined in the `spec` section of the included configuration file');
    }
    return content;
  }
  const inputs = checkInputs(checkHeader(header), given);
  return walk(content, { inputs, vars, blocks: new Map(), bytes: 0 });
}
