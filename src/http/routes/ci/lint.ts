/**
 * Project CI lint (the Service's API::Lint, project scope): POST checks the YAML given as
 * `content`, GET checks the project's `.gitlab-ci.yml` at a ref (the default branch unless `sha`,
 * `content_ref` or `ref` names another). Both read includes at that ref, answer 200 with
 * `valid`/`errors`/`warnings`/`merged_yaml`, and the jobs with `include_jobs`. A dry run
 * simulates pipeline creation (rules, workflow). Who may ask, as lib/api/lint.rb says: POST takes
 * the right to create pipelines (403 otherwise, dry run or not); GET takes the right to read the
 * code, and a dry run by someone who may not create pipelines is the pipeline service's own
 * refusal inside a 200 answer (Chain::Validate::Abilities runs before the configuration is read).
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { ciEnvFrom } from '../../../domain/pipelines/ci-env.ts';
import { lintConfig, lintContent, type LintResult } from '../../../domain/pipelines/lint-config.ts';
import { currentSettings } from '../../../domain/settings/settings.ts';
import { unauthorized } from '../../errors.ts';
import { CI_CONFIG_PATH, projectGitDir } from '../../../domain/pipelines/create-pipeline.ts';
import { readFileAt, resolveCommitish } from '../../../domain/pipelines/git-source.ts';
import { defineParams, P } from '../../input/params.ts';
import { authorizeProject, loadProject } from '../../loaders/containers.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { route } from '../../route.ts';

/** Bytes of YAML one lint request may check (the Service's max_yaml_size_bytes). */
const MAX_CONTENT = 1024 * 1024;
const REF = { maxLength: 1024 };
const EMPTY_CONTENT = 'Please provide content of .gitlab-ci.yml';

const postParams = defineParams({
  id: P.string({ description: 'project id or URL-encoded full path' }),
  content: P.string({ maxLength: MAX_CONTENT, description: 'the CI/CD configuration' }),
  dry_run: P.optional(P.boolean({ default: false })),
  include_jobs: P.optional(P.boolean({ default: false })),
  ref: P.optional(P.string(REF)),
});
const instanceParams = defineParams({
  content: P.string({ maxLength: MAX_CONTENT, description: 'the CI/CD configuration' }),
  include_merged_yaml: P.optional(P.boolean({ default: false })),
  include_jobs: P.optional(P.boolean({ default: false })),
});
const getParams = defineParams({
  id: P.string(),
  sha: P.optional(P.string(REF)),
  content_ref: P.optional(P.string(REF)),
  dry_run: P.optional(P.boolean({ default: false })),
  dry_run_ref: P.optional(P.string(REF)),
  include_jobs: P.optional(P.boolean({ default: false })),
  ref: P.optional(P.string(REF)),
});

const LintJobSchema = Type.Object({
  name: Type.String(), stage: Type.String(), before_script: Type.Array(Type.String()), script: Type.Array(Type.String()),
  after_script: Type.Array(Type.String()), tag_list: Type.Array(Type.String()), environment: Type.Union([Type.String(), Type.Null()]),
  when: Type.String(), allow_failure: Type.Boolean(),
  only: Type.Optional(Type.Record(Type.String(), Type.Unknown())), except: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
const LintSchema = Type.Object({
  valid: Type.Boolean(),
  errors: Type.Array(Type.String()),
  warnings: Type.Array(Type.String()),
  merged_yaml: Type.Union([Type.String(), Type.Null()]),
  jobs: Type.Optional(Type.Array(LintJobSchema)),
});

/** The instance-level answer: `status` in place of `valid`, `merged_yaml` only when asked for. */
const InstanceLintSchema = Type.Object({
  status: Type.Union([Type.Literal('valid'), Type.Literal('invalid')]),
  errors: Type.Array(Type.String()),
  warnings: Type.Array(Type.String()),
  merged_yaml: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  jobs: Type.Optional(Type.Array(LintJobSchema)),
});

const NO_PIPELINES = 'Insufficient permissions to create a new pipeline';

const invalid = (includeJobs: boolean, message: string): LintResult =>
  ({ valid: false, errors: [message], warnings: [], merged_yaml: null, ...(includeJobs ? { jobs: [] } : {}) });

const ciLint: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  route(app, {
    method: 'POST', url: '/projects/:id/ci/lint', auth: 'required', params: postParams,
    schema: { summary: 'Validate CI/CD YAML in the context of a project', tags: ['ci lint'], response: { 200: LintSchema } },
  }, async ({ request, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'update_build');
    if (input.content.trim() === '') return invalid(input.include_jobs, EMPTY_CONTENT);
    return lintConfig(ciEnvFrom(db, config), {
      project: ctx.project, content: input.content, userId: caller.user.id, dryRun: input.dry_run, includeJobs: input.include_jobs,
      ...(input.ref ? { ref: input.ref } : {}),
    });
  });

  route(app, {
    method: 'POST', url: '/ci/lint', auth: 'optional', params: instanceParams,
    schema: {
      summary: 'Validate CI/CD YAML without a project (deprecated in 15.2)', tags: ['ci lint'], response: { 200: InstanceLintSchema },
    },
  }, async ({ input, caller }) => {
    // lib/api/lint.rb: anonymous callers only while anyone may sign up, without restrictions.
    const s = await currentSettings(db);
    const signupLimited = s.domain_allowlist.length > 0 || s.email_restrictions_enabled || s.require_admin_approval_after_user_signup;
    if (!caller && (!s.signup_enabled || signupLimited)) throw unauthorized();
    const lint = { content: input.content, userId: caller?.user.id ?? null, includeJobs: input.include_jobs };
    const result = input.content.trim() === ''
      ? invalid(input.include_jobs, EMPTY_CONTENT)
      : await lintContent(ciEnvFrom(db, config), lint);
    return {
      status: result.valid ? 'valid' as const : 'invalid' as const, errors: result.errors, warnings: result.warnings,
      ...(input.include_merged_yaml ? { merged_yaml: result.merged_yaml } : {}), ...(result.jobs ? { jobs: result.jobs } : {}),
    };
  });

  route(app, {
    method: 'GET', url: '/projects/:id/ci/lint', auth: 'optional', params: getParams,
    schema: { summary: "Validate a project's CI/CD configuration", tags: ['ci lint'], response: { 200: LintSchema } },
  }, async ({ request, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'download_code');
    if (input.dry_run && !canOnProject(ctx.actor, 'update_build', ctx.project)) return invalid(input.include_jobs, NO_PIPELINES);
    const env = ciEnvFrom(db, config);
    const gitDir = projectGitDir(env, ctx.project);
    const at = input.content_ref ?? input.sha ?? input.ref ?? ctx.project.default_branch;
    const sha = at ? await resolveCommitish(gitDir, at) : null;
    const content = sha ? await readFileAt(gitDir, sha, CI_CONFIG_PATH) : null;
    if (content === null || content.trim() === '') return invalid(input.include_jobs, EMPTY_CONTENT);
    const ref = input.dry_run_ref ?? input.ref ?? ctx.project.default_branch ?? undefined;
    return lintConfig(env, {
      project: ctx.project, content, userId: caller?.user.id ?? null, dryRun: input.dry_run, includeJobs: input.include_jobs,
      ...(ref ? { ref } : {}),
    });
  });
};

export default ciLint;
