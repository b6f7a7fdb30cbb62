/**
 * Finding the noteable a notes, discussions or award emoji route names — an issue by iid, a
 * project snippet by id, a commit by sha or ref — as the viewer may see it, and what the viewer
 * may do with its notes (lib/api/helpers/notes_helpers.rb find_noteable: a noteable the viewer
 * may not read, or whose notes they may not read, answers the same 404 as a missing one:
 * `404 Issue Not Found`, `404 Snippet Not Found`, `404 Commit Not Found`).
 */
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { StorageShard } from '../../config/schema.ts';
import type { MergeRequestRow } from '../../db/tables/merge-requests.ts';
import { isStorableId } from '../../db/constraints.ts';
import { canCommentOnIssue, canReadIssue } from '../../domain/issues/issue.policy.ts';
import { canReadProjectSnippet, type NoteableRef } from '../../domain/notes/noteable.ts';
import { canReadInternalNotes } from '../../domain/notes/note.policy.ts';
import type { NotesScope } from '../../domain/notes/notes.queries.ts';
import { projectActor } from '../../domain/permissions/actors.ts';
import type { Actor } from '../../domain/permissions/access.ts';
import { canOnProject } from '../../domain/permissions/project.policy.ts';
import { findSnippetById } from '../../domain/snippets/snippets.queries.ts';
import type { SnippetRow } from '../../db/tables/snippets.ts';
import { readCommit, resolveCommit } from '../../domain/repositories/git-read.ts';
import { readableRevision } from '../../domain/repositories/ref-names.ts';
import { projectRepository } from '../../domain/repositories/project-repository.ts';
import { ApiError, badRequest, notFound } from '../errors.ts';
import { loadProject, type ProjectContext } from './containers.ts';
import { loadIssue } from './issues.ts';
import { loadMergeRequest } from './merge-requests.ts';
import { diffHasLine } from '../../domain/merge-requests/mr-git.ts';
import {
  canCommentOnMergeRequest, canReadMergeRequest, type MergeRequestSubject,
} from '../../domain/merge-requests/merge-request.policy.ts';

export interface DiffNotePosition {
  base_sha: string; start_sha: string; head_sha: string; position_type: 'text';
  old_path?: string; new_path?: string; old_line?: number; new_line?: number;
}

export interface NoteableContext {
  ctx: ProjectContext;
  noteable: NoteableRef;
  /** The noteable's own 404 (`Issue`, `Snippet`, `Commit`). */
  resource: string;
  /** create_note on the noteable (a locked issue takes Reporters and up only). */
  canComment: boolean;
  /** Which notes the viewer reads (internal ones from Reporters up). */
  scope: NotesScope;
  /** Whether the caller may resolve its threads (merge requests only: resolve_note, Developers and the request's author). */
  canResolve?: boolean;
  /**
   * A merge request's diff note position checked against its diff (base and head must be commits
   * of the request, the line one of the diff's): the position to store, or a 400 as the Service's
   * DiffNote validation answers.
   */
  diffNote?: (p: DiffNotePosition) => Promise<Record<string, unknown>>;
  /** Whether another user may read the noteable (and its internal notes when `internal`): who a mention reaches. */
  canUserRead: (user: UserRow, internal: boolean) => Promise<boolean>;
}

function readsNotes(actor: Actor, ctx: ProjectContext): boolean {
  return canOnProject(actor, 'read_note', ctx.project);
}

/** Another user's standing on the context's project. */
function actorOf(request: FastifyRequest, ctx: ProjectContext, user: UserRow): Promise<Actor> {
  return projectActor(request.server.kiln.db, user, ctx.project.id, ctx.lineage);
}

