/**
 * Push and tag push deliveries (the Service's Git::BranchHooksService / Git::TagHooksService with
 * Gitlab::DataBuilder::Push), after a git push or an API write moved refs. A push changing more
 * refs than `push_event_hooks_limit` (default 3) runs no push hooks (Git::ProcessRefChangesService);
 * system hooks hearing repository updates hear every push.
 *
 * Commits: a new default branch carries its history, another new branch the commits the default
 * branch lacks, an update the commits between old and new, a removal none; a tag its commit. At
 * most the 20 newest go in the payload, oldest first; total_commits_count counts them all.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { runGit } from '../repositories/git-command.ts';
import { currentSettings } from '../settings/settings.ts';
import { enqueueHookEvent, enqueueSystemHookEvent } from './hook-events.ts';
import { projectHookAttrs, userHookAttrs, xmlschema, type CommitHookAttrs, type HookUrls } from './payloads.ts';
import { hooksHearing } from './web-hooks.queries.ts';

const ZERO = /^0+$/;
const PAYLOAD_COMMITS = 20;

export interface PushedRefChange {
  ref: string;
  before: string;
  after: string;
}

async function git(gitDir: string, args: string[]): Promise<string | null> {
  const { stdout, exitCode } = await runGit(args, { gitDir, okExitCodes: [1, 128] });
  return exitCode === 0 ? stdout : null;
}

async function changedFiles(gitDir: string, sha: string): Promise<{ added: string[]; modified: string[]; removed: string[] }> {
  const out = await git(gitDir, ['diff-tree', '--no-commit-id', '--name-status', '-r', '--root', '-z', sha, '--']) ?? '';
  const parts = out.split('\0').filter((p) => p !== '');
  const files = { added: [] as string[], modified: [] as string[], removed: [] as string[] };
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const status = parts[i][0];
    if (status === 'A') files.added.push(parts[i + 1]);
    else if (status === 'D') files.removed.push(parts[i + 1]);
    else files.modified.push(parts[i + 1]);
  }
  return files;
}

/** Commit#hook_attrs of each commit; `withFiles` adds added/modified/removed (push payloads). */
export async function commitAttrs(gitDir: string, webUrl: string, shas: string[], withFiles = true): Promise<CommitHookAttrs[]> {
  const out: CommitHookAttrs[] = [];
  for (const sha of shas) {
    const raw = await git(gitDir, ['show', '-s', '--format=%H%x00%an%x00%ae%x00%aI%x00%B', `${sha}^{commit}`, '--']);
    if (raw === null) continue;
    const [id, name, email, date, ...rest] = raw.split('\0');
    const message = rest.join('\0').replace(/\n$/, '');
    out.push({
      id, message, title: message.split('\n')[0], timestamp: xmlschema(date), url: `${webUrl}/-/commit/${id}`,
      author: { name, email }, ...(withFiles ? await changedFiles(gitDir, id) : {}),
    });
  }
  return out;
}

/** The shas of the push, newest first, and how many there are. */
async function pushedCommits(gitDir: string, project: ProjectRow, u: PushedRefChange): Promise<{ shas: string[]; count: number }> {
  if (ZERO.test(u.after)) return { shas: [], count: 0 };
  if (u.ref.startsWith('refs/tags/')) {
    const sha = (await git(gitDir, ['rev-parse', '--verify', '--quiet', `${u.after}^{commit}`]))?.trim();
    return sha ? { shas: [sha], count: 1 } : { shas: [], count: 0 };
  }
  const branch = u.ref.slice('refs/heads/'.length);
  let range: string[];
  if (!ZERO.test(u.before)) range = [u.after, `^${u.before}`];
  else if (!project.default_branch || project.default_branch === branch) range = [u.after];
  else range = [u.after, `^refs/heads/${project.default_branch}`];
  const count = Number((await git(gitDir, ['rev-list', '--count', ...range, '--']))?.trim() ?? 0) || 0;
  const list = await git(gitDir, ['rev-list', `--max-count=${PAYLOAD_COMMITS}`, ...range, '--']) ?? '';
  return { shas: list.split('\n').filter(Boolean), count };
}

