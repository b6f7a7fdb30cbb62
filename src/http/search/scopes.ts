/**
 * The search API's scopes (lib/api/search.rb, API::Helpers::SearchHelpers, SearchService and the
 * Gitlab::*SearchResults classes, basic search): one entry per scope, saying at which levels it is
 * offered, the entity of one result, and how a page of results is found. The routes
 * (routes/activity/search.ts) take each level's accepted `scope` values from this table, so a scope
 * added here is offered, documented and served at once.
 *
 * To add a scope: one entry `name: { levels, item, run }` in SEARCH_SCOPES; `run` finds one page
 * for a SearchContext (paging through `paginate` for SQL, `pageOf` for results found in memory,
 * both of which set the offset headers) and presents it.
 */
import { wikiBranch, wikiRepository } from '../../domain/wikis/wiki-repository.ts';
import { repositoryExists } from '../../domain/repositories/repositories.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type, type TSchema } from 'typebox';
import type { DB, UserRow } from '../../db/types.ts';
import { findProjects, reachOf } from '../../domain/projects/project.finder.ts';
import {
  groupHierarchyIds, groupMembersMatching, milestonesMatching, notesMatching, projectMembersMatching, snippetTitlesMatching, usersMatching,
} from '../../domain/search/search.queries.ts';
import { snippetAuthors } from '../../domain/snippets/snippets.queries.ts';
import { MAX_COMMITS, parseBlobQuery, searchBlobs, searchCommits, withNameMatchData } from '../../domain/search/repository-search.ts';
import { resolveCommit } from '../../domain/repositories/git-read.ts';
import { readableRevision } from '../../domain/repositories/ref-names.ts';
import { projectRepository } from '../../domain/repositories/project-repository.ts';
import { projectPipelinesQuery } from '../../domain/pipelines/pipelines.queries.ts';
import { canOnProject } from '../../domain/permissions/project.policy.ts';
import type { GroupContext, ProjectContext } from '../loaders/containers.ts';
import { presentProjectList } from '../loaders/project-list.ts';
import { paginate, pageWindow, setOffsetHeaders } from '../lists/pagination.ts';
import { BasicProjectDetailsSchema } from '../entities/project.ts';
import { presentSnippet, SnippetSchema } from '../entities/snippet.ts';
import { presentUserBasic, USER_BASIC_COLUMNS, UserBasicSchema } from '../entities/user.ts';
import { CommitDetailSchema, presentCommitDetail } from '../entities/commit.ts';
import { presentPipelineBasic } from '../entities/pipeline.ts';
import { IssueBasicSchema, milestoneOwnerUrl, milestonePathsOf } from '../entities/issue.ts';
import { MilestoneSchema, presentMilestone } from '../entities/milestone.ts';
import { NoteSchema, presentNotes } from '../entities/note.ts';
import { issuesList, presentIssuesFor } from '../loaders/issue-presenting.ts';
import { presentMergeRequestsFor } from '../loaders/merge-request-presenting.ts';
import { MergeRequestBasicSchema } from '../entities/merge-request.ts';
import {
  filterMergeRequests, orderMergeRequests, visibleMergeRequests, type MergeRequestContainer,
} from '../../domain/merge-requests/merge-requests.finder.ts';
import { canReadMergeRequest } from '../../domain/merge-requests/merge-request.policy.ts';
import { projectContainer } from '../routes/issues/issue-list-params.ts';
import { filterIssues, issuesShape, visibleIssues, type IssueContainer } from '../../domain/issues/issues.finder.ts';
import { orderIssues } from '../../domain/issues/issue-orders.ts';
import { issueIidsOf } from '../../domain/issues/issues.queries.ts';
import { canReadInternalNotes } from '../../domain/notes/note.policy.ts';
import type { NoteableType } from '../../domain/notes/noteable.ts';
import { ACCESS_LEVELS, VISIBILITY_LEVELS } from '../../domain/permissions/access.ts';

/**
 * A blob found by the basic search (API::Entities::Blob over Gitlab::Search::FoundBlob): the
 * matching lines with those around them, from `startline`; no blob id; the ref searched.
 */
export const BlobSchema = Type.Object({
  basename: Type.String(), data: Type.String(), path: Type.String(), filename: Type.String(),
  id: Type.Null(), ref: Type.String(), startline: Type.Integer(), project_id: Type.Integer(),
}, { title: 'Blob' });

export type SearchLevel = 'global' | 'group' | 'project';

/** How issues and merge requests are ordered (Gitlab::Search::SortOptions); null: the scope's own order. */
export interface SearchSort { column: 'created_at' | 'updated_at'; direction: 'asc' | 'desc' }

