/**
 * Git over smart HTTP (CONTRACT §4): `{KILN_EXTERNAL_URL}/{full path}.git/info/refs?service=…`,
 * `/git-upload-pack` and `/git-receive-pack`, served by `git http-backend`. These routes are
 * outside the API (`config.web`): they authenticate git clients themselves with HTTP Basic
 * (git-credentials.ts) and answer in text, as git prints it ("remote: …").
 *
 * Order of checks, as the Service's GitAccess: the protocol, credentials (401 with a Basic
 * challenge when a private repository is asked for without them), then what git-access.ts
 * decides — the same decision git over SSH takes (ssh-server.ts): existence and read access
 * (404), the credential's abilities and the role (403), archived and read-only repositories (403).
 *
 * A push (`git-receive-pack`) runs in a push session (push-session.ts, shared with SSH): recorded
 * as a write in progress while it runs, so a storage move is either scheduled first (the push is
 * refused as read-only) or refused while the push writes; afterwards the project's default
 * branch, README and activity, its events and pipelines. A push runs at most
 * KILN_GIT_PUSH_TIME_LIMIT seconds; then its git processes are ended.
 */
import { recordProjectFetch } from '../domain/statistics/project-statistics.ts';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import type { UserRow } from '../db/types.ts';
import { identifyGitClient } from './git-credentials.ts';
import type { RepositoryTarget } from './repository-target.ts';
import { runHttpBackend } from './http-backend.ts';
import { shardRoot } from '../domain/repositories/storage.ts';
import { pushOptionSniffer, type PushOptionSniffer } from './push-options.ts';
import { MAX_NAMESPACE_DEPTH } from '../domain/namespaces/namespaces.queries.ts';
import { checkGitAccess, MESSAGES, protocolRefusal, type GitActor } from './git-access.ts';
import { beginPush, type PushSession } from './push-session.ts';

type Service = 'git-upload-pack' | 'git-receive-pack';

export { MESSAGES };

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

const smartHttp: FastifyPluginAsync = async (app) => {
  const ctx = app.kiln;
  const { config } = ctx;

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
    const protocolRefused = await protocolRefusal(ctx.db, 'http');
    if (protocolRefused) return text(reply, 403, protocolRefused);

    const identity = await identifyGitClient(ctx, request);
    if (identity.kind === 'invalid') return text(reply, 401, MESSAGES.denied, challenge);
    if (identity.kind === 'denied') return text(reply, 403, identity.reason);
    const actor: GitActor = identity.kind === 'user' ? { kind: 'user', user: identity.user, abilities: identity.abilities } : identity;
    const user: UserRow | null = identity.kind === 'user' ? identity.user : null;

    const access = await checkGitAccess(ctx.db, 'http', actor, fullPath, service, config.storages);
    if (!access.ok) return text(reply, access.status, access.message, access.challenge ? challenge : {});
    const { target, pushing } = access;
    // A project's fetches per day: each upload-pack request after the advertisement
    // (the Service's GitHttpController#update_fetch_statistics).
    if (service === 'git-upload-pack' && suffix !== 'info/refs' && target.kind === 'project') {
      await recordProjectFetch(ctx.db, target.id).catch((err: unknown) => request.log.warn({ err }, 'could not count a fetch'));
    }
    if (!pushing || suffix === 'info/refs') return backend(request, reply, target, suffix, user);

    // The push itself: the read-only check again, now together with recording the write, and
    // the repository where the locked row says it is.
    // Push options (`-o ci.skip`) are read from the request as it streams to receive-pack.
    const sniffer = pushOptionSniffer();
    const session = await beginPush(ctx, request.log, target, sniffer, actor);
    if (!session.ok) return session.reason === 'read_only' ? text(reply, 403, MESSAGES.readOnly) : text(reply, 404, MESSAGES.notFound);
    try {
      await backend(request, reply, session.pushed, suffix, user, session, sniffer);
    } finally {
      // Already ended when the backend finished, unless it could not run at all.
      await session.end();
    }
  }

  /** Serves one request; for a push, its session finishes once its git processes are gone, before the answer ends. */
  async function backend(
    request: FastifyRequest, reply: FastifyReply, target: RepositoryTarget, suffix: string,
    user: UserRow | null, session?: PushSession, sniffer?: PushOptionSniffer,
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
      ...(session?.accessFile ? { pushAccessFile: session.accessFile } : {}),
      ...(session ? { timeLimitMs: config.gitPushTimeLimit * 1000 } : {}),
      finish: async (exitCode, stderr) => {
        if (exitCode !== 0) request.log.warn({ exitCode, stderr }, 'git http-backend failed');
        if (session) await session.finish(exitCode, user?.id ?? null);
      },
    }, reply.raw);
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
