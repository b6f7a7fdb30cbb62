/**
 * Git over smart HTTP (CONTRACT §4): `{KILN_EXTERNAL_URL}/{full path}.git/info/refs?service=…`,
 * `/git-upload-pack` and `/git-receive-pack`, served by `git http-backend`. These routes are
 * outside the API (`config.web`): they authenticate git clients themselves with HTTP Basic
 * (git-credentials.ts) and answer in text, as git prints it ("remote: …").
 *
 * Order of checks, as the Service's GitAccess: credentials (401 with a Basic challenge when a
 * private repository is asked for without them), existence and read access (404), the
 * credential's abilities and the role (403), then archived and read-only repositories (403).
 * After a successful push the project records its default branch, README and activity.
 *
 * A push (`git-receive-pack`) records itself as a write in progress for as long as it runs
 * (repository-writes.ts): the read-only check and the record are one transaction, so a storage
 * move is either scheduled first (the push is refused as read-only) or refused while the push
 * writes. A push runs at most KILN_GIT_PUSH_TIME_LIMIT seconds; then its git processes are ended.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import type { UserRow } from '../db/types.ts';
import { identifyGitClient } from './git-credentials.ts';
import { findRepositoryTarget, type RepositoryTarget } from './repository-target.ts';
import { runHttpBackend } from './http-backend.ts';
import { repositoryPath, shardRoot } from '../domain/repositories/storage.ts';
import { inspectRepository, READ_ONLY_MESSAGE } from '../domain/repositories/repositories.ts';
import { findProjectById, recordPush } from '../domain/projects/projects.queries.ts';
import { createPushPipelines, refUpdates, snapshotRefs } from '../domain/pipelines/push-pipelines.ts';
import { ciEnvFrom } from '../domain/pipelines/ci-env.ts';
import { recordPushEvents } from '../domain/events/push-events.ts';
import { afterBranchPush } from '../domain/merge-requests/merge-status.ts';
import { appliedCommands, pushOptionSniffer, type PushCommand, type PushOptionSniffer } from './push-options.ts';
import { MAX_NAMESPACE_DEPTH } from '../domain/namespaces/namespaces.queries.ts';
import { beginRepositoryWrite } from '../domain/repository-writes/repository-writes.ts';
import { currentSettings } from '../domain/settings/settings.ts';
import type { ContainerKind } from '../domain/storage-moves/storage-moves.queries.ts';

type Service = 'git-upload-pack' | 'git-receive-pack';

export const MESSAGES = {
  notFound: "The project you were looking for could not be found or you don't have permission to view it.",
  download: 'You are not allowed to download code from this project.',
  push: 'You are not allowed to push code to this project.',
  archived: 'You are not allowed to push code to an archived project.',
  readOnly: `You are not allowed to push code to this project. ${READ_ONLY_MESSAGE}`,
  denied: 'HTTP Basic: Access denied',
  dumb: 'Only the smart HTTP protocol is supported.',
  protocol: 'Git access over HTTP is not allowed',
} as const;

/** A smart-HTTP request's path: `…/<repository>.git/` and one of the three endpoints. */
export const GIT_PATH = /\.git\/(info\/refs|git-upload-pack|git-receive-pack)$/;

/**
 * git's answer to a repository path the router cannot read (app.ts), in text as git prints it: a
 * percent escape that is not UTF-8 is a bad request (the Service's HandleMalformedStrings says
 * "Bad Request"), a segment longer than any path names no repository.
 */
export function unroutableGitAnswer(status: 400 | 404): { status: number; type: string; body: string } {
  return { status, type: 'text/plain', body: `${status === 400 ? 'Bad Request' : MESSAGES.notFound}\n` };
}

function text(reply: FastifyReply, status: number, body: string, headers: Record<string, string> = {}) {
  reply.code(status).headers(headers).type('text/plain').send(`${body}\n`);
}

const challenge = { 'www-authenticate': 'Basic realm="kiln"' };

/** The storage-move container a repository belongs to (a wiki is its group's). */
const CONTAINER_KINDS: Record<RepositoryTarget['kind'], ContainerKind> = { project: 'project', wiki: 'group', snippet: 'snippet' };