export interface SearchContext {
  request: FastifyRequest;
  reply: FastifyReply;
  db: Kysely<DB>;
  externalUrl: string;
  /** KILN_SSH_PORT, for ssh_url_to_repo. */
  sshPort: number;
  viewer: UserRow;
  level: SearchLevel;
  /** The searched text, as given. */
  search: string;
  /** `state` (all, opened, closed, merged) for issues and merge requests; undefined: all. */
  state: string | undefined;
  /** `confidential` for issues; undefined: both. */
  confidential: boolean | undefined;
  sort: SearchSort | null;
  /** The group of a group search. */
  group: GroupContext | null;
  /** The project of a project search. */
  project: ProjectContext | null;
  /** `ref` of a project search: the branch, tag or commit searched (the default branch when absent). */
  ref: string | undefined;
}

export interface SearchScope {
  levels: readonly SearchLevel[];
  /** The entity of one result. */
  item: TSchema;
  /** One page of results, presented, with the offset pagination headers set. */
  run(ctx: SearchContext): Promise<unknown[]>;
}

/**
 * Scopes the Service offers at the instance and group levels only with Elasticsearch (EE's
 * API::Search ELASTICSEARCH_SCOPES): accepted there, then refused with 400
 * `Scope not supported without Elasticsearch!`. At the project level they are searched directly.
 */
export const ELASTICSEARCH_SCOPES = ['wiki_blobs', 'blobs', 'commits', 'notes'] as const;

/** A page of results already found in memory, with the headers a SQL page gets. */
export function pageOf<T>(ctx: SearchContext, all: T[]): T[] {
  const { page, perPage, offset } = pageWindow(ctx.request);
  setOffsetHeaders(ctx.request, ctx.reply, { page, perPage, hasNext: all.length > offset + perPage, total: all.length });
  return all.slice(offset, offset + perPage);
}

function emptyPage(ctx: SearchContext): [] {
  return pageOf(ctx, []) as [];
}

function presentUsers(ctx: SearchContext, rows: UserRow[]) {
  return rows.map((u) => presentUserBasic(u, {}, { externalUrl: ctx.externalUrl, canReadProfile: true }));
}

/** The project of a project search, its repository, and the commit its `ref` names (null: nothing to search). */
async function searchedCommit(ctx: SearchContext) {
  const p = ctx.project!;
  // Repository scopes answer nothing to a viewer who may not read the code (ProjectSearchResults
  // returns no blobs or commits without download_code), rather than refusing.
  if (!canOnProject(p.actor, 'download_code', p.project)) return null;
  const { config } = ctx.request.server.kiln;
  const repo = projectRepository(config.storages, p.project);
  const rev = ctx.ref || p.project.default_branch || 'HEAD';
  const commit = readableRevision(rev) ? await resolveCommit(repo.gitDir, rev) : null;
  if (!commit) return null;
  return { repo, commit, rev, webUrl: `${ctx.externalUrl}/${p.namespace.fullPath}/${p.project.path}` };
}

