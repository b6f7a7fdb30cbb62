/**
 * Every entity's JSON types as served over HTTP (issue 35, item 3): go-gitlab decodes into typed
 * structs, so a string where the Service sends an integer, or a float where it sends whole
 * seconds, fails a real client. Each table below is the Service 15.2's entity
 * (lib/api/entities/*.rb, reference §1.3 and §3.3): the fields it exposes and the JSON type of
 * each. A field the table does not list fails too, so that a new field comes with its type.
 *
 * Types: int, float (any number: the Service's floats may be whole), string, bool, null,
 * datetime (ISO 8601), date (YYYY-MM-DD), object (any); `a|b` for either; a nested table for an
 * object, `[table]` (or `['string']`) for an array of them; a key starting with `?` may be absent
 * (the Service's `if:`).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CATALOGUE } from '../../src/domain/settings/catalogue.ts';
import type { SettingDecl } from '../../src/domain/settings/declarations.ts';
import type { UserRow } from '../../src/db/types.ts';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { gpgPublicKey, sshPublicKey } from '../helpers/keys.ts';
import { createCiProject, createPipeline, pushFiles, type CiProject } from '../helpers/ci.ts';
import { REGISTRATION_TOKEN, TestRunner, type JobPayload } from '../helpers/test-runner.ts';
import { makeShards, type Shards } from '../helpers/storage-shards.ts';

interface Table { [field: string]: FieldType }
type FieldType = string | Table | [Table | string] | { nullable: Table };

const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

function scalarMatches(type: string, v: unknown): boolean {
  switch (type) {
    case 'int': return Number.isInteger(v);
    case 'float': return typeof v === 'number' && Number.isFinite(v);
    case 'string': return typeof v === 'string';
    case 'bool': return typeof v === 'boolean';
    case 'null': return v === null;
    case 'datetime': return typeof v === 'string' && DATETIME.test(v);
    case 'date': return typeof v === 'string' && DATE.test(v);
    case 'object': return typeof v === 'object' && v !== null && !Array.isArray(v);
    default: throw new Error(`unknown type ${type}`);
  }
}

/** Where `value` strays from `table`: one line per field. */
function typeErrors(table: Table, value: unknown, at: string): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [`${at}: expected an object, got ${JSON.stringify(value)}`];
  }
  const out: string[] = [];
  const record = value as Record<string, unknown>;
  const known = new Set<string>();
  for (const [key, type] of Object.entries(table)) {
    const optional = key.startsWith('?');
    const name = optional ? key.slice(1) : key;
    known.add(name);
    if (!(name in record)) {
      if (!optional) out.push(`${at}.${name}: missing`);
      continue;
    }
    out.push(...fieldErrors(type, record[name], `${at}.${name}`));
  }
  for (const name of Object.keys(record)) {
    if (!known.has(name)) out.push(`${at}.${name}: not in the Service's entity (add it with its type)`);
  }
  return out;
}

function fieldErrors(type: FieldType, v: unknown, at: string): string[] {
  if (typeof type === 'string') {
    return type.split('|').some((t) => scalarMatches(t, v)) ? [] : [`${at}: expected ${type}, got ${JSON.stringify(v)}`];
  }
  if (Array.isArray(type)) {
    if (!Array.isArray(v)) return [`${at}: expected an array, got ${JSON.stringify(v)}`];
    return v.flatMap((item, i) => fieldErrors(type[0], item, `${at}[${i}]`));
  }
  if ('nullable' in type && Object.keys(type).length === 1) return v === null ? [] : typeErrors(type.nullable as Table, v, at);
  return typeErrors(type as Table, v, at);
}

function assertTypes(name: string, table: Table, value: unknown): void {
  const items = Array.isArray(value) ? value : [value];
  assert.ok(items.length > 0, `${name}: nothing to check`);
  assert.deepEqual(items.flatMap((item, i) => typeErrors(table, item, Array.isArray(value) ? `${name}[${i}]` : name)), []);
}

// --- The Service 15.2's entities -------------------------------------------------------------

