/**
 * The Service's query limits (GitlabSchema, GraphqlController; doc/api/graphql/index.md "Limits"):
 * a query text of at most 10,000 characters, a depth of at most 15, and a complexity of at most
 * 200 for anonymous callers, 250 for signed-in users and 300 for administrators, each refused with
 * the Service's own message.
 *
 * Complexity follows the Service's field rules: every field costs 1; a connection also costs 1
 * more with `sort` and 5 more with `search` (BaseResolver), and its selections count once, plus a
 * share that grows with the page asked for (limit × 1 %, the 100-node page doubling them).
 */
import {
  getNamedType, GraphQLError, isObjectType, isInterfaceType, Kind, valueFromASTUntyped,
  type DocumentNode, type FieldNode, type FragmentDefinitionNode, type GraphQLCompositeType, type GraphQLSchema,
  type OperationDefinitionNode, type SelectionSetNode,
} from 'graphql';
import { MAX_PAGE_SIZE } from './connection.ts';

export const MAX_DEPTH = 15;
export const MAX_COMPLEXITY = { anonymous: 200, authenticated: 250, admin: 300 } as const;

interface Walk {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
}

function operationOf(document: DocumentNode, operationName: string | null | undefined): OperationDefinitionNode | null {
  const ops = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (operationName) return ops.find((o) => o.name?.value === operationName) ?? null;
  return ops.length === 1 ? ops[0]! : null;
}

/** Fields of a selection set with fragments spread in (each fragment once per path). */
function fieldsOf(w: Walk, set: SelectionSetNode, seen: Set<string>): FieldNode[] {
  const out: FieldNode[] = [];
  for (const s of set.selections) {
    if (s.kind === Kind.FIELD) out.push(s);
    else if (s.kind === Kind.INLINE_FRAGMENT) out.push(...fieldsOf(w, s.selectionSet, seen));
    else {
      const name = s.name.value;
      const f = w.fragments.get(name);
      if (f && !seen.has(name)) out.push(...fieldsOf(w, f.selectionSet, new Set([...seen, name])));
    }
  }
  return out;
}

function argValue(w: Walk, field: FieldNode, name: string): unknown {
  const arg = field.arguments?.find((a) => a.name.value === name);
  return arg ? valueFromASTUntyped(arg.value, w.variables) : undefined;
}

function depthOf(w: Walk, set: SelectionSetNode, seen: Set<string>, level: number): number {
  // Beyond the limit nothing more need be counted; this also bounds the walk on hostile input.
  if (level > MAX_DEPTH + 1) return level;
  let max = level;
  for (const f of fieldsOf(w, set, seen)) {
    max = Math.max(max, f.selectionSet ? depthOf(w, f.selectionSet, seen, level + 1) : level + 1);
  }
  return max;
}

function complexityOf(w: Walk, parent: GraphQLCompositeType | null, set: SelectionSetNode, level: number): number {
  if (level > MAX_DEPTH + 1) return 0;
  let total = 0;
  for (const f of fieldsOf(w, set, new Set())) {
    const def = parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[f.name.value] : undefined;
    const type = def ? getNamedType(def.type) : null;
    let cost = 1;
    let children = f.selectionSet ? complexityOf(w, type as GraphQLCompositeType | null, f.selectionSet, level + 1) : 0;
    if (type && type.name.endsWith('Connection')) {
      if (argValue(w, f, 'sort') !== undefined) cost += 1;
      if (argValue(w, f, 'search') !== undefined) cost += 5;
      const asked = [argValue(w, f, 'first'), argValue(w, f, 'last')].filter((v): v is number => typeof v === 'number');
      const limit = Math.min(MAX_PAGE_SIZE, ...asked.map((v) => Math.max(0, v)));
      children += Math.floor(children * limit * 0.01);
    }
    total += cost + children;
  }
  return total;
}

export interface LimitsResult {
  depth: number;
  complexity: number;
  /** Only `__schema`, `__type` and `__typename` at the top: the static schema, no database work. */
  introspection: boolean;
}

export function measure(
  schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
): LimitsResult | null {
  const op = operationOf(document, operationName);
  if (!op) return null;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const w: Walk = { schema, fragments, variables: variables ?? {} };
  const root = op.operation === 'mutation'
    ? schema.getMutationType()
    : op.operation === 'subscription' ? schema.getSubscriptionType() : schema.getQueryType();
  const introspection = fieldsOf(w, op.selectionSet, new Set()).every((f) => f.name.value.startsWith('__'));
  return { depth: depthOf(w, op.selectionSet, new Set(), 0), complexity: complexityOf(w, root ?? null, op.selectionSet, 0), introspection };
}

export function depthError(depth: number): GraphQLError {
  return new GraphQLError(`Query has depth of ${depth}, which exceeds max depth of ${MAX_DEPTH}`);
}

export function complexityError(score: number, limit: number): GraphQLError {
  return new GraphQLError(`Query has complexity of ${score}, which exceeds max complexity of ${limit}`);
}
