/**
 * Commits of a project's repository (the Service's API::Commits): the log of a ref (or of every
 * ref) with its filters, one commit with its stats and last pipeline, and a new commit made of
 * file actions (create, update, delete, move, chmod) through git plumbing
 * (domain/repositories/commit-actions.ts). A new commit goes through afterRefUpdate.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import {
  commitStats, countLog, logPage, readCommit, refTarget, resolveCommit, type CommitInfo,
} from '../../../domain/repositories/git-read.ts';
import { COMMIT_ACTIONS, commitActions, MAX_ACTIONS, type CommitAction } from '../../../domain/repositories/commit-actions.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { afterRefUpdate } from '../../../domain/repositories/after-ref-update.ts';
import { readableRevision } from '../../../domain/repositories/ref-names.ts';
import { normaliseFilePath } from '../../../domain/repositories/file-paths.ts';
import { MAX_MESSAGE_BYTES } from '../../../domain/repositories/ref-writes.ts';
import { projectPipelinesQuery } from '../../../domain/pipelines/pipelines.queries.ts';
import { ApiError, invalidParams, notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { pageWindow, paginationParams, setOffsetHeaders, MAX_COUNT } from '../../lists/pagination.ts';
import { CommitDetailSchema, CommitSchema, presentCommit, presentCommitDetail } from '../../entities/commit.ts';
import { presentPipelineBasic } from '../../entities/pipeline.ts';
import { authorizePushToBranch, loadRepository, repositoryReadOnly, type RepositoryContext } from '../../loaders/repository.ts';
import {
  BRANCH_MESSAGES, branchAllowsForcePush, isProtectedBranch,
} from '../../../domain/protected-refs/ref-rules.ts';
import { decodeContent } from './content.ts';
import { rejectLongStrings, rejectNulBytes, rejectUnusableGitIdentity } from '../../input/string-guards.ts';
import { route } from '../../route.ts';

const listParams = defineParams({
  id: P.string(),
  ref_name: P.optional(P.string({ description: 'branch, tag or revision; default branch when absent' })),
  since: P.optional(P.dateTime()),
  until: P.optional(P.dateTime()),
  path: P.optional(P.string({ description: 'only commits touching this file or directory' })),
  all: P.optional(P.boolean({ default: false })),
  with_stats: P.optional(P.boolean({ default: false })),
  first_parent: P.optional(P.boolean({ default: false })),
  order: P.optional(P.oneOf(['default', 'topo'] as const, { default: 'default' })),
  ...paginationParams,
});
const showParams = defineParams({ id: P.string(), sha: P.string(), stats: P.optional(P.boolean({ default: true })) });
const createParams = defineParams({
  id: P.string(),
  branch: P.string({ description: 'the branch to commit to (created from start_branch or start_sha when new)' }),
  commit_message: P.string(),
  start_branch: P.optional(P.string()),
  start_sha: P.optional(P.string()),
  actions: P.array(P.object({
    action: P.oneOf(COMMIT_ACTIONS),
    file_path: P.string(),
    previous_path: P.optional(P.string()),
    content: P.optional(P.string()),
    encoding: P.optional(P.oneOf(['text', 'base64'] as const)),
    last_commit_id: P.optional(P.string()),
    execute_filemode: P.optional(P.boolean()),
  })),
  author_email: P.optional(P.string()),
  author_name: P.optional(P.string()),
  stats: P.optional(P.boolean({ default: true })),
  force: P.optional(P.boolean({ default: false })),
}, { mutuallyExclusive: [['start_branch', 'start_sha']] });

/** Diffs run at once for `with_stats` (each is one git process). */
const STATS_PARALLEL = 4;

