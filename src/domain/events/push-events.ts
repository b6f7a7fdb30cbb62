/**
 * The push events of one push (the Service's Git::ProcessRefChangesService with
 * EventCreateService#push / #bulk_push and PushEventPayloadService): one 'pushed' event per
 * updated ref, its payload saying whether the ref was created, removed or pushed to, how many
 * commits came with it and the newest commit's title. When more refs of one kind (branch, tag)
 * had the same action than `push_event_activities_limit` (default 3), they make one bulk event
 * instead (BulkPushEventPayloadService: `ref_count` set, no ref, no commits).
 *
 * Commit counts follow Git::BranchHooksService#commits_count: a new default branch counts every
 * commit it holds, another new branch the commits the default branch lacks, an updated branch the
 * commits between its old and new value, a removed one none; a tag counts its commit
 * (Git::TagHooksService's limited_commits). Callers run this after the push answered.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import { runGit } from '../repositories/git-command.ts';
import { recordBulkPushEvent, recordPushEvent, type PushPayload } from './events.queries.ts';
import { nowIso } from '../clock.ts';
import { currentSettings } from '../settings/settings.ts';

const ZERO = /^0+$/;

export interface PushedRef {
  /** The full ref name (`refs/heads/main`, `refs/tags/v1`). */
  ref: string;
  before: string;
  after: string;
}

/** PushEventPayloadService#commit_title: the message's first line, stripped, truncated as Rails' String#truncate(70). */
export function commitTitle(message: string): string {
  const newline = message.indexOf('\n');
  const line = (newline >= 0 ? message.slice(0, newline + 1) : message).trim();
  return [...line].length > 70 ? `${[...line].slice(0, 67).join('')}...` : line;
}

async function countCommits(gitDir: string, include: string, exclude: string | null): Promise<number> {
  const { stdout, exitCode } = await runGit(
    ['rev-list', '--count', include, ...(exclude ? [`^${exclude}`] : []), '--'], { gitDir, okExitCodes: [128] },
  );
  return exitCode === 0 ? Number(stdout.trim()) || 0 : 0;
}

async function messageOf(gitDir: string, rev: string): Promise<string | null> {
  const { stdout, exitCode } = await runGit(['show', '-s', '--format=%B', `${rev}^{commit}`, '--'], { gitDir, okExitCodes: [128] });
  return exitCode === 0 ? stdout : null;
}

async function branchExists(gitDir: string, name: string): Promise<boolean> {
  const { exitCode } = await runGit(['rev-parse', '--verify', '--quiet', `refs/heads/${name}`], { gitDir, okExitCodes: [1, 128] });
  return exitCode === 0;
}

type Kind = { refType: 'branch' | 'tag'; name: string };

function kindOf(ref: string): Kind | null {
  if (ref.startsWith('refs/heads/')) return { refType: 'branch', name: ref.slice('refs/heads/'.length) };
  if (ref.startsWith('refs/tags/')) return { refType: 'tag', name: ref.slice('refs/tags/'.length) };
  return null;
}

function actionOf(u: PushedRef): PushPayload['action'] {
  if (ZERO.test(u.before)) return 'created';
  if (ZERO.test(u.after)) return 'removed';
  return 'pushed';
}

async function payloadOf(gitDir: string, defaultBranch: string | null, u: PushedRef, kind: Kind): Promise<PushPayload> {
  const action = actionOf(u);
  let count = 0;
  if (action !== 'removed') {
    if (kind.refType === 'tag') count = 1;
    else if (action === 'pushed') count = await countCommits(gitDir, u.after, u.before);
    else if (defaultBranch === null || defaultBranch === kind.name || !(await branchExists(gitDir, defaultBranch))) {
      count = await countCommits(gitDir, u.after, null);
    } else {
      count = await countCommits(gitDir, u.after, `refs/heads/${defaultBranch}`);
    }
  }
  const message = count > 0 ? await messageOf(gitDir, u.after) : null;
  return {
    commit_count: count, action, ref_type: kind.refType,
    commit_from: action === 'created' ? null : u.before,
    commit_to: action === 'removed' ? null : u.after,
    ref: kind.name,
    commit_title: message === null ? null : commitTitle(message),
  };
}

export interface PushEventsInput {
  gitDir: string;
  project: { id: number; default_branch: string | null };
  authorId: number;
  updates: PushedRef[];
  /** push_event_activities_limit; the instance's setting when absent. */
  bulkLimit?: number;
}

/** Records the events of one push; returns how many events were written. */
export async function recordPushEvents(db: Kysely<DB>, input: PushEventsInput): Promise<number> {
  const bulkLimit = input.bulkLimit ?? (await currentSettings(db)).push_event_activities_limit;
  const groups = new Map<string, { kind: Kind; update: PushedRef }[]>();
  for (const update of input.updates) {
    const kind = kindOf(update.ref);
    if (!kind) continue;
    const key = `${kind.refType}:${actionOf(update)}`;
    groups.set(key, [...(groups.get(key) ?? []), { kind, update }]);
  }
  const single: PushPayload[] = [];
  const bulk: { refType: 'branch' | 'tag'; action: PushPayload['action']; refCount: number }[] = [];
  for (const changes of groups.values()) {
    if (changes.length > bulkLimit) {
      bulk.push({ refType: changes[0].kind.refType, action: actionOf(changes[0].update), refCount: changes.length });
    } else {
      for (const c of changes) single.push(await payloadOf(input.gitDir, input.project.default_branch, c.update, c.kind));
    }
  }
  if (single.length === 0 && bulk.length === 0) return 0;
  const event = { project_id: input.project.id, author_id: input.authorId };
  await db.transaction().execute(async (trx) => {
    const now = nowIso();
    for (const payload of single) await recordPushEvent(trx, event, payload, now);
    for (const b of bulk) {
      await recordBulkPushEvent(trx, event, { action: b.action, ref_type: b.refType, ref_count: b.refCount }, now);
    }
  });
  return single.length + bulk.length;
}
