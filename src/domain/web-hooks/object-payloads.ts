/**
 * Payloads of record events in the Service's shapes: Gitlab::HookData::IssueBuilder (issue
 * events), Gitlab::DataBuilder::Note (comments), Gitlab::HookData::MergeRequestBuilder and
 * MergeRequest#to_hook_data (merge request events), Gitlab::HookData::ReleaseBuilder (releases).
 * Times in the Service's job-queue format (payloads.ts hookTime).
 */
import type { Kysely } from 'kysely';
import type { StorageShard } from '../../config/schema.ts';
import { projectRepository } from '../repositories/project-repository.ts';
import { commitAttrs } from './push-hooks.ts';
import type { DB } from '../../db/types.ts';
import type { LabelRow } from '../../db/tables/labels.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { findProjectById } from '../projects/projects.queries.ts';
import { findSnippetById } from '../snippets/snippets.queries.ts';
import { assigneeIdsOf, findIssueById, labelsOfTargets } from '../issues/issues.queries.ts';
import { totalTimeSpent } from '../issues/time-tracking.queries.ts';
import { formatDuration } from '../issues/time-tracking.ts';
import { assigneesAndReviewersOf, findMergeRequestById } from '../merge-requests/merge-requests.queries.ts';
import type { ObjectHookEvent } from './object-hooks.ts';
import { findPipeline } from '../pipelines/pipelines.queries.ts';
import type { CommitData } from '../pipelines/git-source.ts';
import { environmentOf } from './pipeline-hooks.ts';
import { buildDeployment } from './deployment-payload.ts';
import { hookTime, projectHookAttrs, userHookAttrs, type HookUrls, type ProjectHookAttrs } from './payloads.ts';
import {
  headPipelineId, jobForHook, jobRetriesForHook, mergeRequestHeadSha, mergeRequestTimeSpent, noteForHook, releaseForHook,
  releaseLinksForHook, runnersByIds, type HookFlag,
} from './web-hooks.queries.ts';

export interface ObjectDataEnv extends HookUrls {
  db: Kysely<DB>;
  /** Where repositories live: a merge request's last commit is read from git. */
  storages: StorageShard[];
}

type Built = { flag: HookFlag; data: Record<string, unknown> } | null;

/** Label#hook_attrs. */
function labelAttrs(l: LabelRow) {
  return {
    id: l.id, title: l.title, color: l.color, project_id: l.project_id, created_at: hookTime(l.created_at),
    updated_at: hookTime(l.updated_at), template: false, description: l.description,
    type: l.project_id !== null ? 'ProjectLabel' : 'GroupLabel', group_id: l.group_id,
  };
}

function repositoryAttrs(p: ProjectHookAttrs) {
  return { name: p.name, url: p.url, description: p.description, homepage: p.homepage };
}

/** Changed times travel in the same format as the attributes. */
function hookChanges(changes: ObjectHookEvent['changes']): Record<string, { previous: unknown; current: unknown }> {
  const out: Record<string, { previous: unknown; current: unknown }> = {};
  for (const [key, c] of Object.entries(changes ?? {})) {
    const time = (v: unknown) => (typeof v === 'string' && key.endsWith('_at') ? hookTime(v) : v);
    out[key] = { previous: time(c.previous), current: time(c.current) };
  }
  return out;
}

async function users(env: ObjectDataEnv, ids: number[]) {
  const out = [];
  for (const id of ids) {
    const u = await userHookAttrs(env.db, env, id);
    if (u) out.push(u);
  }
  return out;
}

/** Issue#hook_attrs (IssueBuilder's safe attributes and the computed ones). */
async function issueAttrs(env: ObjectDataEnv, project: ProjectHookAttrs, issueId: number) {
  const issue = await findIssueById(env.db, issueId);
  if (!issue) return null;
  const labels = ((await labelsOfTargets(env.db, 'Issue', [issue.id])).get(issue.id) ?? []);
  const assigneeIds = (await assigneeIdsOf(env.db, [issue.id])).get(issue.id) ?? [];
  const spent = await totalTimeSpent(env.db, issue.id);
  return {
    issue, labels, assigneeIds,
    attrs: {
      author_id: issue.author_id, closed_at: hookTime(issue.closed_at), confidential: issue.confidential === 1,
      created_at: hookTime(issue.created_at), description: issue.description,
      discussion_locked: issue.discussion_locked === null ? null : issue.discussion_locked === 1,
      due_date: issue.due_date, id: issue.id, iid: issue.iid, last_edited_at: hookTime(issue.last_edited_at),
      last_edited_by_id: issue.last_edited_by_id, milestone_id: issue.milestone_id, moved_to_id: issue.moved_to_id,
      duplicated_to_id: issue.duplicated_to_id, project_id: issue.project_id, relative_position: issue.relative_position,
      state_id: issue.state === 'closed' ? 2 : 1, time_estimate: issue.time_estimate, title: issue.title,
      updated_at: hookTime(issue.updated_at), updated_by_id: issue.updated_by_id,
      type: issue.issue_type === 'issue' ? 'Issue' : issue.issue_type,
      url: `${project.web_url}/-/issues/${issue.iid}`, total_time_spent: spent, time_change: 0,
      human_total_time_spent: formatDuration(spent), human_time_change: null, human_time_estimate: formatDuration(issue.time_estimate),
      assignee_ids: assigneeIds, assignee_id: assigneeIds[0] ?? null, labels: labels.map(labelAttrs), state: issue.state,
      severity: 'unknown',
    },
  };
}