export async function loadIssueNoteable(request: FastifyRequest, projectId: string, iid: number): Promise<NoteableContext> {
  const ctx = await loadProject(request, projectId);
  const { issue, subject } = await loadIssue(request, ctx, iid);
  if (!readsNotes(ctx.actor, ctx)) throw notFound('Issue');
  return {
    ctx, resource: 'Issue',
    noteable: { type: 'Issue', id: issue.id, commitId: null, projectId: ctx.project.id, iid: issue.iid },
    canComment: canCommentOnIssue(ctx.actor, ctx.project, subject),
    scope: { includeInternal: canReadInternalNotes(ctx.actor) },
    canUserRead: async (user, internal) => {
      const actor = await actorOf(request, ctx, user);
      return canReadIssue(actor, ctx.project, subject) && readsNotes(actor, ctx) && (!internal || canReadInternalNotes(actor));
    },
  };
}

/** A merge request by iid: read as the request is (read_merge_request), commented on unless locked to non-members. */
export async function loadMergeRequestNoteable(request: FastifyRequest, projectId: string, iid: number): Promise<NoteableContext> {
  const ctx = await loadProject(request, projectId);
  const { mr, subject } = await loadMergeRequest(request, ctx, iid);
  const nc = mergeRequestNoteable(request.server.kiln.db, request.server.kiln.config.storages, ctx, mr, subject);
  if (!nc) throw notFound('Merge Request');
  return nc;
}

/**
 * What the viewer of `ctx` may do with a readable request's notes, or null when they may not read
 * its notes: the API's notes and discussions routes and the web's request page decide alike.
 */
export function mergeRequestNoteable(
  db: Kysely<DB>, storages: StorageShard[], ctx: ProjectContext, mr: MergeRequestRow, subject: MergeRequestSubject,
): NoteableContext | null {
  if (!readsNotes(ctx.actor, ctx)) return null;
  return {
    ctx, resource: 'Merge Request',
    noteable: { type: 'MergeRequest', id: mr.id, commitId: null, projectId: ctx.project.id, iid: mr.iid },
    canComment: canCommentOnMergeRequest(ctx.actor, ctx.project, subject),
    canResolve: canOnProject(ctx.actor, 'push_code', ctx.project) || ctx.actor.user?.id === mr.author_id,
    diffNote: async (p) => {
      const gitDir = projectRepository(storages, ctx.project).gitDir;
      const oldPath = p.old_path ?? p.new_path;
      const newPath = p.new_path ?? p.old_path;
      const shaOk = [p.base_sha, p.start_sha, p.head_sha].every((s) => /^[0-9a-f]{40}$/.test(s));
      const commitsOk = shaOk && (await Promise.all([p.base_sha, p.head_sha].map((s) => resolveCommit(gitDir, s)))).every(Boolean);
      if (!oldPath || !newPath || !commitsOk || !await diffHasLine(gitDir, p.base_sha, p.head_sha, {
        oldPath, newPath, oldLine: p.old_line ?? null, newLine: p.new_line ?? null,
      })) {
        throw noteRefusal({ line_code: ["can't be blank", 'must be a valid line code'] });
      }
      return {
        base_sha: p.base_sha, start_sha: p.start_sha, head_sha: p.head_sha, old_path: oldPath, new_path: newPath,
        position_type: p.position_type, old_line: p.old_line ?? null, new_line: p.new_line ?? null, line_range: null,
      };
    },
    scope: { includeInternal: canReadInternalNotes(ctx.actor) },
    canUserRead: async (user, internal) => {
      const actor = await projectActor(db, user, ctx.project.id, ctx.lineage);
      return canReadMergeRequest(actor, ctx.project) && readsNotes(actor, ctx) && (!internal || canReadInternalNotes(actor));
    },
  };
}

export interface SnippetNoteableContext extends NoteableContext {
  snippet: SnippetRow;
}

