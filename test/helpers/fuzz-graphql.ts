/**
 * GraphQL documents for the fuzzer (issue 35, item 13), made from the schema itself: every field
 * that takes arguments, on every type a query can reach from `Query` (and every `Mutation`), gets
 * one document per argument — and per field of an input object argument — with that value
 * hostile and every other required argument valid. A field added later is fuzzed without a test
 * of its own. The valid values name real objects (`valid`), so the resolvers behind them run.
 */
import {
  getNamedType, isEnumType, isInputObjectType, isInterfaceType, isListType, isNonNullType, isObjectType, isScalarType,
  type GraphQLArgument, type GraphQLField, type GraphQLInputField, type GraphQLInputType, type GraphQLNamedType,
  type GraphQLObjectType, type GraphQLInterfaceType, type GraphQLSchema,
} from 'graphql';

export interface GraphqlCase {
  what: string;
  query: string;
  variables: Record<string, unknown>;
}

/** How the fuzzer fills an argument: a valid value, and the hostile ones for its type. */
export interface GraphqlValues {
  /** A valid value for a required argument (the type's scalar name, the argument's name and its field's). */
  valid(scalar: string, arg: string, field: string): unknown;
  /** Hostile values for a leaf of this named type (a scalar or an enum). */
  hostile(type: GraphQLNamedType): { name: string; value: unknown }[];
  /**
   * The arguments (`(iid: "1")`) to pass on the way through `owner.field` when its required ones
   * are not enough to name an object (a field whose arguments are all optional but one is needed).
   */
  reachWith?(owner: string, field: string): string | undefined;
}

type Composite = GraphQLObjectType | GraphQLInterfaceType;

/** `name: <literal>` for the required arguments of a field on the way to a type. */
function literalArgs(field: GraphQLField<unknown, unknown>, values: GraphqlValues): string {
  const parts = field.args.filter((a) => isNonNullType(a.type)).map((a) => {
    const named = getNamedType(a.type);
    const v = values.valid(named.name, a.name, field.name);
    return `${a.name}: ${isEnumType(named) ? String(v) : JSON.stringify(v)}`;
  });
  return parts.length > 0 ? `(${parts.join(', ')})` : '';
}

/**
 * How a query reaches each type: the shortest chain of fields from Query, each with its required
 * arguments filled in (`project(fullPath: "a/b") { pipeline(iid: "1") { … } }`).
 */
function reachable(schema: GraphQLSchema, values: GraphqlValues): Map<Composite, (inner: string) => string> {
  const query = schema.getQueryType()!;
  const reach = new Map<Composite, (inner: string) => string>([[query, (inner) => inner]]);
  const queue: Composite[] = [query];
  while (queue.length > 0) {
    const type = queue.shift()!;
    const outer = reach.get(type)!;
    for (const field of Object.values(type.getFields())) {
      const target = getNamedType(field.type);
      if (!(isObjectType(target) || isInterfaceType(target)) || reach.has(target)) continue;
      // Skip a field whose required arguments cannot be written as literals (input objects).
      if (field.args.some((a) => isNonNullType(a.type) && isInputObjectType(getNamedType(a.type)))) continue;
      const call = `${field.name}${values.reachWith?.(type.name, field.name) ?? literalArgs(field, values)}`;
      reach.set(target, (inner) => outer(`${call} { ${inner} }`));
      queue.push(target);
    }
  }
  return reach;
}

/** A query that reaches `typeName` and asks for its `__typename` (to check the fuzzer's way there resolves). */
export function reachQuery(schema: GraphQLSchema, values: GraphqlValues, typeName: string): string | null {
  for (const [type, wrap] of reachable(schema, values)) if (type.name === typeName) return `query { ${wrap('__typename')} }`;
  return null;
}