const UserBasic: Table = {
  id: 'int', username: 'string', name: 'string', state: 'string', avatar_url: 'string|null', web_url: 'string',
  '?custom_attributes': [{ key: 'string', value: 'string' }],
};
const User: Table = {
  ...UserBasic, '?created_at': 'datetime', bio: 'string', location: 'string', public_email: 'string|null', skype: 'string',
  linkedin: 'string', twitter: 'string', discord: 'string', website_url: 'string', organization: 'string', job_title: 'string',
  pronouns: 'string|null', bot: 'bool', work_information: 'string|null', '?followers': 'int', '?following': 'int',
  '?is_followed': 'bool', local_time: 'string|null',
};
const UserPublic: Table = {
  ...User, last_sign_in_at: 'datetime|null', confirmed_at: 'datetime|null', last_activity_on: 'date|null', email: 'string',
  theme_id: 'int', color_scheme_id: 'int', projects_limit: 'int', current_sign_in_at: 'datetime|null',
  identities: [{ provider: 'string', extern_uid: 'string', '?saml_provider_id': 'int|null' }], can_create_group: 'bool',
  can_create_project: 'bool', two_factor_enabled: 'bool', external: 'bool', private_profile: 'bool', commit_email: 'string',
};
const UserWithAdmin: Table = { ...UserPublic, is_admin: 'bool', note: 'string|null', namespace_id: 'int|null' };
const UserDetailsWithAdmin: Table = {
  ...UserWithAdmin, highest_role: 'int', current_sign_in_ip: 'string|null', last_sign_in_ip: 'string|null', sign_in_count: 'int',
};
const UserStatus: Table = {
  emoji: 'string|null', message: 'string|null', availability: 'string|null', message_html: 'string|null', clear_status_at: 'datetime|null',
};
const UserPreferences: Table = { id: 'int', user_id: 'int', view_diffs_file_by_file: 'bool', show_whitespace_in_diffs: 'bool' };
const UserCounts: Table = {
  merge_requests: 'int', assigned_issues: 'int', assigned_merge_requests: 'int', review_requested_merge_requests: 'int', todos: 'int',
};
const UserActivity: Table = { username: 'string', last_activity_on: 'date|null', last_activity_at: 'date|null' };
const Membership: Table = { source_id: 'int', source_name: 'string', source_type: 'string', access_level: 'int' };
const SSHKey: Table = {
  id: 'int', title: 'string', created_at: 'datetime', expires_at: 'datetime|null', key: 'string', usage_type: 'string',
};
const GpgKey: Table = { id: 'int', key: 'string', created_at: 'datetime' };
const Email: Table = { id: 'int', email: 'string', confirmed_at: 'datetime|null' };
const PersonalAccessToken: Table = {
  id: 'int', name: 'string', revoked: 'bool', created_at: 'datetime', scopes: ['string'], user_id: 'int', last_used_at: 'datetime|null',
  active: 'bool', expires_at: 'date|null',
};
const ImpersonationTokenWithToken: Table = { ...PersonalAccessToken, impersonation: 'bool', token: 'string' };
const ResourceAccessTokenWithToken: Table = { ...PersonalAccessToken, access_level: 'int', token: 'string' };