async function buildIssue(env: ObjectDataEnv, project: ProjectRow, event: ObjectHookEvent): Promise<Built> {
  const projectAttrs = await projectHookAttrs(env.db, env, project);
  const found = await issueAttrs(env, projectAttrs, event.id);
  if (!found) return null;
  const confidential = found.issue.confidential === 1;
  const assignees = await users(env, found.assigneeIds);
  return {
    flag: confidential ? 'confidential_issues_events' : 'issues_events',
    data: {
      object_kind: 'issue', event_type: confidential ? 'confidential_issue' : 'issue',
      user: await userHookAttrs(env.db, env, event.userId ?? null), project: projectAttrs,
      object_attributes: { ...found.attrs, action: event.action ?? 'update' },
      labels: found.labels.map(labelAttrs), changes: hookChanges(event.changes), repository: repositoryAttrs(projectAttrs),
      ...(assignees.length > 0 ? { assignees } : {}),
    },
  };
}

async function mergeRequestAttrs(env: ObjectDataEnv, project: ProjectHookAttrs, mrId: number) {
  const mr = await findMergeRequestById(env.db, mrId);
  if (!mr) return null;
  const labels = (await labelsOfTargets(env.db, 'MergeRequest', [mr.id])).get(mr.id) ?? [];
  const people = await assigneesAndReviewersOf(env.db, [mr.id]);
  const assigneeIds = people.assignees.get(mr.id) ?? [];
  const reviewerIds = people.reviewers.get(mr.id) ?? [];
  const source = mr.source_project_id !== null && mr.source_project_id !== mr.project_id
    ? await findProjectById(env.db, mr.source_project_id) : undefined;
  const sourceAttrs = source ? await projectHookAttrs(env.db, env, source) : project;
  const headSha = await mergeRequestHeadSha(env.db, mr.id);
  const sourceRow = source ?? await findProjectById(env.db, mr.project_id);
  const lastCommit = headSha && sourceRow
    ? (await commitAttrs(projectRepository(env.storages, sourceRow).gitDir, sourceAttrs.web_url, [headSha], false))[0] ?? null : null;
  const spent = await mergeRequestTimeSpent(env.db, mr.id);
  return {
    mr, labels, assigneeIds, reviewerIds,
    attrs: {
      assignee_id: assigneeIds[0] ?? null, author_id: mr.author_id, created_at: hookTime(mr.created_at),
      description: mr.description, head_pipeline_id: headSha ? await headPipelineId(env.db, mr, headSha) : null, id: mr.id, iid: mr.iid,
      last_edited_at: hookTime(mr.last_edited_at), last_edited_by_id: mr.last_edited_by_id,
      merge_commit_sha: mr.merge_commit_sha, merge_error: mr.merge_error,
      merge_params: mr.merge_params ? JSON.parse(mr.merge_params) as unknown : {},
      merge_status: mr.merge_status, merge_user_id: mr.merge_user_id,
      merge_when_pipeline_succeeds: mr.merge_when_pipeline_succeeds === 1,
      milestone_id: mr.milestone_id, source_branch: mr.source_branch, source_project_id: mr.source_project_id ?? mr.project_id,
      state_id: ({ opened: 1, closed: 2, merged: 3, locked: 4 } as Record<string, number>)[mr.state] ?? 1,
      target_branch: mr.target_branch, target_project_id: mr.project_id, time_estimate: mr.time_estimate, title: mr.title,
      updated_at: hookTime(mr.updated_at), updated_by_id: mr.updated_by_id, url: `${project.web_url}/-/merge_requests/${mr.iid}`,
      source: sourceAttrs, target: project, last_commit: lastCommit, work_in_progress: mr.draft === 1,
      total_time_spent: spent, time_change: 0, human_total_time_spent: formatDuration(spent), human_time_change: null,
      human_time_estimate: formatDuration(mr.time_estimate),
      assignee_ids: assigneeIds, reviewer_ids: reviewerIds, labels: labels.map(labelAttrs), state: mr.state,
      blocking_discussions_resolved: true,
    },
  };
}

