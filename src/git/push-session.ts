/**
 * A push's life around receive-pack, the same over HTTP and SSH: recorded as a repository write
 * for as long as it runs (the read-only check and the record are one transaction, so a storage
 * move is either scheduled first and the push refused, or refused while the push writes); the
 * branches and tags before it; afterwards the project's default branch, README and activity,
 * then — in the background, never delaying the push's answer — its events and pipelines, with its
 * push options (`git push -o ci.skip`).
 *
 * Each ref change is also judged against the project's protected branches and tags: the session
 * writes who pushes and what protects the project to a file, and both transports run
 * receive-pack with kiln's hooks (hooks/pre-receive.ts reads it), so a protected branch is
 * protected over SSH exactly as over HTTP.
 */
import type { FastifyBaseLogger } from 'fastify';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { UserRow } from '../db/types.ts';
import { protectDefaultBranch, protectionRulesFor } from '../domain/protected-refs/protected-refs.ts';
import { emptyRepoPushMessage, type RefActor } from '../domain/protected-refs/ref-rules.ts';
import type { PushAccess } from './hooks/pre-receive.ts';
import type { GitActor } from './git-access.ts';
import type { KilnContext } from '../http/context.ts';
import type { RepositoryTarget } from './repository-target.ts';
import { repositoryPath } from '../domain/repositories/storage.ts';
import { inspectRepository } from '../domain/repositories/repositories.ts';
import { findProjectById, recordPush } from '../domain/projects/projects.queries.ts';
import { createPushPipelines, refUpdates, snapshotRefs } from '../domain/pipelines/push-pipelines.ts';
import { ciEnvFrom } from '../domain/pipelines/ci-env.ts';
import { scheduleStatisticsRefresh } from '../domain/statistics/project-statistics.ts';
import { recordPushEvents } from '../domain/events/push-events.ts';
import { executePushHooks } from '../domain/web-hooks/push-hooks.ts';
import { executePushIntegrations } from '../domain/integrations/push-integrations.ts';
import { createMergeRequestPushPipelines } from '../domain/pipelines/merge-request-pipelines.ts';
import { afterBranchPush } from '../domain/merge-requests/merge-status.ts';
import { beginRepositoryWrite } from '../domain/repository-writes/repository-writes.ts';
import type { ContainerKind } from '../domain/storage-moves/storage-moves.queries.ts';
import { appliedCommands, type PushOptionSniffer } from './push-options.ts';
import { wikiDiskPath } from '../domain/wikis/wiki-repository.ts';
import { recordWikiPushEvents } from '../domain/wikis/wiki-push-events.ts';

/** The storage-move container a repository belongs to (a group wiki is its group's, a project wiki its project's). */
const CONTAINER_KINDS: Record<RepositoryTarget['kind'], ContainerKind> = {
  project: 'project', wiki: 'group', project_wiki: 'project', snippet: 'snippet',
};

/** The directory of kiln's git hooks (core.hooksPath of a checked push). */
export const HOOKS_DIR = fileURLToPath(new URL('./hooks', import.meta.url));

/**
 * A deploy key with write access (Gitlab::DeployKeyAccess) pushes to any unprotected branch, and
 * to a protected one as its creator could: the protection's levels are checked against the
 * key's user. A key whose creator is gone pushes to unprotected branches only.
 */
function deployKeyActor(creator: RefActor | null): RefActor {
  return { admin: creator?.admin ?? false, accessLevel: creator?.accessLevel ?? 0, canPushCode: true };
}

export interface PushSession {
  /** The repository where the locked row says it is now. */
  pushed: RepositoryTarget;
  /** The file the pre-receive hook judges the push by (KILN_PUSH_ACCESS); null where nothing is protected (wikis, snippets). */
  accessFile: string | null;
  /** Ends the record of the write; safe to call more than once. */
  end(): Promise<void>;
  /**
   * Once receive-pack has exited (before the answer ends): the project's state, then the record
   * ends, then events and pipelines start in the background for the user the push counts as.
   */
  finish(exitCode: number, userId: number | null): Promise<void>;
}

/** The environment receive-pack needs for kiln's hooks (with core.hooksPath set to HOOKS_DIR). */
export function pushHookEnv(accessFile: string): Record<string, string> {
  return { KILN_HOOKS_DIR: HOOKS_DIR, KILN_NODE: process.execPath, KILN_PUSH_ACCESS: accessFile };
}