async function tagMessage(gitDir: string, u: PushedRefChange): Promise<string | null> {
  if (ZERO.test(u.after)) return null;
  const type = (await git(gitDir, ['cat-file', '-t', u.after]))?.trim();
  if (type !== 'tag') return '';
  return ((await git(gitDir, ['for-each-ref', '--format=%(contents)', u.ref])) ?? '').replace(/\n$/, '');
}

/** Gitlab::DataBuilder::Push.build for one ref change. */
export async function buildPushData(
  db: Kysely<DB>, urls: HookUrls, gitDir: string, project: ProjectRow, u: PushedRefChange, userId: number,
): Promise<Record<string, unknown>> {
  const isTag = u.ref.startsWith('refs/tags/');
  const kind = isTag ? 'tag_push' : 'push';
  const projectAttrs = await projectHookAttrs(db, urls, project);
  const user = await userHookAttrs(db, urls, userId);
  const { shas, count } = await pushedCommits(gitDir, project, u);
  const commits = await commitAttrs(gitDir, projectAttrs.web_url, [...shas].reverse());
  const checkoutSha = ZERO.test(u.after) ? null : isTag ? (commits[0]?.id ?? null) : u.after;
  return {
    object_kind: kind, event_name: kind, before: u.before, after: u.after, ref: u.ref, checkout_sha: checkoutSha,
    message: isTag ? await tagMessage(gitDir, u) : null,
    user_id: userId, user_name: user?.name ?? null, user_username: user?.username ?? null, user_email: user?.email ?? null,
    user_avatar: user?.avatar_url ?? null, project_id: project.id, project: projectAttrs, commits,
    total_commits_count: count, push_options: {},
    repository: {
      name: projectAttrs.name, url: projectAttrs.url, description: projectAttrs.description, homepage: projectAttrs.homepage,
      git_http_url: projectAttrs.git_http_url, git_ssh_url: projectAttrs.git_ssh_url, visibility_level: projectAttrs.visibility_level,
    },
  };
}

/** Queues the push and tag push deliveries of one push (project and system hooks). */
export async function executePushHooks(
  db: Kysely<DB>, urls: HookUrls, gitDir: string, project: ProjectRow, updates: PushedRefChange[], userId: number,
): Promise<void> {
  const changes = updates.filter((u) => u.ref.startsWith('refs/heads/') || u.ref.startsWith('refs/tags/'));
  if (changes.length === 0) return;
  // Every push reaches the system hooks that hear repository updates, however many refs it moved
  // (PostReceive → SystemHooksService :repository_update_hooks, Gitlab::DataBuilder::Repository.update).
  if ((await hooksHearing(db, null, 'repository_update_events')).length > 0) {
    const user = await userHookAttrs(db, urls, userId);
    await enqueueSystemHookEvent(db, 'repository_update_events', {
      event_name: 'repository_update', user_id: userId, user_name: user?.name ?? null, user_email: user?.email ?? null,
      user_avatar: user?.avatar_url ?? null, project_id: project.id, project: await projectHookAttrs(db, urls, project),
      changes: changes.map((u) => ({ before: u.before, after: u.after, ref: u.ref })), refs: changes.map((u) => u.ref),
    });
  }
  if (changes.length > (await currentSettings(db)).push_event_hooks_limit) return;
  for (const u of changes) {
    const flag = u.ref.startsWith('refs/tags/') ? 'tag_push_events' as const : 'push_events' as const;
    // Building the payload reads git: only when some hook will hear it.
    if ((await hooksHearing(db, project.id, flag)).length === 0 && (await hooksHearing(db, null, flag)).length === 0) continue;
    const data = await buildPushData(db, urls, gitDir, project, u, userId);
    await enqueueHookEvent(db, project, flag, data);
    await enqueueSystemHookEvent(db, flag, data);
  }
}