const NamespaceBasic: Table = {
  id: 'int', name: 'string', path: 'string', kind: 'string', full_path: 'string', parent_id: 'int|null', avatar_url: 'string|null',
  web_url: 'string',
};
const Namespace: Table = { ...NamespaceBasic, '?members_count_with_descendants': 'int' };
const SharedWithGroup: Table = {
  group_id: 'int', group_name: 'string', group_full_path: 'string', group_access_level: 'int', expires_at: 'date|null',
};
const ProjectIdentity: Table = {
  id: 'int', description: 'string|null', name: 'string', name_with_namespace: 'string', path: 'string', path_with_namespace: 'string',
  created_at: 'datetime',
};
const BasicProjectDetails: Table = {
  ...ProjectIdentity, '?default_branch': 'string|null', tag_list: ['string'], topics: ['string'], ssh_url_to_repo: 'string',
  http_url_to_repo: 'string', web_url: 'string', readme_url: 'string|null', forks_count: 'int', avatar_url: 'string|null',
  star_count: 'int', last_activity_at: 'datetime', namespace: NamespaceBasic,
};
const MemberAccess: Table = { access_level: 'int', notification_level: 'int|null' };
const Project: Table = {
  ...BasicProjectDetails,
  _links: {
    self: 'string', issues: 'string', merge_requests: 'string', repo_branches: 'string', labels: 'string', events: 'string',
    members: 'string',
  },
  packages_enabled: 'bool', empty_repo: 'bool', archived: 'bool', visibility: 'string', '?owner': UserBasic,
  resolve_outdated_diff_discussions: 'bool',
  container_expiration_policy: {
    cadence: 'string', enabled: 'bool', keep_n: 'int|null', older_than: 'string|null', name_regex: 'string|null',
    name_regex_keep: 'string|null', next_run_at: 'datetime|null',
  },
  issues_enabled: 'bool', merge_requests_enabled: 'bool', wiki_enabled: 'bool', jobs_enabled: 'bool', snippets_enabled: 'bool',
  container_registry_enabled: 'bool', service_desk_enabled: 'bool', service_desk_address: 'string|null',
  can_create_merge_request_in: 'bool',
  issues_access_level: 'string', repository_access_level: 'string', merge_requests_access_level: 'string', forking_access_level: 'string',
  wiki_access_level: 'string', builds_access_level: 'string', snippets_access_level: 'string', pages_access_level: 'string',
  operations_access_level: 'string', analytics_access_level: 'string', container_registry_access_level: 'string', security_and_compliance_access_level: 'string',
  emails_disabled: 'bool|null', shared_runners_enabled: 'bool', group_runners_enabled: 'bool', lfs_enabled: 'bool', creator_id: 'int|null',
  import_status: 'string', '?import_error': 'string|null', open_issues_count: 'int', '?runners_token': 'string|null',
  ci_default_git_depth: 'int', ci_forward_deployment_enabled: 'bool', ci_job_token_scope_enabled: 'bool', ci_separated_caches: 'bool',
  public_jobs: 'bool', '?build_git_strategy': 'string', build_timeout: 'int', auto_cancel_pending_pipelines: 'string',
  '?ci_config_path': 'string|null',
  shared_with_groups: [SharedWithGroup],
  only_allow_merge_if_pipeline_succeeds: 'bool', allow_merge_on_skipped_pipeline: 'bool|null', restrict_user_defined_variables: 'bool',
  request_access_enabled: 'bool', only_allow_merge_if_all_discussions_are_resolved: 'bool', remove_source_branch_after_merge: 'bool|null',
  printing_merge_request_link_enabled: 'bool', merge_method: 'string', squash_option: 'string', suggestion_commit_message: 'string|null',
  merge_commit_template: 'string|null', squash_commit_template: 'string|null', auto_devops_enabled: 'bool',
  auto_devops_deploy_strategy: 'string', autoclose_referenced_issues: 'bool', '?repository_storage': 'string', keep_latest_artifact: 'bool',
  updated_at: 'datetime',
};
const ProjectWithAccess: Table = {
  ...Project, permissions: { project_access: { nullable: MemberAccess }, group_access: { nullable: MemberAccess } },
};
const Group: Table = {
  id: 'int', web_url: 'string', name: 'string', path: 'string', description: 'string', visibility: 'string',
  project_creation_level: 'string', subgroup_creation_level: 'string', avatar_url: 'string|null', full_name: 'string', full_path: 'string',
  created_at: 'datetime', parent_id: 'int|null', '?repository_storage': 'string|null',
};
const GroupDetail: Table = {
  ...Group,
  shared_with_groups: [SharedWithGroup],
  '?runners_token': 'string|null', '?prevent_sharing_groups_outside_hierarchy': 'bool', projects: [Project], shared_projects: [Project],
};
const Member: Table = {
  ...UserBasic, access_level: 'int', created_at: 'datetime', '?created_by': UserBasic, expires_at: 'date|null', membership_state: 'string',
};

