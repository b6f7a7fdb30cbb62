/** The whole schema: each part's SDL and resolvers, merged by type. */
import * as common from './common.ts';
import * as users from './users.ts';
import * as projects from './projects.ts';
import * as ci from './ci.ts';
import * as projectCi from './project-ci.ts';
import * as detailedStatus from './detailed-status.ts';
import * as permissions from './permissions.ts';
import * as commit from './commit.ts';
import * as runners from './runners.ts';
import * as jobMutations from './job-mutations.ts';
import * as pipelineMutations from './pipeline-mutations.ts';

const parts = [common, users, projects, ci, projectCi, detailedStatus, permissions, commit, runners, jobMutations, pipelineMutations];

export const typeDefs = parts.map((p) => p.typeDefs).join('\n');

type ResolverMap = Record<string, unknown>;

export const resolvers: ResolverMap = {};
for (const part of parts) {
  for (const [type, fields] of Object.entries(part.resolvers as ResolverMap)) {
    const existing = resolvers[type];
    // Scalars are objects of their own; field maps of one type from several parts merge.
    resolvers[type] = existing && typeof existing === 'object' && !('serialize' in existing)
      ? { ...existing, ...(fields as object) }
      : fields;
  }
}

// Connections compute `count` only when asked (connection.ts): a resolver calls it, since a
// compiled query (graphql-jit) reads properties and does not call functions as graphql-js does.
for (const m of typeDefs.matchAll(/type (\w+Connection) \{[^}]*\bcount: Int!/g)) {
  const name = m[1]!;
  resolvers[name] = { ...(resolvers[name] as object | undefined), count: (c: { count: () => unknown }) => c.count() };
}
