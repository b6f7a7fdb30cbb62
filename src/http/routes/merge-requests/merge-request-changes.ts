/**
 * What a merge request is made of (lib/api/merge_requests.rb and merge_request_diffs.rb of the
 * Service 15.2), read from the project's repository: its commits (merge base to source head,
 * newest first), its changes and diffs file by file (`git diff` of the merge base and the source
 * head, bounded by the Service's diff limits: past them `overflow`), its diff versions (one per
 * push to the source branch) with each version's commits and diffs, its participants and the
 * issues it closes on merge. Each route answers `404 Merge Request Not Found` for a request the
 * caller may not read.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { MergeRequestDiffRow } from '../../../db/tables/merge-requests.ts';
import { commitIdsBetween, diffFiles, type DiffResult } from '../../../domain/merge-requests/mr-git.ts';
import { EMPTY_TREE, rangeCommits, requestRange } from '../../../domain/merge-requests/request-range.ts';
import { closingIssueIids } from '../../../domain/merge-requests/merge.ts';
import {
  assigneesAndReviewersOf, commenterIds, diffVersionsOf, issuesByIids, pipelinesOfCommits,
} from '../../../domain/merge-requests/merge-requests.queries.ts';
import { canReadMergeRequest } from '../../../domain/merge-requests/merge-request.policy.ts';
import { canReadIssue } from '../../../domain/issues/issue.policy.ts';
import { findUsersByIds } from '../../../domain/users/users-batch.queries.ts';
import { projectActor } from '../../../domain/permissions/actors.ts';
import { CommitSchema, presentCommit } from '../../entities/commit.ts';
import { IssueSchema, presentIssues } from '../../entities/issue.ts';
import { MergeRequestSchema } from '../../entities/merge-request.ts';
import { presentUserBasic, UserBasicSchema } from '../../entities/user.ts';
import { loadProject, type ProjectContext } from '../../loaders/containers.ts';
import { contextProjectPath, issueSubject } from '../../loaders/issues.ts';
import { loadMergeRequest, type MergeRequestContext } from '../../loaders/merge-requests.ts';
import { forbidden, notAllowed, recordNotFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginateArray, paginationParams } from '../../lists/pagination.ts';
import { PipelineBasicSchema, PipelineSchema, presentPipeline, presentPipelineBasic } from '../../entities/pipeline.ts';
import { createMergeRequestPipeline } from '../../../domain/pipelines/merge-request-pipelines.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { findPipelineInProject } from '../../../domain/pipelines/pipelines.queries.ts';
import { projectWebUrl } from '../ci/pipelines.ts';
import { projectFullPath } from '../../../domain/pipelines/pipeline-context.ts';
import { findProjectById } from '../../../domain/projects/projects.queries.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { route } from '../../route.ts';
import { presentOne } from './merge-requests.ts';

const listParams = defineParams({ id: P.string(), merge_request_iid: P.integer(), ...paginationParams });
const oneParams = defineParams({ id: P.string(), merge_request_iid: P.integer() });
const changesParams = defineParams({
  id: P.string(), merge_request_iid: P.integer(),
  access_raw_diffs: P.optional(P.boolean({ description: 'ignored: diffs are always read from git' })),
  unidiff: P.optional(P.boolean({ description: 'ignored: diffs are unified already' })),
});
const versionParams = defineParams({
  id: P.string(), merge_request_iid: P.integer(), version_id: P.integer(), unidiff: P.optional(P.boolean()),
});

export const DiffSchema = Type.Object({
  old_path: Type.String(), new_path: Type.String(), a_mode: Type.String(), b_mode: Type.String(),
  new_file: Type.Boolean(), renamed_file: Type.Boolean(), deleted_file: Type.Boolean(), diff: Type.String(),
}, { title: 'Diff' });

const VersionSchema = Type.Object({
  id: Type.Integer(), head_commit_sha: Type.String(), base_commit_sha: Type.Union([Type.String(), Type.Null()]),
  start_commit_sha: Type.Union([Type.String(), Type.Null()]), created_at: Type.String(), merge_request_id: Type.Integer(),
  state: Type.String(), real_size: Type.Union([Type.String(), Type.Null()]),
}, { title: 'MergeRequestDiff' });
const VersionFullSchema = Type.Object({
  ...VersionSchema.properties, commits: Type.Array(CommitSchema), diffs: Type.Array(DiffSchema),
}, { title: 'MergeRequestDiffFull' });

const presentDiff = (d: DiffResult['files'][number]) => ({
  old_path: d.old_path, new_path: d.new_path, a_mode: d.a_mode, b_mode: d.b_mode, new_file: d.new_file,
  renamed_file: d.renamed_file, deleted_file: d.deleted_file, diff: d.diff,
});

const presentVersion = (v: MergeRequestDiffRow) => ({
  id: v.id, head_commit_sha: v.head_commit_sha, base_commit_sha: v.base_commit_sha, start_commit_sha: v.start_commit_sha,
  created_at: v.created_at, merge_request_id: v.merge_request_id, state: v.state, real_size: v.real_size,
});

const mergeRequestChanges: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const webUrl = (ctx: ProjectContext) => `${config.externalUrl}/${ctx.namespace.fullPath}/${ctx.project.path}`;

  /** The web URLs of the projects `ids` names (the request's own project from its context, others looked up). */
  async function projectUrls(ctx: ProjectContext, ids: number[]): Promise<Map<number, string>> {
    const urls = new Map([[ctx.project.id, webUrl(ctx)]]);
    for (const id of new Set(ids)) {
      if (urls.has(id)) continue;
      const project = await findProjectById(db, id);
      if (project) urls.set(id, `${config.externalUrl}/${await projectFullPath(ciEnvFrom(db, config), project)}`);
    }
    return urls;
  }

  async function load(request: FastifyRequest, input: { id: string; merge_request_iid: number }) {
    const ctx = await loadProject(request, input.id);
    return { ctx, ...(await loadMergeRequest(request, ctx, input.merge_request_iid)) };
  }

  const range = (m: MergeRequestContext) => requestRange(db, m.repo.gitDir, m.mr);
  const commitsOf = (m: MergeRequestContext, base: string | null, head: string) => rangeCommits(m.repo.gitDir, base, head);

  const emptyTree = EMPTY_TREE;

  route(app, {
    method: 'GET', url: '/projects/:id/merge_requests/:merge_request_iid/commits', auth: 'optional', params: listParams,
    schema: { summary: "A merge request's commits, newest first", tags: ['merge_requests'], response: { 200: Type.Array(CommitSchema) } },
  }, async ({ request, reply, input }) => {
    const m = await load(request, input);
    const r = await range(m);
    const commits = r ? await commitsOf(m, r.base, r.head) : [];
    return paginateArray(request, reply, commits).map((c) => presentCommit(c, webUrl(m.ctx)));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/merge_requests/:merge_request_iid/changes', auth: 'optional', params: changesParams,
    schema: {
      summary: 'A merge request with its changes file by file', tags: ['merge_requests'],
      response: { 200: Type.Object({ ...MergeRequestSchema.properties, changes: Type.Array(DiffSchema), overflow: Type.Boolean() }) },
    },
  }, async ({ request, input }) => {
    const m = await load(request, input);
    const r = await range(m);
    const diff = r ? await diffFiles(m.repo.gitDir, r.base ?? emptyTree, r.head) : { files: [], overflow: false, realSize: '0' };
    return { ...(await presentOne(request, m.ctx, m.mr)), changes: diff.files.map(presentDiff), overflow: diff.overflow };
  });

  route(app, {
    method: 'GET', url: '/projects/:id/merge_requests/:merge_request_iid/diffs', auth: 'optional', params: listParams,
    schema: { summary: "A merge request's diffs, a page of files", tags: ['merge_requests'], response: { 200: Type.Array(DiffSchema) } },
  }, async ({ request, reply, input }) => {
    const m = await load(request, input);
    const r = await range(m);
    const diff = r ? await diffFiles(m.repo.gitDir, r.base ?? emptyTree, r.head) : { files: [] };
    return paginateArray(request, reply, diff.files.map(presentDiff));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/merge_requests/:merge_request_iid/versions', auth: 'optional', params: listParams,
    schema: {
      summary: "A merge request's diff versions, newest first", tags: ['merge_requests'], response: { 200: Type.Array(VersionSchema) },
    },
  }, async ({ request, reply, input }) => {
    const m = await load(request, input);
    return paginateArray(request, reply, (await diffVersionsOf(db, m.mr.id)).map(presentVersion));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/merge_requests/:merge_request_iid/versions/:version_id', auth: 'optional', params: versionParams,
    schema: { summary: 'One diff version with its commits and diffs', tags: ['merge_requests'], response: { 200: VersionFullSchema } },
  }, async ({ request, input }) => {
    const m = await load(request, input);
    const version = (await diffVersionsOf(db, m.mr.id)).find((v) => v.id === input.version_id);
    if (!version) throw recordNotFound();
    const commits = await commitsOf(m, version.base_commit_sha, version.head_commit_sha);
    const diff = version.state === 'empty' ? { files: [] }
      : await diffFiles(m.repo.gitDir, version.base_commit_sha ?? emptyTree, version.head_commit_sha);
    return { ...presentVersion(version), commits: commits.map((c) => presentCommit(c, webUrl(m.ctx))), diffs: diff.files.map(presentDiff) };
  });

  route(app, {
    method: 'GET', url: '/projects/:id/merge_requests/:merge_request_iid/pipelines', auth: 'optional', params: listParams,
    schema: {
      summary: "A merge request's pipelines, newest first", tags: ['merge_requests'], response: { 200: Type.Array(PipelineBasicSchema) },
    },
  }, async ({ request, reply, input }) => {
    const m = await load(request, input);
    // read_pipeline on the project: pipelines are read as builds are.
    if (!canOnProject(m.ctx.actor, 'read_build', m.ctx.project)) throw forbidden();
    const r = await range(m);
    const shas = r && r.base !== r.head ? await commitIdsBetween(m.repo.gitDir, r.base, r.head) : [];
    if (m.mr.source_project_id === null) return paginateArray(request, reply, []);
    const rows = await paginate(db, request, reply, pipelinesOfCommits(db, m.mr.source_project_id, m.mr.source_branch, m.mr.id, shas));
    // A fork's request lists the fork's pipelines and those run in the target: each links to its own project.
    const urls = await projectUrls(m.ctx, rows.map((p) => p.project_id));
    return rows.map((p) => presentPipelineBasic(p, urls.get(p.project_id) ?? webUrl(m.ctx)));
  });

  route(app, {
    method: 'POST', url: '/projects/:id/merge_requests/:merge_request_iid/pipelines', auth: 'required', params: oneParams,
    schema: {
      summary: 'Create a merge request pipeline on the source head (jobs need only: [merge_requests] or a merge_request_event rule)',
      tags: ['merge_requests'], response: { 200: PipelineSchema },
    },
  }, async ({ request, input, caller }) => {
    const m = await load(request, input);
    // MergeRequests::CreatePipelineService: nothing to run for a request without commits (405);
    // Ci::CreatePipelineService's own refusals are the pipeline's base errors (400).
    const latest = (await diffVersionsOf(db, m.mr.id))[0];
    if (!latest || latest.state === 'empty') throw notAllowed();
    // The pipeline runs in the target or in a fork's source project (CreatePipelineService#pipeline_project),
    // and create_pipeline is asked of the project it runs in.
    const result = await createMergeRequestPipeline(ciEnvFrom(db, config), m.mr, caller.user.id, {
      persistConfigErrors: true, checkAbility: true,
    });
    if (!result.ok) {
      if ('reason' in result) throw notAllowed();
      throw validationFailed({ base: [result.error] });
    }
    const fresh = (await findPipelineInProject(db, result.pipeline.project_id, result.pipeline.id))!;
    // A fork's request may have run its pipeline in the fork: its web_url is the fork's.
    const urls = await projectUrls(m.ctx, [fresh.project_id]);
    // The Service answers 200 here (`status :ok` in API::MergeRequests), not POST's usual 201.
    return presentPipeline(fresh, urls.get(fresh.project_id) ?? projectWebUrl(config.externalUrl, m.ctx), caller.user, config.externalUrl);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/merge_requests/:merge_request_iid/participants', auth: 'optional', params: listParams,
    schema: { summary: 'Who takes part in a merge request', tags: ['merge_requests'], response: { 200: Type.Array(UserBasicSchema) } },
  }, async ({ request, reply, input }) => {
    const m = await load(request, input);
    const [{ assignees, reviewers }, commenters] = await Promise.all([assigneesAndReviewersOf(db, [m.mr.id]), commenterIds(db, m.mr.id)]);
    const ids = [...new Set([m.mr.author_id, ...(assignees.get(m.mr.id) ?? []), ...(reviewers.get(m.mr.id) ?? []), ...commenters])];
    const users = new Map((await findUsersByIds(db, ids)).map((u) => [u.id, u]));
    // Participable#visible_participants: those who may read the request.
    const visible = [];
    for (const id of ids) {
      const user = users.get(id);
      if (!user) continue;
      const actor = await projectActor(db, user, m.ctx.project.id, m.ctx.lineage);
      if (canReadMergeRequest(actor, m.ctx.project)) visible.push(user);
    }
    const userOpts = { externalUrl: config.externalUrl, canReadProfile: false };
    return paginateArray(request, reply, visible).map((u) => presentUserBasic(u, {}, userOpts));
  });

  route(app, {
    method: 'GET', url: '/projects/:id/merge_requests/:merge_request_iid/closes_issues', auth: 'optional', params: listParams,
    schema: { summary: 'The issues a merge request closes on merge', tags: ['merge_requests'], response: { 200: Type.Array(IssueSchema) } },
  }, async ({ request, reply, input }) => {
    const m = await load(request, input);
    const issues = await issuesByIids(db, m.ctx.project.id, closingIssueIids(m.mr.description));
    const readable = [];
    for (const issue of issues) if (canReadIssue(m.ctx.actor, m.ctx.project, await issueSubject(db, issue))) readable.push(issue);
    const rows = paginateArray(request, reply, readable);
    return presentIssues(db, rows, {
      externalUrl: config.externalUrl, projects: contextProjectPath(m.ctx), viewerId: request.caller?.user.id ?? null,
      from: { project: m.ctx.project.id },
    });
  });

};

export default mergeRequestChanges;