const Commit: Table = {
  id: 'string', short_id: 'string', created_at: 'datetime', parent_ids: ['string'], title: 'string', message: 'string',
  author_name: 'string', author_email: 'string', authored_date: 'datetime', committer_name: 'string', committer_email: 'string',
  committed_date: 'datetime', trailers: 'object', web_url: 'string', '?stats': { additions: 'int', deletions: 'int', total: 'int' },
};
const PipelineBasic: Table = {
  id: 'int', iid: 'int', project_id: 'int', sha: 'string', ref: 'string', status: 'string', source: 'string', created_at: 'datetime',
  updated_at: 'datetime', web_url: 'string',
};
const CommitDetail: Table = { ...Commit, status: 'string|null', project_id: 'int', last_pipeline: { nullable: PipelineBasic } };
const Branch: Table = {
  name: 'string', commit: Commit, merged: 'bool', protected: 'bool', developers_can_push: 'bool', developers_can_merge: 'bool',
  can_push: 'bool', default: 'bool', web_url: 'string',
};
const TagRelease: Table = { tag_name: 'string', description: 'string|null' };
const Tag: Table = {
  name: 'string', message: 'string|null', target: 'string', commit: Commit, release: { nullable: TagRelease }, protected: 'bool',
};
const ReleaseLink: Table = { id: 'int', name: 'string', url: 'string', direct_asset_url: 'string', external: 'bool', link_type: 'string' };
const Release: Table = {
  name: 'string|null', '?tag_name': 'string', description: 'string|null', '?description_html': 'string', created_at: 'datetime',
  released_at: 'datetime', '?author': UserBasic, '?commit': { nullable: Commit }, upcoming_release: 'bool', '?milestones': ['object'],
  '?commit_path': 'string', '?tag_path': 'string',
  assets: { count: 'int', '?sources': [{ format: 'string', url: 'string' }], links: [ReleaseLink] },
  '?evidences': [{ sha: 'string', filepath: 'string', collected_at: 'datetime' }],
  _links: {
    self: 'string', '?opened_merge_requests_url': 'string', '?merged_merge_requests_url': 'string',
    '?closed_merge_requests_url': 'string', '?opened_issues_url': 'string', '?closed_issues_url': 'string', '?edit_url': 'string',
  },
};
const TreeObject: Table = { id: 'string', name: 'string', type: 'string', path: 'string', mode: 'string' };
const RepositoryFile: Table = {
  file_name: 'string', file_path: 'string', size: 'int', encoding: 'string', content_sha256: 'string', ref: 'string', blob_id: 'string',
  commit_id: 'string', last_commit_id: 'string', execute_filemode: 'bool', content: 'string',
};

const Pipeline: Table = {
  ...PipelineBasic, before_sha: 'string', tag: 'bool', yaml_errors: 'string|null', user: { nullable: UserBasic },
  started_at: 'datetime|null', finished_at: 'datetime|null', committed_at: 'datetime|null',
  // Whole seconds: integer columns of the Service (go-gitlab: int).
  duration: 'int|null', queued_duration: 'int|null',
  // Ci::Pipeline#coverage is `'%.2f' % mean` (go-gitlab: string).
  coverage: 'string|null',
  // workflow:name (issue 28 item 4; the Service's Pipeline entity gained `name` with the keyword).
  name: 'string|null',
  detailed_status: {
    icon: 'string', text: 'string', label: 'string', group: 'string', tooltip: 'string', has_details: 'bool', details_path: 'string',
    illustration: 'null|object', favicon: 'string',
  },
};
const Runner: Table = {
  id: 'int', description: 'string|null', ip_address: 'string|null', active: 'bool', paused: 'bool', is_shared: 'bool',
  runner_type: 'string', name: 'string|null', online: 'bool|null', status: 'string',
};
const RunnerDetails: Table = {
  ...Runner, tag_list: ['string'], run_untagged: 'bool', locked: 'bool', maximum_timeout: 'int|null', access_level: 'string',
  version: 'string|null', revision: 'string|null', platform: 'string|null', architecture: 'string|null', contacted_at: 'datetime|null',
  maintenance_note: 'string|null',
  projects: [{ id: 'int', name: 'string', name_with_namespace: 'string', path: 'string', path_with_namespace: 'string' }],
  groups: [{ id: 'int', web_url: 'string', name: 'string' }],
};
const JobUser: Table = { ...User, created_at: 'datetime' };
const JobBasic: Table = {
  id: 'int', status: 'string', stage: 'string', name: 'string', ref: 'string', tag: 'bool', coverage: 'float|null', allow_failure: 'bool',
  created_at: 'datetime', started_at: 'datetime|null', finished_at: 'datetime|null', erased_at: 'datetime|null',
  // Seconds with their fraction, as the Service's floats (go-gitlab: float64).
  duration: 'float|null', queued_duration: 'float|null',
  user: { nullable: JobUser }, commit: Commit, pipeline: PipelineBasic, '?failure_reason': 'string', web_url: 'string',
  project: { ci_job_token_scope_enabled: 'bool' },
};
const Job: Table = {
  ...JobBasic, '?artifacts_file': { filename: 'string', size: 'int' },
  artifacts: [{ file_type: 'string', size: 'int', filename: 'string', file_format: 'string|null' }], runner: { nullable: Runner },
  artifacts_expire_at: 'datetime|null', tag_list: ['string'], '?download_url': 'null',
};
const Bridge: Table = { ...JobBasic, downstream_pipeline: { nullable: PipelineBasic } };
const Variable: Table = {
  variable_type: 'string', key: 'string', value: 'string', protected: 'bool', masked: 'bool', raw: 'bool', environment_scope: 'string',
};
const { environment_scope: _scope, ...InstanceVariable } = Variable;
const PipelineVariable: Table = { variable_type: 'string', key: 'string', value: 'string' };
const Trigger: Table = {
  id: 'int', token: 'string', description: 'string', created_at: 'datetime', updated_at: 'datetime', last_used: 'datetime|null',
  owner: { nullable: UserBasic },
};
const Lint: Table = {
  valid: 'bool', errors: ['string'], warnings: ['string'], merged_yaml: 'string|null',
  '?jobs': [{
    name: 'string', stage: 'string', before_script: ['string'], script: ['string'], after_script: ['string'], tag_list: ['string'],
    environment: 'string|null', when: 'string', allow_failure: 'bool', '?only': 'object', '?except': 'object',
  }],
};
const RegistrationToken: Table = { token: 'string', token_expires_at: 'datetime|null' };
const RunnerRegistration: Table = { id: 'int', token: 'string', token_expires_at: 'datetime|null' };