const commits: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  async function detail(ctx: RepositoryContext, commit: CommitInfo, withStats: boolean) {
    const [stats, pipeline] = await Promise.all([
      withStats ? commitStats(ctx.repo.gitDir, commit) : Promise.resolve(undefined),
      projectPipelinesQuery(db, ctx.project.id, { sha: commit.id, orderBy: 'id', sort: 'desc' }).limit(1).executeTakeFirst(),
    ]);
    return presentCommitDetail(commit, ctx.webUrl, ctx.project.id, stats, pipeline ? presentPipelineBasic(pipeline, ctx.webUrl) : null);
  }

  route(app, {
    method: 'GET', url: '/projects/:id/repository/commits', auth: 'optional', params: listParams,
    schema: { summary: 'The commits of a ref', tags: ['commits'], response: { 200: Type.Array(CommitSchema) } },
  }, async ({ request, reply, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    const rev = input.ref_name || ctx.project.default_branch || 'HEAD';
    let path: string | undefined;
    if (input.path) {
      const p = normaliseFilePath(input.path);
      if (!p.ok) throw invalidParams(['path is invalid']);
      path = p.path;
    }
    const { page, perPage, offset } = pageWindow(request);
    // A revision git cannot resolve has no commits (the Service answers an empty list).
    const resolved = input.all ? 'all' : readableRevision(rev) ? await resolveCommit(ctx.repo.gitDir, rev) : null;
    if (!resolved) {
      setOffsetHeaders(request, reply, { page, perPage, hasNext: false, total: 0 });
      return [];
    }
    const query = {
      rev: resolved, all: input.all, path, since: input.since, until: input.until,
      firstParent: input.first_parent, topo: input.order === 'topo',
    };
    const [rows, counted] = await Promise.all([
      logPage(ctx.repo.gitDir, query, offset, perPage + 1),
      countLog(ctx.repo.gitDir, query, MAX_COUNT + 1),
    ]);
    const hasNext = rows.length > perPage;
    if (hasNext) rows.pop();
    setOffsetHeaders(request, reply, { page, perPage, hasNext, total: counted > MAX_COUNT ? null : counted });
    if (!input.with_stats) return rows.map((c) => presentCommit(c, ctx.webUrl));
    // One diff per commit, a few at a time: a page may hold 100 commits.
    const out = [];
    for (let i = 0; i < rows.length; i += STATS_PARALLEL) {
      const batch = rows.slice(i, i + STATS_PARALLEL);
      const stats = await Promise.all(batch.map((c) => commitStats(ctx.repo.gitDir, c)));
      out.push(...batch.map((c, j) => presentCommit(c, ctx.webUrl, stats[j])));
    }
    return out;
  });

  route(app, {
    method: 'GET', url: '/projects/:id/repository/commits/:sha', auth: 'optional', params: showParams,
    schema: { summary: 'One commit', tags: ['commits'], response: { 200: CommitDetailSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    const sha = readableRevision(input.sha) ? await resolveCommit(ctx.repo.gitDir, input.sha) : null;
    const commit = sha ? await readCommit(ctx.repo.gitDir, sha) : null;
    if (!commit) throw notFound('Commit');
    return detail(ctx, commit, input.stats);
  });

  route(app, {
    method: 'POST', url: '/projects/:id/repository/commits', auth: 'required', params: createParams,
    schema: { summary: 'Commit file actions to a branch', tags: ['commits'], response: { 201: CommitDetailSchema } },
  }, async ({ request, reply, input, caller }) => {
    rejectNulBytes(input, ['commit_message', 'branch', 'start_branch', 'author_name', 'author_email']);
    rejectLongStrings(input, ['author_name', 'author_email'], 255);
    rejectUnusableGitIdentity(input, ['author_name', 'author_email']);
    if (Buffer.byteLength(input.commit_message) > MAX_MESSAGE_BYTES) throw invalidParams(['commit_message is too long']);
    // `actions=` (empty) is Grape's nil: no actions at all.
    if (!input.actions || input.actions.length === 0 || input.actions.length > MAX_ACTIONS) throw invalidParams(['actions is invalid']);
    const ctx = await loadRepository(request, input.id, 'branch');
    const rules = await authorizePushToBranch(request, ctx, caller.user, input.branch);
    // `force` rewrites the branch: on a protected branch only where force pushes are allowed (BranchCheck, from the web).
    if (input.force && isProtectedBranch(rules, input.branch) && !branchAllowsForcePush(rules, input.branch)
      && await refTarget(ctx.repo.gitDir, `refs/heads/${input.branch}`)) {
      throw new ApiError(400, { message: BRANCH_MESSAGES.forcePushProtectedBranch });
    }
    const user = caller.user;
    const actions: CommitAction[] = input.actions.map((a) => ({
      action: a.action, filePath: a.file_path, previousPath: a.previous_path,
      content: a.content === undefined ? undefined : decodeContent(a.content, a.encoding ?? 'text'),
      executeFilemode: a.execute_filemode, lastCommitId: a.last_commit_id,
    }));
    const committer = { name: user.name, email: user.commit_email || user.email };
    const result = await commitActions(db, ctx.repo, {
      branch: input.branch, startBranch: input.start_branch, startSha: input.start_sha, force: input.force, message: input.commit_message,
      author: { name: input.author_name || committer.name, email: input.author_email || committer.email }, committer, actions,
    });
    if (!result.ok) {
      if (result.reason === 'read_only') throw repositoryReadOnly();
      throw new ApiError(400, { message: result.message });
    }
    await afterRefUpdate(
      ciEnvFrom(db, config), ctx.project, [result.update], user.id,
      (err) => request.log.error({ err }, 'could not create the pipelines of a ref update'),
    );
    reply.code(201);
    return detail(ctx, (await readCommit(ctx.repo.gitDir, result.commitId))!, input.stats);
  });
};

export default commits;
