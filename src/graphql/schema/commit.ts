/**
 * A pipeline's `commit` (the Service's `Commit` type) from the commit kiln recorded with the
 * pipeline, and a project's CI configuration path (kiln reads `.gitlab-ci.yml`, always).
 */
import type { PipelineRow } from '../../db/tables/ci.ts';
import type { CommitData } from '../../domain/pipelines/git-source.ts';
import { CI_CONFIG_PATH } from '../../domain/pipelines/create-pipeline.ts';
import type { GqlContext } from '../context.ts';
import { projectPath } from './ci.ts';

export const typeDefs = /* GraphQL */ `
  type Commit {
    id: ID!
    sha: String!
    shortId: String!
    title: String
    fullTitle: String
    message: String
    description: String
    authorName: String
    authorEmail: String
    authoredDate: Time
    committerName: String
    committerEmail: String
    committedDate: Time
    webUrl: String!
    webPath: String!
  }

  extend type Pipeline { commit: Commit }
  extend type Project {
    ciConfigPath: String
    ciConfigPathOrDefault: String!
  }
`;

type CommitView = CommitData & { webPath: string; externalUrl: string };

export const resolvers = {
  Commit: {
    // The Service presents commits through CommitPresenter, whose global id carries the sha.
    id: (c: CommitView) => `gid://gitlab/CommitPresenter/${c.id}`,
    sha: (c: CommitView) => c.id,
    shortId: (c: CommitView) => c.short_id,
    fullTitle: (c: CommitView) => c.message.split('\n', 1)[0],
    // The message after its first line, as Commit#description.
    description: (c: CommitView) => {
      const rest = c.message.split('\n').slice(1).join('\n').trim();
      return rest === '' ? null : rest;
    },
    authorName: (c: CommitView) => c.author_name,
    authorEmail: (c: CommitView) => c.author_email,
    authoredDate: (c: CommitView) => c.authored_date,
    committerName: (c: CommitView) => c.committer_name,
    committerEmail: (c: CommitView) => c.committer_email,
    committedDate: (c: CommitView) => c.committed_date,
    webUrl: (c: CommitView) => `${c.externalUrl}${c.webPath}`,
  },
  Pipeline: {
    commit: async (p: PipelineRow, _: unknown, ctx: GqlContext): Promise<CommitView | null> => {
      let data: CommitData;
      try {
        data = JSON.parse(p.commit_data) as CommitData;
      } catch {
        return null;
      }
      if (!data || typeof data.id !== 'string') return null;
      return { ...data, webPath: `${await projectPath(ctx, p.project_id)}/-/commit/${data.id}`, externalUrl: ctx.kiln.config.externalUrl };
    },
  },
  Project: {
    ciConfigPath: () => null,
    ciConfigPathOrDefault: () => CI_CONFIG_PATH,
  },
};
