/**
 * A push's life around receive-pack, the same over HTTP and SSH: recorded as a repository write
 * for as long as it runs (the read-only check and the record are one transaction, so a storage
 * move is either scheduled first and the push refused, or refused while the push writes); the
 * branches and tags before it; afterwards the project's default branch, README and activity,
 * then — in the background, never delaying the push's answer — its events and pipelines, with its
 * push options (`git push -o ci.skip`).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { KilnContext } from '../http/context.ts';
import type { RepositoryTarget } from './repository-target.ts';
import { repositoryPath } from '../domain/repositories/storage.ts';
import { inspectRepository } from '../domain/repositories/repositories.ts';
import { findProjectById, recordPush } from '../domain/projects/projects.queries.ts';
import { createPushPipelines, refUpdates, snapshotRefs } from '../domain/pipelines/push-pipelines.ts';
import { ciEnvFrom } from '../domain/pipelines/ci-env.ts';
import { recordPushEvents } from '../domain/events/push-events.ts';
import { beginRepositoryWrite } from '../domain/repository-writes/repository-writes.ts';
import type { ContainerKind } from '../domain/storage-moves/storage-moves.queries.ts';
import { appliedCommands, type PushOptionSniffer } from './push-options.ts';

/** The storage-move container a repository belongs to (a wiki is its group's). */
const CONTAINER_KINDS: Record<RepositoryTarget['kind'], ContainerKind> = { project: 'project', wiki: 'group', snippet: 'snippet' };

export interface PushSession {
  /** The repository where the locked row says it is now. */
  pushed: RepositoryTarget;
  /** Ends the record of the write; safe to call more than once. */
  end(): Promise<void>;
  /**
   * Once receive-pack has exited (before the answer ends): the project's state, then the record
   * ends, then events and pipelines start in the background for the user the push counts as.
   */
  finish(exitCode: number, userId: number | null): Promise<void>;
}

export async function beginPush(
  ctx: Pick<KilnContext, 'db' | 'config'>, log: FastifyBaseLogger, target: RepositoryTarget, sniffer: PushOptionSniffer,
): Promise<{ ok: false; reason: 'read_only' | 'not_found' } | ({ ok: true } & PushSession)> {
  const { db, config } = ctx;
  const write = await beginRepositoryWrite(db, CONTAINER_KINDS[target.kind], target.id, config.gitPushTimeLimit * 1000);
  if (!write.ok) return { ok: false, reason: write.reason === 'read_only' ? 'read_only' : 'not_found' };
  let ended: Promise<void> | null = null;
  const end = () => {
    ended ??= write.end().catch((err: unknown) => log.error({ err }, 'could not end the record of a git write; it expires by itself'));
    return ended;
  };
  const pushed = { ...target, storage: write.container.repository_storage, diskPath: write.container.disk_path };
  const gitDir = repositoryPath(config.storages, pushed.storage, pushed.diskPath);
  let refsBefore: Map<string, string> | null = null;
  try {
    // Branches and tags before the push, so its ref updates can start pipelines afterwards.
    refsBefore = target.kind === 'project' ? await snapshotRefs(gitDir) : null;
  } catch (err) {
    await end();
    throw err;
  }

  const finish = async (exitCode: number, userId: number | null) => {
    try {
      if (exitCode === 0 && target.kind === 'project') {
        const project = await findProjectById(db, target.id);
        if (project) await recordPush(db, target.id, await inspectRepository(gitDir, project.default_branch));
      }
    } catch (err) {
      log.error({ err }, 'could not record a push');
    } finally {
      await end();
    }
    if (exitCode === 0 && refsBefore && userId !== null) startPushPipelines(refsBefore, userId);
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
      await createPushPipelines(ciEnvFrom(db, config), project, updates, userId, { pushOptions: sniffer.options() });
    };
    work().catch((err: unknown) => log.error({ err }, 'could not create the pipelines of a push'));
  };

  return { ok: true, pushed, end, finish };
}