const Snippet: Table = {
  id: 'int', title: 'string', description: 'string|null', visibility: 'string', author: UserBasic, created_at: 'datetime',
  updated_at: 'datetime', project_id: 'int|null', web_url: 'string', raw_url: 'string', ssh_url_to_repo: 'string',
  http_url_to_repo: 'string', file_name: 'string', files: [{ path: 'string', raw_url: 'string' }], '?repository_storage': 'string',
};
const ProjectRepositoryStorageMove: Table = {
  id: 'int', created_at: 'datetime', state: 'string', source_storage_name: 'string', destination_storage_name: 'string',
  error_message: 'string|null', project: { nullable: ProjectIdentity },
};
const AuditEvent: Table = {
  id: 'int', author_id: 'int', entity_id: 'int', entity_type: 'string', details: 'object', created_at: 'datetime',
};
const ApplicationWithSecret: Table = {
  id: 'int', application_id: 'string', application_name: 'string', callback_url: 'string', confidential: 'bool', secret: 'string',
};
/**
 * ApplicationSetting: every setting the catalogue declares from the Service 15.2's settings API
 * (its Grape type and whether it may be null), typed here from each declaration, but the secret
 * keys; then the legacy names the Service still answers.
 */
function jsonTypeOf(decl: SettingDecl): FieldType {
  switch (decl.type) {
    case 'boolean': return 'bool';
    case 'integer': return decl.nullable ? 'int|null' : 'int';
    case 'float': return 'float';
    case 'string': return 'string|null';
    case 'datetime': return 'datetime|null';
    case 'strings': case 'visibilities': return ['string'];
    case 'visibility': return 'string';
    case 'weights': return 'object';
  }
}
const ApplicationSetting: Table = {
  id: 'int', performance_bar_allowed_group_id: 'int|null',
  ...Object.fromEntries(Object.entries(CATALOGUE as Record<string, SettingDecl>)
    .filter(([name, decl]) => !decl.secret && name !== 'performance_bar_allowed_group_path')
    .map(([name, decl]) => [name, jsonTypeOf(decl)])),
  repository_storages: ['string'], password_authentication_enabled: 'bool', signin_enabled: 'bool',
  allow_local_requests_from_hooks_and_services: 'bool', asset_proxy_whitelist: ['string'], throttle_unauthenticated_web_enabled: 'bool',
  throttle_unauthenticated_web_requests_per_period: 'int', throttle_unauthenticated_web_period_in_seconds: 'int',
  user_email_lookup_limit: 'int',
};
const Version: Table = { version: 'string', revision: 'string' };