async function buildMergeRequest(env: ObjectDataEnv, project: ProjectRow, event: ObjectHookEvent): Promise<Built> {
  const projectAttrs = await projectHookAttrs(env.db, env, project);
  const found = await mergeRequestAttrs(env, projectAttrs, event.id);
  if (!found) return null;
  const assignees = await users(env, found.assigneeIds);
  const reviewers = await users(env, found.reviewerIds);
  return {
    flag: 'merge_requests_events',
    data: {
      object_kind: 'merge_request', event_type: 'merge_request',
      user: await userHookAttrs(env.db, env, event.userId ?? null), project: projectAttrs,
      object_attributes: { ...found.attrs, action: event.action ?? 'update' },
      labels: found.labels.map(labelAttrs), changes: hookChanges(event.changes), repository: repositoryAttrs(projectAttrs),
      ...(assignees.length > 0 ? { assignees } : {}), ...(reviewers.length > 0 ? { reviewers } : {}),
    },
  };
}

/** Gitlab::DataBuilder::Note: the comment and the record it is on. */
async function buildNote(env: ObjectDataEnv, project: ProjectRow, event: ObjectHookEvent): Promise<Built> {
  const note = await noteForHook(env.db, event.id);
  if (!note) return null;
  const projectAttrs = await projectHookAttrs(env.db, env, project);
  const base = {
    object_kind: 'note', event_type: 'note', user: await userHookAttrs(env.db, env, event.userId ?? null),
    project_id: project.id, project: projectAttrs, repository: repositoryAttrs(projectAttrs),
  };
  let url = `${projectAttrs.web_url}/-/commit/${note.commit_id ?? ''}#note_${note.id}`;
  let target: Record<string, unknown> = {};
  let confidential = note.internal === 1;
  if (note.noteable_type === 'Issue' && note.noteable_id !== null) {
    const found = await issueAttrs(env, projectAttrs, note.noteable_id);
    if (!found) return null;
    confidential ||= found.issue.confidential === 1;
    url = `${found.attrs.url}#note_${note.id}`;
    target = { issue: found.attrs };
  } else if (note.noteable_type === 'MergeRequest' && note.noteable_id !== null) {
    const found = await mergeRequestAttrs(env, projectAttrs, note.noteable_id);
    if (!found) return null;
    url = `${found.attrs.url}#note_${note.id}`;
    target = { merge_request: found.attrs };
  } else if (note.noteable_type === 'Commit') {
    // Commit#hook_attrs: the commit read from git (its message titles the chat integrations' message).
    const [commit] = note.commit_id
      ? await commitAttrs(projectRepository(env.storages, project).gitDir, projectAttrs.web_url, [note.commit_id], false) : [];
    target = { commit: commit ?? { id: note.commit_id, url: `${projectAttrs.web_url}/-/commit/${note.commit_id}` } };
  } else if (note.noteable_type === 'Snippet' && note.noteable_id !== null) {
    // A project snippet's comment (Snippet#hook_attrs); a personal snippet's has no project and no hooks.
    const snippet = await findSnippetById(env.db, note.noteable_id);
    if (!snippet || snippet.project_id !== project.id) return null;
    const snippetUrl = `${projectAttrs.web_url}/-/snippets/${snippet.id}`;
    url = `${snippetUrl}#note_${note.id}`;
    target = {
      snippet: {
        id: snippet.id, title: snippet.title, content: snippet.content, author_id: snippet.author_id, project_id: snippet.project_id,
        created_at: hookTime(snippet.created_at), updated_at: hookTime(snippet.updated_at), file_name: snippet.file_name,
        type: 'ProjectSnippet', visibility_level: snippet.visibility_level, description: snippet.description, url: snippetUrl,
      },
    };
  } else {
    return null;
  }
  return {
    flag: confidential ? 'confidential_note_events' : 'note_events',
    data: {
      ...base, event_type: confidential ? 'confidential_note' : 'note',
      object_attributes: {
        attachment: null, author_id: note.author_id, change_position: null, commit_id: note.commit_id,
        created_at: hookTime(note.created_at), discussion_id: note.discussion_id, id: note.id, line_code: null,
        note: note.note, noteable_id: note.noteable_id, noteable_type: note.noteable_type, original_position: null,
        position: note.position ? JSON.parse(note.position) as unknown : null, project_id: note.project_id,
        resolved_at: hookTime(note.resolved_at), resolved_by_id: note.resolved_by_id, resolved_by_push: null, st_diff: null,
        system: note.system === 1, type: note.type, updated_at: hookTime(note.updated_at), updated_by_id: note.updated_by_id,
        description: note.note, url,
      },
      ...target,
    },
  };
}

