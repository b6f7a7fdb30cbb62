/**
 * Changelogs generated from commit trailers (the Service 15.2's GET and POST
 * /projects/:id/repository/changelog, lib/api/repositories.rb; domain/repositories/changelog.ts):
 * GET answers the release section as `notes`; POST commits it into the changelog file of a
 * branch the caller may push to and answers `200`, as the Service does. A changelog that cannot be
 * made is 422 `Failed to generate the changelog: …`.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import {
  buildRelease, ChangelogError, commitRelease, DEFAULT_CONFIG_FILE, DEFAULT_FILE, DEFAULT_TRAILER, SEMVER, type ChangelogRequest,
} from '../../../domain/repositories/changelog.ts';
import { afterRefUpdate } from '../../../domain/repositories/after-ref-update.ts';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { MAX_REF_NAME } from '../../../domain/repositories/ref-names.ts';
import { MAX_MESSAGE_BYTES } from '../../../domain/repositories/ref-writes.ts';
import { ApiError, forbidden, invalidParams } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { loadRepository, refActorOf, repositoryReadOnly, type RepositoryContext } from '../../loaders/repository.ts';
import { protectionRulesFor } from '../../../domain/protected-refs/protected-refs.ts';
import { canPushToBranch } from '../../../domain/protected-refs/ref-rules.ts';
import { route } from '../../route.ts';

const releaseAttributes = {
  id: P.string(),
  version: P.name({ description: 'the version of the release (semantic versioning)' }),
  from: P.optional(P.string({ maxLength: MAX_REF_NAME, description: 'the commit before the range (default: the previous release tag)' })),
  to: P.optional(P.string({ maxLength: MAX_REF_NAME, description: 'the last commit of the range (default: the branch)' })),
  date: P.optional(P.dateTime({ description: 'the release date (default: now)' })),
  trailer: P.optional(P.name({ default: DEFAULT_TRAILER, description: 'the trailer that marks a commit for the changelog' })),
  config_file: P.optional(P.string({
    maxLength: 4096, default: DEFAULT_CONFIG_FILE, description: 'the configuration file on the default branch',
  })),
};
const getParams = defineParams(releaseAttributes);
const postParams = defineParams({
  ...releaseAttributes,
  branch: P.optional(P.string({ maxLength: MAX_REF_NAME, description: 'the branch to commit to (default: the default branch)' })),
  file: P.optional(P.string({ maxLength: 4096, default: DEFAULT_FILE, description: 'the changelog file' })),
  message: P.optional(P.string({ description: 'the commit message (default: Add changelog for version <version>)' })),
});

function failed(err: unknown): never {
  if (err instanceof ChangelogError) throw new ApiError(422, { message: `Failed to generate the changelog: ${err.message}` });
  throw err;
}

const changelog: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  function releaseRequest(ctx: RepositoryContext, input: {
    version: string; from?: string; to?: string; date?: string; trailer: string; config_file: string;
  }, branch: string): ChangelogRequest {
    // Grape's `regexp:` looks for the pattern anywhere in the value.
    if (!SEMVER.test(input.version)) throw invalidParams(['version is invalid']);
    return {
      version: input.version, from: input.from, to: input.to, date: input.date ? new Date(input.date) : undefined,
      trailer: input.trailer, configFile: input.config_file, branch, defaultBranch: ctx.project.default_branch,
      projectFullPath: `${ctx.namespace.fullPath}/${ctx.project.path}`,
    };
  }

  route(app, {
    method: 'GET', url: '/projects/:id/repository/changelog', auth: 'optional', params: getParams,
    schema: {
      summary: 'A release section generated from commit trailers', tags: ['repositories'],
      response: { 200: Type.Object({ notes: Type.String() }, { title: 'Changelog' }) },
    },
  }, async ({ request, input }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    const req = releaseRequest(ctx, input, ctx.project.default_branch || 'main');
    const release = await buildRelease(db, ctx.repo.gitDir, req).catch(failed);
    return { notes: release.markdown };
  });

  route(app, {
    method: 'POST', url: '/projects/:id/repository/changelog', auth: 'required', params: postParams,
    schema: { summary: 'Generate a release section and commit it to the changelog file', tags: ['repositories'] },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadRepository(request, input.id, 'read');
    const branch = input.branch || ctx.project.default_branch || 'main';
    // Gitlab::Changelog::Committer: the caller must be able to push to that branch, protection included.
    const rules = await protectionRulesFor(db, ctx.project.id);
    if (!ctx.canPush || !canPushToBranch(rules, refActorOf(ctx), branch, { emptyRepo: ctx.project.empty_repo === 1 })) {
      throw forbidden('You are not allowed to commit a changelog on this branch');
    }
    const message = input.message || `Add changelog for version ${input.version}`;
    if (Buffer.byteLength(message) > MAX_MESSAGE_BYTES) throw invalidParams(['message is too long']);
    const req = releaseRequest(ctx, input, branch);
    if (ctx.project.read_only === 1) throw repositoryReadOnly();
    const user = caller.user;
    const author = { name: user.name, email: user.commit_email || user.email };
    const result = await buildRelease(db, ctx.repo.gitDir, req)
      .then((release) => commitRelease(db, ctx.repo, { release, file: input.file, branch, message, author }))
      .catch(failed);
    if (!result.ok) throw repositoryReadOnly();
    if (result.update) {
      await afterRefUpdate(
        ciEnvFrom(db, config), ctx.project, [result.update], user.id,
        (err) => request.log.error({ err }, 'could not create the pipelines of a ref update'),
      );
    }
    // The Service's endpoint ends with `status(200)`, whose value Grape renders as the body.
    return reply.code(200).type('application/json').send('200');
  });
};

export default changelog;