/** A project snippet: a snippets row of this project (a personal snippet's id names none here). */
export async function loadSnippetNoteable(request: FastifyRequest, projectId: string, snippetId: number): Promise<SnippetNoteableContext> {
  const ctx = await loadProject(request, projectId);
  const snippet = isStorableId(snippetId) ? await findSnippetById(request.server.kiln.db, snippetId) : undefined;
  const readable = (actor: Actor) => canReadProjectSnippet(actor, ctx.project, snippet!) && readsNotes(actor, ctx);
  if (!snippet || snippet.project_id !== ctx.project.id || !readable(ctx.actor)) throw notFound('Snippet');
  return {
    ctx, snippet, resource: 'Snippet',
    noteable: { type: 'Snippet', id: snippet.id, commitId: null, projectId: ctx.project.id, iid: null },
    canComment: canOnProject(ctx.actor, 'create_note', ctx.project),
    scope: { includeInternal: canReadInternalNotes(ctx.actor) },
    canUserRead: async (user, internal) => {
      const actor = await actorOf(request, ctx, user);
      return readable(actor) && (!internal || canReadInternalNotes(actor));
    },
  };
}

/**
 * A commit of the project's repository (read_commit: download_code), named by sha or by any
 * revision git resolves; its notes are keyed by the full sha.
 */
export async function loadCommitNoteable(request: FastifyRequest, projectId: string, rev: string): Promise<NoteableContext> {
  const ctx = await loadProject(request, projectId);
  const readable = (actor: Actor) => canOnProject(actor, 'download_code', ctx.project) && readsNotes(actor, ctx);
  if (!readable(ctx.actor)) throw notFound('Commit');
  const gitDir = projectRepository(request.server.kiln.config.storages, ctx.project).gitDir;
  const sha = readableRevision(rev) ? await resolveCommit(gitDir, rev) : null;
  const commit = sha ? await readCommit(gitDir, sha) : null;
  if (!commit) throw notFound('Commit');
  return {
    ctx, resource: 'Commit',
    noteable: { type: 'Commit', id: null, commitId: commit.id, projectId: ctx.project.id, iid: null },
    canComment: canOnProject(ctx.actor, 'create_note', ctx.project),
    scope: { includeInternal: canReadInternalNotes(ctx.actor) },
    canUserRead: async (user, internal) => {
      const actor = await actorOf(request, ctx, user);
      return readable(actor) && (!internal || canReadInternalNotes(actor));
    },
  };
}

/** The noteables of a project that notes, discussions and award emoji routes serve alike, by path segment. */
export interface ProjectNoteableKind {
  segment: 'issues' | 'merge_requests' | 'snippets';
  /** For summaries: 'issue', 'snippet'. */
  name: string;
  load: (request: FastifyRequest, projectId: string, noteableId: number) => Promise<NoteableContext>;
}

export const PROJECT_NOTEABLES: readonly ProjectNoteableKind[] = [
  { segment: 'issues', name: 'issue', load: loadIssueNoteable },
  { segment: 'snippets', name: 'snippet', load: loadSnippetNoteable },
  { segment: 'merge_requests', name: 'merge request', load: loadMergeRequestNoteable },
];

/** A Ruby string's inspect form (`"can't be blank"`), as the Service's messages print model errors. */
const rubyString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/**
 * A refused note in the Service's words: `bad_request!("Note #{note.errors.messages}")`, the errors
 * hash printed as Ruby prints it, `400 Bad request - Note {:note=>["can't be blank"]}`.
 */
export function noteRefusal(errors: Record<string, string[]>): ApiError {
  return badRequest(`Note ${errorsInspect(errors)}`);
}

/** A model's `errors.messages` as Ruby prints the hash: `{:note=>["can't be blank"]}`. */
export function errorsInspect(errors: Record<string, string[]>): string {
  return `{${Object.entries(errors).map(([k, v]) => `:${k}=>[${v.map(rubyString).join(', ')}]`).join(', ')}}`;
}

/** A creation time the caller gave, as kiln stores times; text that is no time is no time (Rails assigns nil). */
export function givenCreatedAt(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/**
 * Whether a note asked to be internal is one (Notes::BuildService#new_note): only those who may
 * mark notes as internal (mark_note_as_internal: Reporters and up, on issues — other noteables
 * have no internal notes) make one; anyone else's note is silently an ordinary one.
 */
export function internalAsked(nc: NoteableContext, asked: boolean | undefined): boolean {
  return Boolean(asked) && nc.noteable.type === 'Issue' && nc.scope.includeInternal;
}
