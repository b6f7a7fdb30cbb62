/**
 * Objects for the fuzzer's path ids (issue 13): a target user with a key, an email, a GPG key, a
 * custom attribute and tokens; the same for root (the `/user/…` routes); a project with a
 * pipeline, a job a runner holds, a member, a protected branch and tag, a deploy key, a merge request, a generic package,
 * badges; a group, a snippet,
 * an OAuth application. A path
 * parameter is resolved from its name and the resource before it; one the map does not know
 * (a route added later) gets 1, which names root or the first of its kind.
 */
import assert from 'node:assert/strict';
import type { TestApp } from './app.ts';
import { ROOT_TOKEN } from './app.ts';
import { createCiProject, createPipeline, pushFiles } from './ci.ts';
import { createToken, createUser } from './factories.ts';
import { gpgPublicKey, sshPublicKey } from './keys.ts';
import { TestRunner } from './test-runner.ts';

export interface FuzzObjects {
  /** The value for path parameter `name` of the OpenAPI path `path`. */
  pathValue(path: string, name: string): string | number;
  /** An id for an integer parameter of that name, when the fuzzer made such an object. */
  idFor(name: string, path: string): number | undefined;
}

async function post(t: TestApp, url: string, payload: Record<string, unknown>, method: 'POST' | 'PUT' = 'POST'): Promise<any> {
  const res = await t.request({ method, url, token: ROOT_TOKEN, payload });
  assert.ok(res.statusCode < 300, `${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

export async function seedFuzzObjects(t: TestApp): Promise<FuzzObjects> {
  const user = await createUser(t.db);
  await createToken(t.db, user);
  const pat = await t.db.selectFrom('personal_access_tokens').select('id').where('user_id', '=', user.id).executeTakeFirstOrThrow();
  const ssh = await post(t, `/api/v4/users/${user.id}/keys`, { title: 'fuzz', key: sshPublicKey() });
  const rootSsh = await post(t, '/api/v4/user/keys', { title: 'fuzz', key: sshPublicKey() });
  const email = await post(t, `/api/v4/users/${user.id}/emails`, { email: 'fuzz.target@example.org' });
  const rootEmail = await post(t, '/api/v4/user/emails', { email: 'fuzz.root@example.org' });
  const gpg = await post(t, `/api/v4/users/${user.id}/gpg_keys`, { key: (await gpgPublicKey([user.email])).armored });
  const rootGpg = await post(t, '/api/v4/user/gpg_keys', { key: (await gpgPublicKey(['admin@example.com'])).armored });
  await post(t, `/api/v4/users/${user.id}/custom_attributes/color`, { value: 'blue' }, 'PUT');
  const impersonation = await post(t, `/api/v4/users/${user.id}/impersonation_tokens`, { name: 'fuzz', scopes: ['api'] });

  const ci = await createCiProject(t);
  await pushFiles(t, ci, { '.gitlab-ci.yml': 'build:\n  script: echo hi\nlater:\n  script: echo later\n  when: manual\n' });
  const runner = await TestRunner.register(t);
  const pipeline = await createPipeline(t, ci);
  const job = await runner.request();
  assert.ok(job, 'the runner got a job');
  await post(t, `/api/v4/projects/${ci.project.id}/members`, { user_id: user.id, access_level: 30 });
  const group = await post(t, '/api/v4/groups', { name: 'Fuzz group', path: 'fuzz-group' });
  await post(t, `/api/v4/groups/${group.id}/members`, { user_id: user.id, access_level: 30 });
  const snippet = await post(t, '/api/v4/snippets', { title: 'fuzz', file_name: 'a.txt', content: 'hello', visibility: 'public' });
  // A merge request of the project (its routes' :merge_request_iid), from a branch pushed beside main.
  await pushFiles(t, ci, { 'feature.txt': 'fuzz\n' }, { branch: 'fuzz-feature' });
  const mr = await post(t, `/api/v4/projects/${ci.project.id}/merge_requests`, { source_branch: 'fuzz-feature', target_branch: 'main', title: 'Fuzz' });
  const application = await post(t, '/api/v4/applications', { name: 'fuzz', redirect_uri: 'https://client.example/cb', scopes: 'api' });
  // The project's default branch is protected by its first push; a protected tag pattern beside it.
  await post(t, `/api/v4/projects/${ci.project.id}/protected_tags`, { name: 'v*' });
  const deployKey = await post(t, `/api/v4/projects/${ci.project.id}/deploy_keys`, { title: 'fuzz', key: sshPublicKey() });
  const projectDeployToken = await post(t, `/api/v4/projects/${ci.project.id}/deploy_tokens`, { name: 'fuzz', scopes: ['read_repository'] });
  const groupDeployToken = await post(t, `/api/v4/groups/${group.id}/deploy_tokens`, { name: 'fuzz', scopes: ['read_repository'] });
  // A pipeline schedule with a variable named as the `key` path parameter below.
  const schedule = await post(t, `/api/v4/projects/${ci.project.id}/pipeline_schedules`, { description: 'fuzz', ref: 'main', cron: '0 1 * * *' });
  await post(t, `/api/v4/projects/${ci.project.id}/pipeline_schedules/${schedule.id}/variables`, { key: 'color', value: 'blue' });
  const packageFile = await post(t, `/api/v4/projects/${ci.project.id}/packages/generic/fuzz/1.0.0/f.txt?select=package_file`, {}, 'PUT');
  const projectBadge = await post(t, `/api/v4/projects/${ci.project.id}/badges`, { link_url: 'http://x.example', image_url: 'http://x.example' });
  const groupBadge = await post(t, `/api/v4/groups/${group.id}/badges`, { link_url: 'http://x.example', image_url: 'http://x.example' });
  const deployment = await post(t, `/api/v4/projects/${ci.project.id}/deployments`, {
    environment: 'fuzz', sha: pipeline.sha, ref: 'main', tag: false, status: 'success',
  });

  // The resource a `{id}` follows.
  const byResource: Record<string, number> = {
    users: user.id, projects: ci.project.id, groups: group.id, snippets: snippet.id, runners: runner.id,
    applications: application.id, keys: ssh.id, personal_access_tokens: pat.id, jobs: job!.id, pipelines: pipeline.id,
  };
  const byName: Record<string, number> = {
    user_id: user.id, project_id: ci.project.id, group_id: group.id, namespace_id: group.id, snippet_id: snippet.id,
    runner_id: runner.id, pipeline_id: pipeline.id, job_id: job!.id, impersonation_token_id: impersonation.id,
    application_id: application.id, merge_request_iid: mr.iid, pipeline_schedule_id: schedule.id,
    package_id: packageFile.package_id, package_file_id: packageFile.id,
    deployment_id: deployment.id, environment_id: deployment.environment.id,
  };

  return {
    pathValue(path, name) {
      const self = path.startsWith('/api/v4/user/');
      if (name === 'key') return 'color';
      if (name === 'provider') return 'ldapmain';
      // A commit by its branch: the CI project's main has the commit pushed above.
      if (name === 'sha') return 'main';
      if (name === 'key_id' && path.includes('deploy_keys')) return deployKey.id;
      if (name === 'token_id' && path.includes('deploy_tokens')) {
        return path.startsWith('/api/v4/groups/') ? groupDeployToken.id : projectDeployToken.id;
      }
      if (name === 'badge_id') return path.startsWith('/api/v4/groups/') ? groupBadge.id : projectBadge.id;
      if (name === 'package_name') return 'fuzz';
      if (name === 'key_id') return path.includes('gpg_keys') ? (self ? rootGpg.id : gpg.id) : (self ? rootSsh.id : ssh.id);
      if (name === 'email_id') return self ? rootEmail.id : email.id;
      if (name === 'name' && path.includes('/protected_branches/')) return 'main';
      if (name === 'name' && path.includes('/protected_tags/')) return 'v*';
      if (name === 'id') {
        const segments = path.split('/');
        const resource = segments[segments.indexOf('{id}') - 1];
        return byResource[resource] ?? 1;
      }
      return byName[name] ?? 1;
    },
    idFor(name) {
      return byName[name];
    },
  };
}
