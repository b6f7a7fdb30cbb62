/** Scalars, paging and instance types shared by every part of the schema (the Service's names). */
import { GraphQLScalarType, Kind } from 'graphql';
import { scalars } from '../global-id.ts';
import type { GqlContext } from '../context.ts';
import { assertMayWrite } from '../access.ts';

export const typeDefs = /* GraphQL */ `
  "Time represented in ISO 8601."
  scalar Time
  "Duration between two instants, represented as a fractional number of seconds."
  scalar Duration
  scalar UserID
  scalar CiPipelineID
  scalar JobID
  scalar CiBuildID
  scalar CiRunnerID

  type PageInfo {
    hasNextPage: Boolean!
    hasPreviousPage: Boolean!
    startCursor: String
    endCursor: String
  }

  enum Sort { updated_desc updated_asc created_desc created_asc }

  enum VisibilityLevelsEnum { private internal public }

  type QueryComplexity {
    limit: Int
    score: Int
  }

  type Metadata {
    version: String!
    revision: String!
    enterprise: Boolean!
  }

  type Query {
    "Information about the complexity of the GraphQL query."
    queryComplexity: QueryComplexity
    "Metadata about the instance."
    metadata: Metadata
    "Text to echo back."
    echo(text: String!): String!
  }

  type Mutation {
    "Text to echo back (a mutation that changes nothing, to try credentials)."
    echoCreate(input: EchoCreateInput!): EchoCreatePayload
  }

  input EchoCreateInput {
    clientMutationId: String
    errors: [String!]
    messages: [String!]
  }

  type EchoCreatePayload {
    clientMutationId: String
    echoes: [String!]
    errors: [String!]!
  }
`;

const time = new GraphQLScalarType<string, string>({
  name: 'Time',
  serialize: (v) => String(v),
  parseValue: (v) => {
    if (typeof v !== 'string' || v.length > 64 || Number.isNaN(Date.parse(v))) {
      throw new TypeError(`${JSON.stringify(v)} is not a valid Time`);
    }
    return new Date(v).toISOString();
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING || ast.value.length > 64 || Number.isNaN(Date.parse(ast.value))) {
      throw new TypeError('Time must be an ISO 8601 string');
    }
    return new Date(ast.value).toISOString();
  },
});

const duration = new GraphQLScalarType<number, number>({
  name: 'Duration',
  serialize: (v) => Number(v),
  parseValue: (v) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`${JSON.stringify(v)} is not a valid Duration`);
    return v;
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.FLOAT && ast.kind !== Kind.INT) throw new TypeError('Duration must be a number of seconds');
    return Number(ast.value);
  },
});

export const resolvers = {
  Time: time,
  Duration: duration,
  ...scalars,
  Query: {
    queryComplexity: (_: unknown, __: unknown, ctx: GqlContext) => ctx.complexity,
    // The Service shows the version only to signed-in users (MetadataResolver: read_instance_metadata).
    metadata: (_: unknown, __: unknown, ctx: GqlContext) => (ctx.viewer ? { ...ctx.kiln.version, enterprise: false } : null),
    echo: (
      _: unknown, args: { text: string }, ctx: GqlContext,
    ) => `${ctx.viewer ? JSON.stringify(ctx.viewer.username) : 'nil'} says: ${args.text}`,
  },
  Mutation: {
    echoCreate: (_: unknown, args: { input: { clientMutationId?: string; errors?: string[]; messages?: string[] } }, ctx: GqlContext) => {
      assertMayWrite(ctx);
      return {
      clientMutationId: args.input.clientMutationId ?? null,
      echoes: args.input.messages ?? [],
      errors: args.input.errors ?? [],
      };
    },
  },
};