/** The job payload of POST /jobs/request, as gitlab-runner's JobResponse decodes it (the fields it types). */
const JobRequest: Table = {
  id: 'int', token: 'string', allow_git_fetch: 'bool',
  job_info: { id: 'int', name: 'string', stage: 'string', project_id: 'int', project_name: 'string', time_in_queue_seconds: 'int' },
  git_info: {
    repo_url: 'string', ref: 'string', sha: 'string', before_sha: 'string', ref_type: 'string', refspecs: ['string'], depth: 'int',
  },
  runner_info: { timeout: 'int', runner_session_url: 'string|null' },
  variables: [{ key: 'string', value: 'string', public: 'bool', masked: 'bool', '?file': 'bool', '?raw': 'bool' }],
  steps: [{ name: 'string', script: ['string'], timeout: 'int', when: 'string', allow_failure: 'bool' }],
  image: 'object|null', services: ['object'], artifacts: ['object'], cache: ['object'], credentials: ['object'],
  dependencies: [{ id: 'int', name: 'string', token: 'string', '?artifacts_file': { filename: 'string', size: 'int' } }],
  features: { trace_sections: 'bool', failure_reasons: ['string'] }, job_age: 'int',
};

// --- Serving them ----------------------------------------------------------------------------

const CONFIG = `
build:
  stage: build
  script: make
  tags: [docker]
  coverage: '/Coverage: (\\d+\\.\\d+)%/'
later:
  stage: test
  script: make test
  variables: { MODE: test }
child:
  stage: test
  trigger:
    include: child.yml
`;