export async function beginPush(
  ctx: Pick<KilnContext, 'db' | 'config'>, log: FastifyBaseLogger, target: RepositoryTarget, sniffer: PushOptionSniffer,
  pusher: GitActor,
): Promise<{ ok: false; reason: 'read_only' | 'not_found' } | ({ ok: true } & PushSession)> {
  const { db, config } = ctx;
  const write = await beginRepositoryWrite(db, CONTAINER_KINDS[target.kind], target.id, config.gitPushTimeLimit * 1000);
  if (!write.ok) return { ok: false, reason: write.reason === 'read_only' ? 'read_only' : 'not_found' };
  let ended: Promise<void> | null = null;
  let accessDir: string | null = null;
  const end = () => {
    ended ??= Promise.all([
      write.end().catch((err: unknown) => log.error({ err }, 'could not end the record of a git write; it expires by itself')),
      accessDir ? fs.rm(accessDir, { recursive: true, force: true }).catch(() => undefined) : undefined,
    ]).then(() => undefined);
    return ended;
  };
  // A project wiki lives inside its project's repository, wherever the locked row says that is now.
  const diskPath = target.kind === 'project_wiki' ? wikiDiskPath(write.container.disk_path) : write.container.disk_path;
  const pushed = { ...target, storage: write.container.repository_storage, diskPath };
  const gitDir = repositoryPath(config.storages, pushed.storage, pushed.diskPath);
  let refsBefore: Map<string, string> | null = null;
  let accessFile: string | null = null;
  try {
    // Branches and tags before the push, so its ref updates can start pipelines afterwards.
    refsBefore = target.kind === 'project' || target.kind === 'project_wiki' ? await snapshotRefs(gitDir) : null;
    if (refsBefore && target.kind === 'project' && target.pushContext) {
      accessDir = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-push-'));
      accessFile = path.join(accessDir, 'access.json');
      const access = await pushAccess(target, pusher, refsBefore);
      await fs.writeFile(accessFile, JSON.stringify(access), { mode: 0o600 });
    }
  } catch (err) {
    await end();
    throw err;
  }

  /** Who pushes and what protects the project, for the pre-receive hook. */
  async function pushAccess(t: RepositoryTarget, who: GitActor, before: Map<string, string>): Promise<PushAccess> {
    const user: UserRow | null = who.kind === 'user' ? who.user : who.kind === 'deploy_key' ? who.creator : null;
    const [context, rules] = await Promise.all([t.pushContext!(user), protectionRulesFor(db, t.id)]);
    return {
      rules, actor: who.kind === 'deploy_key' ? deployKeyActor(context.actor) : context.actor, defaultBranch: context.defaultBranch,
      collaborationBranches: who.kind === 'deploy_key' ? [] : context.collaborationBranches,
      // Project#empty_repo?: no branch yet.
      state: { emptyRepo: ![...before.keys()].some((r) => r.startsWith('refs/heads/')) },
      emptyRepoMessage: emptyRepoPushMessage(context.fullPath, `${config.externalUrl}/${context.fullPath}/-/project_members`),
    };
  }

  const finish = async (exitCode: number, userId: number | null) => {
    try {
      if (exitCode === 0 && target.kind === 'project') {
        const project = await findProjectById(db, target.id);
        if (project) {
          const state = await inspectRepository(gitDir, project.default_branch);
          await recordPush(db, target.id, state);
          // The sizes and commit count change with the push (the Service's ProjectCacheWorker).
          await scheduleStatisticsRefresh(db, target.id);
          // A default branch this push created is protected (Project#after_create_default_branch).
          if (refsBefore && !state.empty && state.defaultBranch && !refsBefore.has(`refs/heads/${state.defaultBranch}`)) {
            await protectDefaultBranch(db, { id: project.id, default_branch: state.defaultBranch });
          }
        }
      }
    } catch (err) {
      log.error({ err }, 'could not record a push');
    } finally {
      await end();
    }
    if (exitCode === 0 && refsBefore && userId !== null) {
      if (target.kind === 'project_wiki') startWikiPushEvents(refsBefore, userId);
      else startPushPipelines(refsBefore, userId);
    }
  };

  /** A project wiki push's page events (Git::WikiPushService), in the background. */
  const startWikiPushEvents = (before: Map<string, string>, userId: number) => {
    const work = async () => {
      const updates = refUpdates(before, await snapshotRefs(gitDir));
      if (updates.length > 0) await recordWikiPushEvents(db, gitDir, target.id, updates, userId);
    };
    work().catch((err: unknown) => log.error({ err }, 'could not record the events of a wiki push'));
  };

  /** Events and pipelines for the pushed refs, in the background. */
  const startPushPipelines = (before: Map<string, string>, userId: number) => {
    const work = async () => {
      const refsAfter = await snapshotRefs(gitDir);
      // This push's own commands: another push running beside it changed the refs too.
      const commands = sniffer.commands();
      const updates = commands ? appliedCommands(commands, refsAfter) : refUpdates(before, refsAfter);
      if (updates.length === 0) return;
      const project = await findProjectById(db, target.id);
      if (!project) return;
      // The push's activity first (EventCreateService#push); a failure there never keeps its pipelines from starting.
      await recordPushEvents(db, { gitDir, project, authorId: userId, updates })
        .catch((err: unknown) => log.error({ err }, 'could not record the events of a push'));
      const env = ciEnvFrom(db, config);
      // The push and tag push webhooks, from the refs' new state.
      await executePushHooks(db, env, gitDir, project, updates, userId)
        .catch((err: unknown) => log.error({ err }, 'could not queue the webhooks of a push'));
      await executePushIntegrations(db, env, gitDir, project, updates, userId)
        .catch((err: unknown) => log.error({ err }, 'could not queue the integrations of a push'));
      // Merge requests of the pushed branches: a new diff version, the merge status rechecked.
      await afterBranchPush(db, config.storages, gitDir, project, updates, userId)
        .catch((err: unknown) => log.error({ err }, 'could not refresh the merge requests of a push'));
      await createPushPipelines(env, project, updates, userId, { pushOptions: sniffer.options() });
      // Then a merge request pipeline for each open request of a pushed source branch (ci.skip keeps those skipped too).
      await createMergeRequestPushPipelines(env, project, updates, userId, { skip: sniffer.options().includes('ci.skip') });
    };
    work().catch((err: unknown) => log.error({ err }, 'could not create the pipelines of a push'));
  };

  return { ok: true, pushed, accessFile, end, finish };
}
