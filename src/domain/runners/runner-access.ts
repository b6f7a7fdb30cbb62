/**
 * Who may see and change which runners (the Service's Ci::RunnerPolicy and User#ci_owned_runners,
 * 15.2): administrators every runner; Maintainers the project runners of their projects; Owners
 * the group runners of their groups (and subgroups). Instance runners belong to administrators,
 * though anyone signed in may look at one.
 */
import type { Kysely } from 'kysely';
import type { DB, UserRow } from '../../db/types.ts';
import type { RunnerRow } from '../../db/tables/ci.ts';
import { ACCESS_LEVELS } from '../permissions/access.ts';
import { authorizedGroupLevels, groupAccessLevel, projectAccessLevel } from '../members/members.queries.ts';
import { namespacePathsById } from '../namespaces/namespaces.queries.ts';
import {
  directProjectIdsAtLevel, projectIdsInNamespaces, projectNamespaces, runnerProjectIds, type RunnerScope,
} from './runners.queries.ts';

/** The runners a user owns: GET /runners lists these. */
export async function ownedRunnerScope(db: Kysely<DB>, user: UserRow): Promise<RunnerScope> {
  const groupLevels = await authorizedGroupLevels(db, user.id);
  const maintainedGroups = [...groupLevels].filter(([, level]) => level >= ACCESS_LEVELS.maintainer).map(([id]) => id);
  const ownedGroups = [...groupLevels].filter(([, level]) => level >= ACCESS_LEVELS.owner).map(([id]) => id);
  const projectIds = [...new Set([
    ...await directProjectIdsAtLevel(db, user.id, ACCESS_LEVELS.maintainer),
    ...await projectIdsInNamespaces(db, maintainedGroups),
  ])];
  return { projectIds, groupIds: ownedGroups, instance: false };
}

/** Whether the user may change (and, for non-instance runners, see) the runner. */
export async function canAdminRunner(db: Kysely<DB>, user: UserRow, runner: RunnerRow): Promise<boolean> {
  if (user.admin) return true;
  if (runner.runner_type === 'group_type' && runner.group_id !== null) {
    const lineage = (await namespacePathsById(db, [runner.group_id])).get(runner.group_id)?.lineage ?? [];
    return await groupAccessLevel(db, user.id, lineage) >= ACCESS_LEVELS.owner;
  }
  if (runner.runner_type === 'project_type') {
    const projects = await projectNamespaces(db, await runnerProjectIds(db, runner.id));
    const paths = await namespacePathsById(db, projects.map((p) => p.namespace_id));
    for (const p of projects) {
      if (await projectAccessLevel(db, user.id, p.id, paths.get(p.namespace_id)?.lineage ?? []) >= ACCESS_LEVELS.maintainer) return true;
    }
  }
  return false;
}