export const SEARCH_SCOPES = {
  projects: {
    levels: ['global', 'group'],
    item: BasicProjectDetailsSchema,
    async run(ctx) {
      // The projects GET /projects?search= finds (name, path or description), in a group search
      // those of the group and its sub-groups.
      const namespaceIds = ctx.group ? await groupHierarchyIds(ctx.db, ctx.group.group.id) : undefined;
      const qb = await findProjects(ctx.db, ctx.viewer, { search: ctx.search, ...(namespaceIds ? { namespaceIds } : {}) });
      const rows = await paginate(ctx.db, ctx.request, ctx.reply, qb.orderBy('projects.id', 'desc'));
      return presentProjectList(ctx.db, rows, { externalUrl: ctx.externalUrl, sshPort: ctx.sshPort, viewer: ctx.viewer, entity: 'basic' });
    },
  },
  snippet_titles: {
    levels: ['global'],
    item: SnippetSchema,
    async run(ctx) {
      const rows = await paginate(ctx.db, ctx.request, ctx.reply, snippetTitlesMatching(ctx.db, ctx.viewer, ctx.search));
      const authors = await snippetAuthors(ctx.db, rows);
      return rows.map((s) => presentSnippet(s, authors.get(s.author_id)!, ctx.externalUrl));
    },
  },
  users: {
    levels: ['global', 'group', 'project'],
    item: UserBasicSchema,
    async run(ctx) {
      const qb = ctx.project
        ? projectMembersMatching(ctx.db, ctx.viewer, ctx.search, ctx.project.project.id, ctx.project.lineage)
        : ctx.group
          ? await groupMembersMatching(ctx.db, ctx.viewer, ctx.search, ctx.group.group.id, ctx.group.lineage)
          : usersMatching(ctx.db, ctx.viewer, ctx.search);
      const rows = await paginate(ctx.db, ctx.request, ctx.reply, qb.clearSelect().select([...USER_BASIC_COLUMNS]));
      return presentUsers(ctx, rows as UserRow[]);
    },
  },
  issues: {
    levels: ['global', 'group', 'project'],
    item: IssueBasicSchema,
    async run(ctx) {
      // Issues the viewer may see (confidential ones as in the issue lists) whose title or description
      // holds the text (Gitlab::SearchResults#issues over IssuesFinder), newest first unless sorted.
      const container: IssueContainer = ctx.project ? projectContainer(ctx.project)
        : ctx.group ? { namespaceIds: await groupHierarchyIds(ctx.db, ctx.group.group.id) } : { instance: true };
      const state = ctx.state === 'opened' || ctx.state === 'closed' ? ctx.state : undefined;
      const shape = filterIssues(await issuesShape(ctx.db, ctx.viewer, container, true), {
        search: ctx.search, ...(state ? { state } : {}), ...(ctx.confidential !== undefined ? { confidential: ctx.confidential } : {}),
      }, ctx.viewer);
      const rows = await issuesList.paginate(ctx.db, ctx.request, ctx.reply,
        orderIssues(shape, ctx.sort?.column ?? 'created_at', ctx.sort?.direction ?? 'desc'));
      const from = ctx.project ? { project: ctx.project.project.id } : ctx.group ? { group: ctx.group.group.id } : null;
      return presentIssuesFor(ctx.request, rows, from);
    },
  },
  milestones: {
    levels: ['global', 'group', 'project'],
    item: MilestoneSchema,
    async run(ctx) {
      // Milestones of the projects the viewer may read there, and of the searched group, or at the
      // instance level of the groups the viewer belongs to.
      let projectIds;
      let groupIds: number[];
      if (ctx.project) {
        projectIds = ctx.db.selectFrom('projects').select('projects.id').where('projects.id', '=', ctx.project.project.id);
        groupIds = [];
      } else {
        const namespaceIds = ctx.group ? await groupHierarchyIds(ctx.db, ctx.group.group.id) : undefined;
        projectIds = (await findProjects(ctx.db, ctx.viewer, namespaceIds ? { namespaceIds } : {})).clearSelect().select('projects.id');
        groupIds = ctx.group ? [ctx.group.group.id] : [...(await reachOf(ctx.db, ctx.viewer)).groups.keys()];
      }
      const everything = Boolean(ctx.viewer.admin) && !ctx.project && !ctx.group;
      const rows = await paginate(ctx.db, ctx.request, ctx.reply,
        milestonesMatching(ctx.db, ctx.search, everything ? 'all' : { projectIds, groupIds }));
      const paths = await milestonePathsOf(ctx.db, rows);
      return rows.map((m) => presentMilestone(m, milestoneOwnerUrl(m, ctx.externalUrl, paths)));
    },
  },
  notes: {
    levels: ['project'],
    item: NoteSchema,
    async run(ctx) {
      const p = ctx.project!;
      const viewer = ctx.viewer;
      const readableIssueIds = (await visibleIssues(ctx.db, viewer, projectContainer(p), false)).clearSelect().select('issues.id');
      const member = Boolean(viewer.admin) || p.actor.accessLevel >= ACCESS_LEVELS.guest;
      const snippetMinVisibility = !canOnProject(p.actor, 'read_snippet', p.project) ? null
        : member ? VISIBILITY_LEVELS.private : viewer.external ? VISIBILITY_LEVELS.public : VISIBILITY_LEVELS.internal;
      const rows = await paginate(ctx.db, ctx.request, ctx.reply, notesMatching(ctx.db, viewer, ctx.search, {
        projectId: p.project.id, readableIssueIds, canReadCode: canOnProject(p.actor, 'download_code', p.project),
        canReadInternal: canReadInternalNotes(p.actor), snippetMinVisibility,
      }));
      // Each note as its noteable's notes present it (noteable_iid for issues).
      const issueIds = rows.flatMap((n) => (n.noteable_type === 'Issue' && n.noteable_id !== null ? [n.noteable_id] : []));
      const issueIids = await issueIidsOf(ctx.db, issueIds);
      const presented = await Promise.all(rows.map((n) => presentNotes(ctx.db, [n], {
        type: n.noteable_type as NoteableType, id: n.noteable_id, commitId: n.commit_id, projectId: p.project.id,
        iid: n.noteable_type === 'Issue' && n.noteable_id !== null ? issueIids.get(n.noteable_id) ?? null : null,
      }, ctx.externalUrl)));
      return presented.flat();
    },
  },
  merge_requests: {
    levels: ['global', 'group', 'project'],
    item: MergeRequestBasicSchema,
    async run(ctx) {
      // Merge requests the viewer may read whose title or description holds the text
      // (Gitlab::SearchResults#merge_requests over MergeRequestsFinder), newest first unless sorted.
      const container: MergeRequestContainer = ctx.project
        ? { project: { id: ctx.project.project.id, canRead: canReadMergeRequest(ctx.project.actor, ctx.project.project) } }
        : ctx.group ? { namespaceIds: await groupHierarchyIds(ctx.db, ctx.group.group.id) } : { instance: true };
      const state = ctx.state === 'opened' || ctx.state === 'closed' || ctx.state === 'merged' ? ctx.state : undefined;
      const qb = filterMergeRequests(await visibleMergeRequests(ctx.db, ctx.viewer, container, true), {
        search: ctx.search, ...(state ? { state } : {}),
      }, ctx.viewer);
      const rows = await paginate(ctx.db, ctx.request, ctx.reply,
        orderMergeRequests(qb, ctx.sort?.column ?? 'created_at', ctx.sort?.direction ?? 'desc'));
      const from = ctx.project ? { project: ctx.project.project.id } : ctx.group ? { group: ctx.group.group.id } : null;
      return presentMergeRequestsFor(ctx.request, rows, from);
    },
  },
  wiki_blobs: {
    levels: ['project'],
    // The files of the project's wiki repository on its default branch (ProjectSearchResults
    // #wiki_blobs: nothing for a viewer without read_wiki, nor for a wiki never written).
    item: BlobSchema,
    async run(ctx) {
      const p = ctx.project!;
      if (!canOnProject(p.actor, 'read_wiki', p.project)) return emptyPage(ctx);
      const { config } = ctx.request.server.kiln;
      const { gitDir } = wikiRepository(config.storages, p.project);
      if (!(await repositoryExists(gitDir))) return emptyPage(ctx);
      const branch = await wikiBranch(gitDir);
      const commit = await resolveCommit(gitDir, `refs/heads/${branch}`);
      if (!commit) return emptyPage(ctx);
      const blobs = await searchBlobs(gitDir, commit, parseBlobQuery(ctx.search));
      const page = await withNameMatchData(gitDir, pageOf(ctx, blobs));
      return page.map((b) => ({
        basename: b.basename, data: b.data, path: b.path, filename: b.path, id: null, ref: branch, startline: b.startline,
        project_id: p.project.id,
      }));
    },
  },
  commits: {
    levels: ['project'],
    item: CommitDetailSchema,
    async run(ctx) {
      const found = await searchedCommit(ctx);
      if (!found) return emptyPage(ctx);
      const { page, perPage, offset } = pageWindow(ctx.request);
      const { commits, total } = await searchCommits(found.repo.gitDir, found.commit, ctx.search, offset, perPage);
      setOffsetHeaders(ctx.request, ctx.reply, { page, perPage, hasNext: total > offset + perPage, total: Math.min(total, MAX_COMMITS) });
      const projectId = ctx.project!.project.id;
      return Promise.all(commits.map(async (c) => {
        const pipeline = await projectPipelinesQuery(ctx.db, projectId, { sha: c.id, orderBy: 'id', sort: 'desc' })
          .limit(1).executeTakeFirst();
        return presentCommitDetail(c, found.webUrl, projectId, undefined, pipeline ? presentPipelineBasic(pipeline, found.webUrl) : null);
      }));
    },
  },
  blobs: {
    levels: ['project'],
    item: BlobSchema,
    async run(ctx) {
      const found = await searchedCommit(ctx);
      if (!found) return emptyPage(ctx);
      const blobs = await searchBlobs(found.repo.gitDir, found.commit, parseBlobQuery(ctx.search));
      const projectId = ctx.project!.project.id;
      const page = await withNameMatchData(found.repo.gitDir, pageOf(ctx, blobs));
      // The basic search's FoundBlob has no blob id; its ref is the ref searched.
      return page.map((b) => ({
        basename: b.basename, data: b.data, path: b.path, filename: b.path, id: null, ref: found.rev, startline: b.startline,
        project_id: projectId,
      }));
    },
  },
} satisfies Record<string, SearchScope>;

export type SearchScopeName = keyof typeof SEARCH_SCOPES;

/** The `scope` values a level accepts: its scopes, and at the instance and group levels the Elasticsearch-only ones. */
export function scopeValues(level: SearchLevel): string[] {
  const own = Object.entries(SEARCH_SCOPES as Record<string, SearchScope>).filter(([, s]) => s.levels.includes(level)).map(([n]) => n);
  return level === 'project' ? own : [...new Set([...own, ...ELASTICSEARCH_SCOPES])];
}

/** The scope a level serves under `name`, or null for an Elasticsearch-only one there. */
export function scopeAt(level: SearchLevel, name: string): SearchScope | null {
  const scope = (SEARCH_SCOPES as Record<string, SearchScope>)[name];
  return scope && scope.levels.includes(level) ? scope : null;
}