/** A valid value of an input type (required fields of input objects filled in), or undefined when optional. */
function validInput(type: GraphQLInputType, name: string, field: string, values: GraphqlValues, required: boolean): unknown {
  if (!isNonNullType(type) && !required) return undefined;
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) return [validInput(inner.ofType, name, field, values, true)];
  if (isInputObjectType(inner)) {
    const out: Record<string, unknown> = {};
    for (const f of Object.values(inner.getFields())) {
      const v = validInput(f.type, f.name, field, values, false);
      if (v !== undefined) out[f.name] = v;
    }
    return out;
  }
  return values.valid(inner.name, name, field);
}

/** Every leaf of an argument: a path into its value and the leaf's type (lists and input objects opened). */
function leaves(type: GraphQLInputType, path: (string | number)[] = []): { path: (string | number)[]; type: GraphQLInputType }[] {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isInputObjectType(inner)) {
    return Object.values(inner.getFields()).flatMap((f: GraphQLInputField) => leaves(f.type, [...path, f.name]));
  }
  return [{ path, type }];
}

function setAt(root: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const base = (root && typeof root === 'object' ? { ...(root as object) } : {}) as Record<string | number, unknown>;
  base[path[0]!] = setAt(base[path[0]!], path.slice(1), value);
  return base;
}

/** Hostile values for one leaf: each of its named type's, and for a list also a list of them and a long list. */
function hostileFor(type: GraphQLInputType, values: GraphqlValues): { name: string; value: unknown }[] {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) {
    const item = getNamedType(inner);
    const each = values.hostile(item).map((h) => ({ name: `[${h.name}]`, value: [h.value] }));
    const filler = values.valid(item.name, '', '');
    return [...each, { name: '1000 items', value: Array.from({ length: 1000 }, () => filler) }];
  }
  return values.hostile(getNamedType(inner));
}

function selection(field: GraphQLField<unknown, unknown>): string {
  const named = getNamedType(field.type);
  return isScalarType(named) || isEnumType(named) ? '' : ' { __typename }';
}

export function graphqlCases(schema: GraphQLSchema, values: GraphqlValues): GraphqlCase[] {
  const cases: GraphqlCase[] = [];
  const fieldCases = (field: GraphQLField<unknown, unknown>, owner: string, wrap: (inner: string) => string, operation: string) => {
    if (field.args.length === 0) return;
    const decl = field.args.map((a: GraphQLArgument, i) => `$a${i}: ${String(a.type)}`).join(', ');
    const call = `${field.name}(${field.args.map((a, i) => `${a.name}: $a${i}`).join(', ')})${selection(field)}`;
    const query = `${operation}(${decl}) { ${wrap(call)} }`;
    const base: Record<string, unknown> = {};
    field.args.forEach((a, i) => {
      const v = validInput(a.type, a.name, field.name, values, false);
      if (v !== undefined) base[`a${i}`] = v;
    });
    field.args.forEach((a, i) => {
      for (const leaf of leaves(a.type)) {
        for (const h of hostileFor(leaf.type, values)) {
          const valid = base[`a${i}`] ?? validInput(a.type, a.name, field.name, values, true);
          const variables = { ...base, [`a${i}`]: setAt(valid, leaf.path, h.value) };
          cases.push({ what: `${owner}.${field.name}(${[a.name, ...leaf.path].join('.')} = ${h.name})`, query, variables });
        }
      }
    });
  };
  for (const [type, wrap] of reachable(schema, values)) {
    for (const field of Object.values(type.getFields())) fieldCases(field, type.name, wrap, 'query');
  }
  // Mutations last, deletions last of all: they may take away the objects the valid values name.
  const mutation = schema.getMutationType();
  const fields = mutation ? Object.values(mutation.getFields()) : [];
  const rank = (f: GraphQLField<unknown, unknown>) => (/Destroy|Delete/.test(f.name) ? 1 : 0);
  for (const field of fields.sort((a, b) => rank(a) - rank(b))) fieldCases(field, 'Mutation', (inner) => inner, 'mutation');
  return cases;
}
