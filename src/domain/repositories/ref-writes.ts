/**
 * Branches and tags created and deleted through the API (the Service's Branches::CreateService,
 * Branches::DeleteService, Tags::CreateService, Tags::DestroyService), with their messages.
 * Names are checked here (ref-names.ts) before git sees them; the ref update goes through
 * `updateRefs` (locked, refused while read-only, atomic on the old value).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { runGit } from './git-command.ts';
import { refTarget, resolveCommit } from './git-read.ts';
import { readableRevision, validRefName, ZERO_ID } from './ref-names.ts';
import { updateRefs, type ProjectRepository, type RefUpdate } from './project-repository.ts';

export type RefWriteResult =
  | { ok: true; update: RefUpdate }
  | { ok: false; reason: 'invalid' | 'exists' | 'not_found' | 'default_branch'; message: string }
  | { ok: false; reason: 'read_only' };

/** Tag messages and API commit messages: larger ones are refused before git sees them. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

async function apply(
  db: Kysely<DB>, repo: ProjectRepository, update: RefUpdate,
  staleMessage: { reason: 'exists' | 'not_found'; message: string },
): Promise<RefWriteResult> {
  const r = await updateRefs(db, repo, [update]);
  if (r.ok) return { ok: true, update };
  if (r.reason === 'stale') return { ok: false, ...staleMessage };
  return { ok: false, reason: 'read_only' };
}

export async function createBranch(db: Kysely<DB>, repo: ProjectRepository, name: string, ref: string): Promise<RefWriteResult> {
  if (!validRefName(name)) return { ok: false, reason: 'invalid', message: 'Branch name is invalid' };
  if (await refTarget(repo.gitDir, `refs/heads/${name}`)) return { ok: false, reason: 'exists', message: 'Branch already exists' };
  const sha = readableRevision(ref) ? await resolveCommit(repo.gitDir, ref) : null;
  if (!sha) return { ok: false, reason: 'invalid', message: `Invalid reference name: ${ref}` };
  return apply(
    db, repo, { ref: `refs/heads/${name}`, before: ZERO_ID, after: sha },
    { reason: 'exists', message: 'Branch already exists' },
  );
}

export async function deleteBranch(
  db: Kysely<DB>, repo: ProjectRepository, name: string, defaultBranch: string | null,
): Promise<RefWriteResult> {
  const before = validRefName(name) ? await refTarget(repo.gitDir, `refs/heads/${name}`) : null;
  if (!before) return { ok: false, reason: 'not_found', message: 'No such branch' };
  if (name === defaultBranch) return { ok: false, reason: 'default_branch', message: 'The default branch of a project cannot be deleted.' };
  return apply(db, repo, { ref: `refs/heads/${name}`, before, after: ZERO_ID }, { reason: 'not_found', message: 'No such branch' });
}

export async function createTag(db: Kysely<DB>, repo: ProjectRepository, o: {
  name: string; ref: string; message: string | null; tagger: { name: string; email: string };
}): Promise<RefWriteResult> {
  if (!validRefName(o.name)) return { ok: false, reason: 'invalid', message: 'Tag name invalid' };
  const sha = readableRevision(o.ref) ? await resolveCommit(repo.gitDir, o.ref) : null;
  if (!sha) return { ok: false, reason: 'invalid', message: `Target ${o.ref} is invalid` };
  const exists = { reason: 'exists' as const, message: `Tag ${o.name} already exists` };
  if (await refTarget(repo.gitDir, `refs/tags/${o.name}`)) return { ok: false, ...exists };
  let target = sha;
  if (o.message) {
    // An annotated tag: the tag object written first (unreachable until the ref names it).
    const seconds = Math.floor(Date.now() / 1000);
    const identity = `${o.tagger.name.replace(/[<>\n]/g, '')} <${o.tagger.email.replace(/[<>\n]/g, '')}> ${seconds} +0000`;
    const body = `object ${sha}\ntype commit\ntag ${o.name}\ntagger ${identity}\n\n${o.message.replace(/\n*$/, '\n')}`;
    target = (await runGit(['mktag'], { gitDir: repo.gitDir, input: body })).stdout.trim();
  }
  return apply(db, repo, { ref: `refs/tags/${o.name}`, before: ZERO_ID, after: target }, exists);
}

export async function deleteTag(db: Kysely<DB>, repo: ProjectRepository, name: string): Promise<RefWriteResult> {
  const before = validRefName(name) ? await refTarget(repo.gitDir, `refs/tags/${name}`) : null;
  if (!before) return { ok: false, reason: 'not_found', message: 'No such tag' };
  return apply(db, repo, { ref: `refs/tags/${name}`, before, after: ZERO_ID }, { reason: 'not_found', message: 'No such tag' });
}