/** Gitlab::HookData::ReleaseBuilder. */
async function buildRelease(env: ObjectDataEnv, project: ProjectRow, event: ObjectHookEvent): Promise<Built> {
  const release = await releaseForHook(env.db, event.id);
  if (!release) return null;
  const projectAttrs = await projectHookAttrs(env.db, env, project);
  const links = await releaseLinksForHook(env.db, release.id);
  const archive = (format: string) => ({
    format, url: `${projectAttrs.web_url}/-/archive/${release.tag}/${project.path}-${release.tag}.${format}`,
  });
  return {
    flag: 'releases_events',
    data: {
      id: release.id, created_at: hookTime(release.created_at), description: release.description, name: release.name,
      released_at: hookTime(release.released_at), tag: release.tag, object_kind: 'release', project: projectAttrs,
      url: `${projectAttrs.web_url}/-/releases/${encodeURIComponent(release.tag)}`, action: event.action ?? 'create',
      assets: {
        count: links.length + 4,
        links: links.map((l) => ({ id: l.id, external: true, link_type: l.link_type, name: l.name, url: l.url })),
        sources: ['zip', 'tar.gz', 'tar.bz2', 'tar'].map(archive),
      },
      commit: release.sha ? { id: release.sha, url: `${projectAttrs.web_url}/-/commit/${release.sha}` } : null,
    },
  };
}

function seconds(from: string | null, to: string | null): number | null {
  return from && to ? (new Date(to).getTime() - new Date(from).getTime()) / 1000 : null;
}

/** Gitlab::DataBuilder::Build: a job's transition, with its commit and runner. */
async function buildJob(env: ObjectDataEnv, project: ProjectRow, event: ObjectHookEvent): Promise<Built> {
  const job = await jobForHook(env.db, event.id);
  if (!job) return null;
  const pipeline = await findPipeline(env.db, job.pipeline_id);
  if (!pipeline) return null;
  const projectAttrs = await projectHookAttrs(env.db, env, project);
  const runner = job.runner_id === null ? undefined : (await runnersByIds(env.db, [job.runner_id])).get(job.runner_id);
  const commit = JSON.parse(pipeline.commit_data) as Partial<CommitData>;
  const status = event.status ?? job.status;
  const namespace = projectAttrs.path_with_namespace.split('/').slice(0, -1).join(' / ');
  return {
    flag: 'job_events',
    data: {
      object_kind: 'build', ref: job.ref, tag: job.tag === 1, before_sha: pipeline.before_sha, sha: pipeline.sha,
      retries_count: await jobRetriesForHook(env.db, job.pipeline_id, job.name),
      build_id: job.id, build_name: job.name, build_stage: job.stage, build_status: status,
      build_created_at: hookTime(job.created_at), build_started_at: hookTime(job.started_at),
      build_finished_at: hookTime(job.finished_at), build_duration: seconds(job.started_at, job.finished_at),
      build_queued_duration: seconds(job.queued_at, job.started_at), build_allow_failure: job.allow_failure === 1,
      build_failure_reason: job.failure_reason, pipeline_id: job.pipeline_id,
      runner: runner ? {
        id: runner.id, description: runner.description, runner_type: runner.runner_type, active: runner.active === 1,
        is_shared: runner.runner_type === 'instance_type', tags: runner.tag_list.split(/[\s,]+/).filter(Boolean),
      } : null,
      project_id: project.id, project_name: namespace ? `${namespace} / ${project.name}` : project.name,
      user: await userHookAttrs(env.db, env, job.user_id),
      commit: {
        id: pipeline.id, sha: pipeline.sha, message: commit.message ?? '', author_name: commit.author_name ?? '',
        author_email: commit.author_email ?? '', author_url: `mailto:${commit.author_email ?? ''}`, status: pipeline.status,
        duration: pipeline.duration, started_at: hookTime(pipeline.started_at), finished_at: hookTime(pipeline.finished_at),
      },
      repository: {
        name: projectAttrs.name, url: projectAttrs.url, description: projectAttrs.description, homepage: projectAttrs.homepage,
        git_http_url: projectAttrs.git_http_url, git_ssh_url: projectAttrs.git_ssh_url, visibility_level: projectAttrs.visibility_level,
      },
      environment: environmentOf(job),
    },
  };
}

export async function buildObjectData(env: ObjectDataEnv, event: ObjectHookEvent): Promise<Built> {
  const project = await findProjectById(env.db, event.projectId);
  if (!project) return null;
  switch (event.kind) {
    case 'issue': return buildIssue(env, project, event);
    case 'merge_request': return buildMergeRequest(env, project, event);
    case 'note': return buildNote(env, project, event);
    case 'release': return buildRelease(env, project, event);
    case 'job': return buildJob(env, project, event);
    case 'deployment': return buildDeployment(env, project, event);
  }
}