describe('entity types as served', () => {
  let t: TestApp;
  let shards: Shards;
  let alice: UserRow;
  let aliceToken: string;
  let p: CiProject;
  let pipelineId: number;
  let job: JobPayload;
  let runner: TestRunner;

  const api = async (method: 'GET' | 'POST' | 'PUT', url: string, token?: string, payload?: object, status?: number) => {
    const res = await t.request({ method, url: `/api/v4${url}`, ...(token ? { token } : {}), ...(payload ? { payload } : {}) });
    assert.equal(res.statusCode, status ?? (method === 'POST' ? 201 : 200), `${method} ${url}: ${res.body}`);
    return res.json();
  };

  before(async () => {
    shards = await makeShards(['default', 'spare']);
    t = await startTestApp({ KILN_RUNNER_REGISTRATION_TOKEN: REGISTRATION_TOKEN, KILN_STORAGES: shards.env });
    alice = await createUser(t.db);
    aliceToken = await createToken(t.db, alice, { scopes: ['api'] });
    p = await createCiProject(t, { owner: alice });
    await pushFiles(t, p, { '.gitlab-ci.yml': CONFIG, 'child.yml': 'inner:\n  script: echo\n', 'README.md': '# readme\n' });
    pipelineId = (await createPipeline(t, p, 'main', p.ownerToken)).id;
    runner = await TestRunner.register(t, { tags: ['docker'] });
    job = await runner.requestJob();
    await runner.appendTrace(job, 'Coverage: 91.5%\n');
    await runner.update(job, 'success');
  });
  after(async () => {
    await t.close();
    await shards.remove();
  });

  it('users, their keys, emails, tokens, status, preferences, counts and memberships', async () => {
    assertTypes('UserBasic', UserBasic, await api('GET', '/users', aliceToken));
    assertTypes('User', User, await api('GET', `/users/${alice.id}`, aliceToken));
    assertTypes('UserPublic', UserPublic, await api('GET', '/user', aliceToken));
    assertTypes('UserWithAdmin', UserWithAdmin, await api('GET', '/users', ROOT_TOKEN));
    assertTypes('UserDetailsWithAdmin', UserDetailsWithAdmin, await api('GET', `/users/${alice.id}`, ROOT_TOKEN));
    await api('PUT', '/user/status', aliceToken, { emoji: 'coffee', message: 'brewing', clear_status_after: '8_hours' });
    assertTypes('UserStatus', UserStatus, await api('GET', '/user/status', aliceToken));
    assertTypes('UserPreferences', UserPreferences, await api('GET', '/user/preferences', aliceToken));
    assertTypes('UserCounts', UserCounts, await api('GET', '/user_counts', aliceToken));
    assertTypes('UserActivity', UserActivity, await api('GET', '/user/activities', ROOT_TOKEN));
    assertTypes('Membership', Membership, await api('GET', `/users/${alice.id}/memberships`, ROOT_TOKEN));
    assertTypes('SSHKey', SSHKey, await api('POST', '/user/keys', aliceToken, { title: 'laptop', key: sshPublicKey() }));
    assertTypes('GpgKey', GpgKey, await api('POST', '/user/gpg_keys', aliceToken, { key: (await gpgPublicKey([alice.email])).armored }));
    assertTypes('Email', Email, await api('POST', '/user/emails', aliceToken, { email: `other-${alice.id}@example.com` }));
    assertTypes('PersonalAccessToken', PersonalAccessToken, await api('GET', '/personal_access_tokens', aliceToken));
    const impersonation = await api('POST', `/users/${alice.id}/impersonation_tokens`, ROOT_TOKEN, {
      name: 'i', scopes: ['api'], expires_at: '2099-01-01',
    });
    assertTypes('ImpersonationTokenWithToken', ImpersonationTokenWithToken, impersonation);
  });

  it('projects, groups, namespaces and members', async () => {
    const pub = await api('POST', '/projects', aliceToken, { name: 'Public', visibility: 'public', initialize_with_readme: true });
    assertTypes('Project (create)', Project, pub);
    assertTypes('ProjectWithAccess', ProjectWithAccess, await api('GET', `/projects/${p.project.id}`, aliceToken));
    assertTypes('ProjectWithAccess[]', ProjectWithAccess, await api('GET', '/projects', aliceToken));
    assertTypes('ProjectWithAccess[] (administrator)', ProjectWithAccess, await api('GET', '/projects', ROOT_TOKEN));
    assertTypes('BasicProjectDetails', BasicProjectDetails, await api('GET', `/projects/${pub.id}`));
    assertTypes('BasicProjectDetails[]', BasicProjectDetails, await api('GET', '/projects?simple=true', aliceToken));
    assertTypes('Project (archive)', Project, await api('POST', `/projects/${pub.id}/archive`, aliceToken));
    const group = await api('POST', '/groups', ROOT_TOKEN, { name: 'Types', path: 'types' });
    assertTypes('Group', Group, group);
    await api('POST', '/projects', ROOT_TOKEN, { name: 'Grouped', namespace_id: group.id });
    assertTypes('GroupDetail', GroupDetail, await api('GET', `/groups/${group.id}`, ROOT_TOKEN));
    assertTypes('Group[]', Group, await api('GET', '/groups', ROOT_TOKEN));
    assertTypes('Project[] (group)', Project, await api('GET', `/groups/${group.id}/projects`, ROOT_TOKEN));
    assertTypes('Namespace[]', Namespace, await api('GET', '/namespaces', ROOT_TOKEN));
    assertTypes('Member[]', Member, await api('GET', `/projects/${p.project.id}/members`, aliceToken));
    const token = await api('POST', `/projects/${p.project.id}/access_tokens`, aliceToken, {
      name: 'bot', scopes: ['api'], expires_at: '2099-01-01',
    });
    assertTypes('ResourceAccessTokenWithToken', ResourceAccessTokenWithToken, token);
  });

  it('repository content: commits, branches, tags, tree and files', async () => {
    const base = `/projects/${p.project.id}/repository`;
    assertTypes('Commit[]', Commit, await api('GET', `${base}/commits`, aliceToken));
    assertTypes('CommitDetail', CommitDetail, await api('GET', `${base}/commits/main`, aliceToken));
    assertTypes('Branch[]', Branch, await api('GET', `${base}/branches`, aliceToken));
    assertTypes('Tag', Tag, await api('POST', `${base}/tags`, aliceToken, { tag_name: 'v1', ref: 'main', message: 'first' }));
    assertTypes('Release', Release, await api('POST', `/projects/${p.project.id}/releases`, aliceToken, {
      tag_name: 'v1', description: 'notes', assets: { links: [{ name: 'bin', url: 'https://example.com/bin', filepath: '/bin/app' }] },
    }));
    assertTypes('Tag[]', Tag, await api('GET', `${base}/tags`, aliceToken));
    assertTypes('TreeObject[]', TreeObject, await api('GET', `${base}/tree`, aliceToken));
    assertTypes('RepositoryFile', RepositoryFile, await api('GET', `${base}/files/README.md?ref=main`, aliceToken));
  });

  it('pipelines, jobs, bridges, runners, variables, triggers and lint', async () => {
    const base = `/projects/${p.project.id}`;
    assertTypes('PipelineBasic[]', PipelineBasic, await api('GET', `${base}/pipelines`, aliceToken));
    const later = await runner.requestJob();
    await runner.update(later, 'failed', 'script_failure');
    const pipeline = await api('GET', `${base}/pipelines/${pipelineId}`, aliceToken);
    assertTypes('Pipeline', Pipeline, pipeline);
    assert.equal(pipeline.coverage, '91.50');
    assertTypes('Job', Job, await api('GET', `${base}/jobs/${job.id}`, aliceToken));
    assertTypes('Job[]', Job, await api('GET', `${base}/jobs`, aliceToken));
    assertTypes('Bridge[]', Bridge, await api('GET', `${base}/pipelines/${pipelineId}/bridges`, aliceToken));
    assertTypes('Job (retry)', Job, await api('POST', `${base}/jobs/${later.id}/retry`, aliceToken));
    assertTypes('Pipeline (retry)', Pipeline, await api('POST', `${base}/pipelines/${pipelineId}/retry`, aliceToken));
    assertTypes('Runner[]', Runner, await api('GET', '/runners/all', ROOT_TOKEN));
    assertTypes('RunnerDetails', RunnerDetails, await api('GET', `/runners/${runner.id}`, ROOT_TOKEN));
    assertTypes('RegistrationToken', RegistrationToken, await api('POST', `${base}/runners/reset_registration_token`, aliceToken));
    const registered = await t.request({
      method: 'POST', url: '/api/v4/runners', payload: { token: REGISTRATION_TOKEN, description: 'types' },
    });
    assertTypes('RunnerRegistration', RunnerRegistration, registered.json());
    assertTypes('Variable', Variable, await api('POST', `${base}/variables`, aliceToken, { key: 'DEPLOY', value: 'yes' }));
    assertTypes('InstanceVariable', InstanceVariable, await api('POST', '/admin/ci/variables', ROOT_TOKEN, { key: 'GLOBAL', value: 'g' }));
    const withVariables = await api('POST', `${base}/pipeline?ref=main`, aliceToken, { variables: [{ key: 'EXTRA', value: '1' }] });
    assertTypes('Pipeline (create)', Pipeline, withVariables);
    assertTypes('PipelineVariable[]', PipelineVariable, await api('GET', `${base}/pipelines/${withVariables.id}/variables`, aliceToken));
    assertTypes('Trigger', Trigger, await api('POST', `${base}/triggers`, aliceToken, { description: 'deploys' }));
    assertTypes('Lint', Lint, await api('POST', `${base}/ci/lint`, aliceToken, { content: CONFIG, include_jobs: true }, 200));
    const next = await runner.requestJob();
    const request = await t.request({ method: 'GET', url: '/api/v4/job', headers: { 'job-token': next.token } });
    assertTypes('Job (job token)', Job, request.json());
    assertTypes('JobRequest', JobRequest, next);
  });

  it('snippets, storage moves, audit events, applications, settings and version', async () => {
    const snippet = await api('POST', '/snippets', aliceToken, { title: 'a', file_name: 'a.txt', content: 'a', visibility: 'public' });
    assertTypes('PersonalSnippet', Snippet, snippet);
    assertTypes('PersonalSnippetWithAdmin', Snippet, await api('GET', `/snippets/${snippet.id}`, ROOT_TOKEN));
    const move = await api('POST', `/projects/${p.project.id}/repository_storage_moves`, ROOT_TOKEN, { destination_storage_name: 'spare' });
    assertTypes('ProjectRepositoryStorageMove', ProjectRepositoryStorageMove, move);
    assertTypes('AuditEvent[]', AuditEvent, await api('GET', '/audit_events', ROOT_TOKEN));
    const application = await api('POST', '/applications', ROOT_TOKEN, {
      name: 'app', redirect_uri: 'https://example.com/cb', scopes: 'api',
    });
    assertTypes('ApplicationWithSecret', ApplicationWithSecret, application);
    assertTypes('ApplicationSetting', ApplicationSetting, await api('GET', '/application/settings', ROOT_TOKEN));
    assertTypes('Version', Version, await api('GET', '/version', aliceToken));
  });
});