const smartHttp: FastifyPluginAsync = async (app) => {
  const ctx = app.kiln;
  const { db, config } = ctx;

  // Pack requests stream straight into http-backend: keep them unparsed and unbuffered.
  app.addContentTypeParser(
    ['application/x-git-upload-pack-request', 'application/x-git-receive-pack-request'],
    (_request, payload, done) => done(null, payload),
  );

  async function serve(request: FastifyRequest, reply: FastifyReply, service: Service | null, suffix: string) {
    const params = request.params as Record<string, string>;
    const segments = Object.keys(params).filter((k) => k.startsWith('ns')).sort((
      a, b,
    ) => Number(a.slice(2)) - Number(b.slice(2))).map((k) => params[k]);
    const fullPath = [...segments, params.repo].join('/');
    if (!params.repo.endsWith('.git')) return text(reply, 404, MESSAGES.notFound);
    if (!service) return text(reply, 403, MESSAGES.dumb);
    // GitAccess#check_protocol!, before anything else: enabled_git_access_protocol `ssh` leaves HTTP out.
    if ((await currentSettings(db)).enabled_git_access_protocol === 'ssh') return text(reply, 403, MESSAGES.protocol);

    const identity = await identifyGitClient(ctx, request);
    if (identity.kind === 'invalid') return text(reply, 401, MESSAGES.denied, challenge);
    if (identity.kind === 'denied') return text(reply, 403, identity.reason);
    const user: UserRow | null = identity.kind === 'user' ? identity.user : null;

    const target = await findRepositoryTarget(db, fullPath);
    const can = target ? await target.permissions(user) : { read: false, download: false, push: false };
    const pushing = service === 'git-receive-pack';
    // Anonymous clients are asked for credentials rather than told the repository is missing.
    if (!user && (pushing || !can.download)) return text(reply, 401, MESSAGES.denied, challenge);
    if (!target || !can.read) return text(reply, 404, MESSAGES.notFound);
    if (identity.kind === 'user' && !(pushing ? identity.abilities.push : identity.abilities.download)) {
      return text(reply, 403, pushing ? MESSAGES.push : MESSAGES.download);
    }
    if (!pushing && !can.download) return text(reply, 403, MESSAGES.download);
    if (pushing) {
      if (!can.push) return text(reply, 403, MESSAGES.push);
      if (target.archived) return text(reply, 403, MESSAGES.archived);
      if (target.readOnly) return text(reply, 403, MESSAGES.readOnly);
    }
    if (!pushing || suffix === 'info/refs') return backend(request, reply, target, suffix, user);

    // The push itself: the read-only check again, now together with recording the write, and
    // the repository where the locked row says it is.
    const write = await beginRepositoryWrite(db, CONTAINER_KINDS[target.kind], target.id, config.gitPushTimeLimit * 1000);
    if (!write.ok) return write.reason === 'read_only' ? text(reply, 403, MESSAGES.readOnly) : text(reply, 404, MESSAGES.notFound);
    const endWrite = () => write.end().catch(
      (err: unknown) => request.log.error({ err }, 'could not end the record of a git write; it expires by itself'),
    );
    const pushed = { ...target, storage: write.container.repository_storage, diskPath: write.container.disk_path };
    // Branches and tags before the push, so its ref updates can start pipelines afterwards.
    const refsBefore = target.kind === 'project' ? await snapshotRefs(
      repositoryPath(config.storages, pushed.storage, pushed.diskPath),
    ) : null;
    // Push options (`-o ci.skip`) are read from the request as it streams to receive-pack.
    const sniffer = pushOptionSniffer();
    try {
      await backend(request, reply, pushed, suffix, user, endWrite, refsBefore, sniffer);
    } finally {
      // Already ended when the backend finished, unless it could not run at all.
      await endWrite();
    }
  }

  /** Serves one request; for a push, `endWrite` once its git processes are gone, before the answer ends. */
  async function backend(
    request: FastifyRequest, reply: FastifyReply, target: RepositoryTarget, suffix: string,
    user: UserRow | null, endWrite?: () => Promise<void>, refsBefore?: Map<string, string> | null,
    sniffer?: PushOptionSniffer,
  ) {
    const body = (request.body as Readable | undefined) ?? null;
    if (body && sniffer) body.once('error', (err) => sniffer.destroy(err));
    reply.hijack();
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
    await runHttpBackend({
      projectRoot: shardRoot(config.storages, target.storage),
      pathInfo: `/${target.diskPath}/${suffix}`,
      method: request.method,
      queryString: query,
      raw: request.raw,
      body: body && sniffer ? body.pipe(sniffer) : body,
      remoteUser: user?.username ?? '',
      ...(endWrite ? { timeLimitMs: config.gitPushTimeLimit * 1000 } : {}),
      finish: async (exitCode, stderr) => {
        if (exitCode !== 0) request.log.warn({ exitCode, stderr }, 'git http-backend failed');
        if (!endWrite) return;
        try {
          if (exitCode === 0 && target.kind === 'project') await afterPush(target);
        } catch (err) {
          request.log.error({ err }, 'could not record a push');
        } finally {
          await endWrite();
        }
        if (exitCode === 0 && target.kind === 'project' && refsBefore && user) {
          startPushPipelines(request, target, refsBefore, sniffer?.commands() ?? null, user.id, sniffer?.options() ?? []);
        }
      },
    }, reply.raw);
  }

  /** Events and pipelines for the pushed refs, in the background: the push's answer never waits for them. */
  function startPushPipelines(
    request: FastifyRequest, target: RepositoryTarget, refsBefore: Map<string, string>, commands: PushCommand[] | null,
    userId: number, pushOptions: string[],
  ) {
    const work = async () => {
      const gitDir = repositoryPath(config.storages, target.storage, target.diskPath);
      const refsAfter = await snapshotRefs(gitDir);
      // This push's own commands: another push running beside it changed the refs too.
      const updates = commands ? appliedCommands(commands, refsAfter) : refUpdates(refsBefore, refsAfter);
      if (updates.length === 0) return;
      const project = await findProjectById(db, target.id);
      if (!project) return;
      // The push's activity first (EventCreateService#push); a failure there never keeps its pipelines from starting.
      await recordPushEvents(db, { gitDir, project, authorId: userId, updates })
        .catch((err: unknown) => request.log.error({ err }, 'could not record the events of a push'));
      // Merge requests of the pushed branches: a new diff version, the merge status rechecked.
      await afterBranchPush(db, gitDir, project, updates, userId)
        .catch((err: unknown) => request.log.error({ err }, 'could not refresh the merge requests of a push'));
      await createPushPipelines(ciEnvFrom(db, config), project, updates, userId, { pushOptions });
    };
    work().catch((err: unknown) => request.log.error({ err }, 'could not create the pipelines of a push'));
  }

  /** The project's default branch, README and activity after a successful push. */
  async function afterPush(target: RepositoryTarget) {
    const project = await findProjectById(db, target.id);
    if (project) {
      const state = await inspectRepository(repositoryPath(config.storages, target.storage, target.diskPath), project.default_branch);
      await recordPush(db, target.id, state);
    }
  }

  // One route per nesting depth: find-my-way matches a fixed number of segments per route, and
  // namespaces nest at most MAX_NAMESPACE_DEPTH deep (0 segments: a top-level group's wiki).
  for (let depth = 0; depth <= MAX_NAMESPACE_DEPTH; depth += 1) {
    const prefix = ['', ...Array.from({ length: depth }, (_, i) => `:ns${i}`), ':repo'].join('/');
    const config = { web: true };
    app.get(`${prefix}/info/refs`, { config, schema: { hide: true } }, async (request, reply) => {
      const service = (request.query as Record<string, unknown>).service;
      return serve(request, reply, service === 'git-upload-pack' || service === 'git-receive-pack' ? service : null, 'info/refs');
    });
    for (const service of ['git-upload-pack', 'git-receive-pack'] as const) {
      app.post(
        `${prefix}/${service}`, { config, schema: { hide: true } },
        async (request, reply) => serve(request, reply, service, service),
      );
    }
  }
};

export default smartHttp;
