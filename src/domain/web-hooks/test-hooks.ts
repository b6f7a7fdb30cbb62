/**
 * The data of a test delivery (the Service's TestHooks::ProjectService): a push built from the
 * default branch's three newest commits, the project's first pipeline, issue, comment, merge request,
 * job or release; a project lacking what the event needs is told so. System hooks are tested with the fixed project_create sample of
 * lib/api/system_hooks.rb.
 */
import type { ProjectRow } from '../../db/tables/projects.ts';
import type { CiEnv } from '../pipelines/ci-env.ts';
import { runGit } from '../repositories/git-command.ts';
import { projectRepository } from '../repositories/project-repository.ts';
import { buildPipelineData } from './pipeline-hooks.ts';
import { buildPushData } from './push-hooks.ts';
import { firstPipeline, firstRecordId } from './web-hooks.queries.ts';
import { buildObjectData } from './object-payloads.ts';
import type { ObjectKind } from './object-hooks.ts';

/** The record each trigger's sample is built from, and what the project is told when it has none. */
const RECORD_TRIGGERS: Partial<Record<TestTrigger, { table: Parameters<typeof firstRecordId>[2]; kind: ObjectKind; missing: string }>> = {
  issues_events: { table: 'issues', kind: 'issue', missing: 'Ensure the project has issues.' },
  confidential_issues_events: { table: 'issues', kind: 'issue', missing: 'Ensure the project has issues.' },
  note_events: { table: 'notes', kind: 'note', missing: 'Ensure the project has notes.' },
  confidential_note_events: { table: 'notes', kind: 'note', missing: 'Ensure the project has notes.' },
  merge_requests_events: { table: 'merge_requests', kind: 'merge_request', missing: 'Ensure the project has merge requests.' },
  job_events: { table: 'ci_builds', kind: 'job', missing: 'Ensure the project has CI jobs.' },
  releases_events: { table: 'releases', kind: 'release', missing: 'Ensure the project has releases.' },
};

export const TEST_TRIGGERS = [
  'push_events', 'tag_push_events', 'issues_events', 'confidential_issues_events', 'note_events', 'confidential_note_events',
  'merge_requests_events', 'job_events', 'pipeline_events', 'releases_events',
] as const;
export type TestTrigger = (typeof TEST_TRIGGERS)[number];

export const SYSTEM_HOOK_SAMPLE = {
  event_name: 'project_create', name: 'Ruby', path: 'ruby', project_id: 1, owner_name: 'Someone', owner_email: 'example@gitlabhq.com',
};

export type TestData = { ok: true; data: unknown } | { ok: false; message: string };

export async function testHookData(env: CiEnv, project: ProjectRow, trigger: TestTrigger, userId: number): Promise<TestData> {
  const record = RECORD_TRIGGERS[trigger];
  if (record) {
    const id = await firstRecordId(env.db, project.id, record.table);
    const built = id === undefined ? null : await buildObjectData(env, { kind: record.kind, id, projectId: project.id, userId });
    return built ? { ok: true, data: built.data } : { ok: false, message: record.missing };
  }
  if (trigger === 'pipeline_events') {
    const pipeline = await firstPipeline(env.db, project.id);
    if (!pipeline) return { ok: false, message: 'Ensure the project has CI pipelines.' };
    const data = await buildPipelineData(env, pipeline);
    return data ? { ok: true, data } : { ok: false, message: 'Ensure the project has CI pipelines.' };
  }
  const noCommit = { ok: false as const, message: 'Ensure the project has at least one commit.' };
  if (project.empty_repo === 1 || !project.default_branch) return noCommit;
  const { gitDir } = projectRepository(env.storages, project);
  const ref = `refs/heads/${project.default_branch}`;
  const { stdout, exitCode } = await runGit(['rev-list', '--max-count=3', ref, '--'], { gitDir, okExitCodes: [128] });
  const shas = exitCode === 0 ? stdout.split('\n').filter(Boolean) : [];
  if (shas.length === 0) return noCommit;
  // Push.build_sample: from the oldest of the three to the newest, on the default branch (for both push triggers).
  const data = await buildPushData(env.db, env, gitDir, project, { ref, before: shas[shas.length - 1], after: shas[0] }, userId);
  return { ok: true, data };
}
