/**
 * The attributes a project holds in the Service 15.2 (issue 35, item 8): POST and PUT /projects
 * take every documented one (feature levels, the API v4 `*_enabled` booleans that set them,
 * merge and CI settings, topics, the container expiration policy), check them as the Service's
 * models do, store them and answer them in the Project entity; the CI ones change what runners
 * get (clone depth, Git strategy, timeout, whether instance runners take the project's jobs).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, createPipeline, pushFiles } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner } from '../helpers/test-runner.ts';

describe('project attributes', () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN });
    token = await createToken(t.db, await createUser(t.db));
  });
  after(async () => { await t.close(); });

  const create = (payload: object) => t.request({ method: 'POST', url: '/api/v4/projects', token, payload });
  const update = (id: number, payload: object) => t.request({ method: 'PUT', url: `/api/v4/projects/${id}`, token, payload });

  it('answers the Service\'s defaults on a new project', async () => {
    const r = await create({ name: 'defaults' });
    assert.equal(r.statusCode, 201, r.body);
    const p = r.json();
    for (const [name, value] of Object.entries({
      issues_enabled: true, merge_requests_enabled: true, wiki_enabled: true, jobs_enabled: true, snippets_enabled: true,
      container_registry_enabled: false, issues_access_level: 'enabled', repository_access_level: 'enabled', builds_access_level: 'enabled',
      pages_access_level: 'private', container_registry_access_level: 'disabled', security_and_compliance_access_level: 'private',
      shared_runners_enabled: true, lfs_enabled: false, request_access_enabled: true,
      remove_source_branch_after_merge: true, printing_merge_request_link_enabled: true, merge_method: 'merge', squash_option: 'default_off',
      build_git_strategy: 'fetch', auto_cancel_pending_pipelines: 'enabled', build_timeout: 3600, ci_default_git_depth: 20,
      ci_config_path: null, ci_forward_deployment_enabled: true, keep_latest_artifact: false, topics: [], tag_list: [],
    })) assert.deepEqual(p[name], value, name);
    // The policy every new project gets, due one cadence after the project was made.
    const { next_run_at: nextRun, ...policy } = p.container_expiration_policy;
    assert.deepEqual(policy, { cadence: '1d', enabled: false, keep_n: 10, older_than: '90d', name_regex: '.*', name_regex_keep: null });
    assert.equal(Date.parse(nextRun) - Date.parse(p.created_at), 86_400_000);
  });

  it('takes every attribute on create, stores it and answers it', async () => {
    const r = await create({
      name: 'attributed', issues_access_level: 'private', pages_access_level: 'public', snippets_enabled: false, merge_method: 'ff',
      squash_option: 'always', topics: 'go, kiln ,Go', build_timeout: 7200, ci_default_git_depth: 50, build_git_strategy: 'clone',
      only_allow_merge_if_pipeline_succeeds: true, ci_config_path: 'ci/pipeline.yml', suggestion_commit_message: 'Apply suggestion',
      container_expiration_policy_attributes: { cadence: '7d', keep_n: 5, enabled: true },
    });
    assert.equal(r.statusCode, 201, r.body);
    const p = r.json();
    for (const [name, value] of Object.entries({
      issues_access_level: 'private', issues_enabled: true, pages_access_level: 'public', snippets_enabled: false, snippets_access_level: 'disabled',
      merge_method: 'ff', squash_option: 'always', topics: ['go', 'kiln'], tag_list: ['go', 'kiln'], build_timeout: 7200, ci_default_git_depth: 50,
      build_git_strategy: 'clone', only_allow_merge_if_pipeline_succeeds: true, ci_config_path: 'ci/pipeline.yml',
      suggestion_commit_message: 'Apply suggestion',
    })) assert.deepEqual(p[name], value, name);
    const { next_run_at: _nextRun, ...policy } = p.container_expiration_policy;
    assert.deepEqual(policy, { cadence: '7d', enabled: true, keep_n: 5, older_than: '90d', name_regex: '.*', name_regex_keep: null });
    const row = await t.db.selectFrom('projects').selectAll().where('id', '=', p.id).executeTakeFirstOrThrow();
    assert.deepEqual([row.issues_access_level, row.snippets_access_level, row.pages_access_level, row.topics], [10, 0, 30, '["go","kiln"]']);
    assert.deepEqual((await t.request({ url: `/api/v4/projects/${p.id}`, token })).json().topics, ['go', 'kiln']);
  });

  it('takes snippets_enabled and its kind on update, as the Service maps them to levels', async () => {
    const id = (await create({ name: 'updated' })).json().id;
    const off = await update(id, { snippets_enabled: false, jobs_enabled: false });
    assert.equal(off.statusCode, 200, off.body);
    assert.deepEqual([off.json().snippets_enabled, off.json().snippets_access_level, off.json().jobs_enabled, off.json().builds_access_level],
      [false, 'disabled', false, 'disabled']);
    // A level named outright wins over its boolean.
    const both = await update(id, { snippets_enabled: false, snippets_access_level: 'private' });
    assert.equal(both.json().snippets_access_level, 'private');
    const more = await update(id, {
      ci_separated_caches: false, restrict_user_defined_variables: true, tag_list: ['legacy'], merge_commit_template: 'Merge %{source_branch}',
      container_expiration_policy_attributes: { older_than: '14d' },
    });
    assert.equal(more.statusCode, 200, more.body);
    assert.deepEqual([more.json().ci_separated_caches, more.json().restrict_user_defined_variables, more.json().topics, more.json().merge_commit_template],
      [false, true, ['legacy'], 'Merge %{source_branch}']);
    assert.equal(more.json().container_expiration_policy.older_than, '14d');
    // An empty text clears it; an empty list clears the topics.
    const cleared = await t.request({
      method: 'PUT', url: `/api/v4/projects/${id}`, token, headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'merge_commit_template=&topics=',
    });
    assert.deepEqual([cleared.statusCode, cleared.json().merge_commit_template, cleared.json().topics], [200, null, []]);
  });

  it('refuses values as Grape and the models do, and writes nothing', async () => {
    const id = (await create({ name: 'refusing' })).json().id;
    const cases: [object, object][] = [
      [{ issues_access_level: 'public' }, { error: 'issues_access_level does not have a valid value' }],
      [{ merge_method: 'squash' }, { error: 'merge_method does not have a valid value' }],
      [{ snippets_enabled: '' }, { error: 'snippets_enabled is invalid' }],
      [{ build_timeout: 60 }, { message: { build_timeout: ['needs to be between 10 minutes and 1 month'] } }],
      [{ ci_default_git_depth: 1001 }, { message: { 'ci_cd_settings.default_git_depth': ['must be less than or equal to 1000'] } }],
      [{ ci_config_path: '../secrets.yml' }, { message: { ci_config_path: ['cannot include leading slash or directory traversal.'] } }],
      [{ repository_access_level: 'private' }, { message: { 'project_feature.merge_requests_access_level': ['cannot have higher visibility level than repository access level'], 'project_feature.builds_access_level': ['cannot have higher visibility level than repository access level'] } }],
      [{ container_expiration_policy_attributes: { cadence: 'weekly' } }, { message: { 'container_expiration_policy.cadence': ['is not included in the list'] } }],
      [{ suggestion_commit_message: 'x'.repeat(256) }, { message: { suggestion_commit_message: ['is too long (maximum is 255 characters)'] } }],
    ];
    for (const [payload, body] of cases) {
      const r = await update(id, { description: 'changed', ...payload });
      assert.deepEqual([r.statusCode, r.json()], [400, body], JSON.stringify(payload).slice(0, 60));
    }
    const p = (await t.request({ url: `/api/v4/projects/${id}`, token })).json();
    assert.deepEqual([p.description, p.build_timeout, p.repository_access_level], [null, 3600, 'enabled']);
    // A lower repository level goes with lower children.
    const lowered = await update(id, { repository_access_level: 'private', merge_requests_access_level: 'private', builds_access_level: 'disabled' });
    assert.equal(lowered.statusCode, 200, lowered.body);
  });

  it('gives runners the project\'s clone depth, Git strategy and timeout, and keeps instance runners off when shared runners are', async () => {
    const p = await createCiProject(t);
    const set = await t.request({
      method: 'PUT', url: `/api/v4/projects/${p.project.id}`, token: p.ownerToken,
      payload: { ci_default_git_depth: 3, build_git_strategy: 'clone', build_timeout: 900, shared_runners_enabled: false },
    });
    assert.equal(set.statusCode, 200, set.body);
    // The push creates the pipeline, whose job takes the project's timeout.
    await pushFiles(t, p, { '.gitlab-ci.yml': 'build:\n  script: [make]\n' });
    await createPipeline(t, p);
    const runner = await TestRunner.register(t);
    assert.equal(await runner.request(), null, 'an instance runner leaves a project without shared runners');
    await t.request({ method: 'PUT', url: `/api/v4/projects/${p.project.id}`, token: p.ownerToken, payload: { shared_runners_enabled: true } });
    const job = await runner.requestJob() as unknown as { git_info: { depth: number }; allow_git_fetch: boolean; runner_info: { timeout: number } };
    assert.deepEqual([job.git_info.depth, job.allow_git_fetch, job.runner_info.timeout], [3, false, 900]);
  });

  it('lets an administrator place a new repository and move an existing one, and ignores the attribute from others', async () => {
    const shard = t.config.storages[0].name;
    const admin = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name: 'placed', repository_storage: shard } });
    assert.equal(admin.statusCode, 201, admin.body);
    assert.equal(admin.json().repository_storage, shard);
    const refused = await t.request({ method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN, payload: { name: 'nowhere', repository_storage: 'nowhere' } });
    assert.deepEqual([refused.statusCode, refused.json()], [400, { message: { repository_storage: ['is not included in the list'] } }]);
    const mine = await create({ name: 'mine', repository_storage: 'nowhere' });
    assert.equal(mine.statusCode, 201, mine.body);
    const move = await t.request({ method: 'PUT', url: `/api/v4/projects/${mine.json().id}`, token: ROOT_TOKEN, payload: { repository_storage: 'nowhere' } });
    assert.deepEqual([move.statusCode, move.json()], [400, { message: { destination_storage_name: ['is not included in the list'] } }]);
  });
});
