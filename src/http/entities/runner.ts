/**
 * Runner entities (reference §3.3 Runner; spec deprecations: `paused` beside the deprecated
 * `active`, status as contact status): Runner for lists, RunnerDetails for one runner, and the
 * registration answer of POST /runners.
 */
import { Type, type Static } from 'typebox';
import type { RunnerRow } from '../../db/tables/ci.ts';
import { lastContact, runnerStatus } from '../../domain/runners/contacts.ts';
import { flatWords } from './serializers.ts';

const NString = Type.Union([Type.String(), Type.Null()]);

export const RunnerSchema = Type.Object({
  id: Type.Integer(),
  description: NString,
  ip_address: NString,
  active: Type.Boolean({ deprecated: true, description: 'deprecated: use paused' }),
  paused: Type.Boolean(),
  is_shared: Type.Boolean(),
  runner_type: Type.String(),
  name: NString,
  online: Type.Boolean(),
  status: Type.String(),
}, { title: 'Runner' });
export type Runner = Static<typeof RunnerSchema>;

export const RunnerDetailsSchema = Type.Object({
  ...RunnerSchema.properties,
  tag_list: Type.Array(Type.String()),
  run_untagged: Type.Boolean(),
  locked: Type.Boolean(),
  maximum_timeout: Type.Union([Type.Integer(), Type.Null()]),
  access_level: Type.String(),
  version: NString,
  revision: NString,
  platform: NString,
  architecture: NString,
  contacted_at: NString,
  maintenance_note: NString,
  projects: Type.Array(Type.Object({
    id: Type.Integer(), name: Type.String(), name_with_namespace: Type.String(), path: Type.String(), path_with_namespace: Type.String(),
  })),
  groups: Type.Array(Type.Object({ id: Type.Integer(), web_url: Type.String(), name: Type.String() })),
}, { title: 'RunnerDetails' });
export type RunnerDetails = Static<typeof RunnerDetailsSchema>;

export const RunnerRegistrationSchema = Type.Object({
  id: Type.Integer(),
  token: Type.String(),
  token_expires_at: NString,
}, { title: 'RunnerRegistrationDetails' });

export function presentRunner(r: RunnerRow, now: Date = new Date()): Runner {
  const status = runnerStatus(r, now);
  return {
    id: r.id,
    description: r.description,
    ip_address: r.ip_address,
    active: r.active === 1,
    paused: r.active !== 1,
    is_shared: r.runner_type === 'instance_type',
    runner_type: r.runner_type,
    name: r.name,
    online: status === 'online',
    status,
  };
}

/** The projects a project runner is enabled for, or the group of a group runner. */
export interface RunnerOwners {
  projects: RunnerDetails['projects'];
  groups: RunnerDetails['groups'];
}

export function presentRunnerDetails(
  r: RunnerRow, now: Date = new Date(), owners: RunnerOwners = { projects: [], groups: [] },
): RunnerDetails {
  return {
    ...presentRunner(r, now),
    tag_list: flatWords(r.tag_list),
    run_untagged: r.run_untagged === 1,
    locked: r.locked === 1,
    maximum_timeout: r.maximum_timeout,
    access_level: r.access_level,
    version: r.version,
    revision: r.revision,
    platform: r.platform,
    architecture: r.architecture,
    contacted_at: lastContact(r),
    maintenance_note: r.maintenance_note,
    // Instance runners belong to no project or group.
    projects: owners.projects,
    groups: owners.groups,
  };
}
