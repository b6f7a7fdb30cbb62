/**
 * The CI/CD variables a job receives, in the Service's precedence (doc/ci/variables, "CI/CD
 * variable precedence"; Gitlab::Ci::Variables::Builder#scoped_variables): instance variables,
 * then group variables from the top-level group down to the project's own group, then project
 * variables, then the pipeline's own variables (given to POST /projects/:id/pipeline or to a
 * trigger). Later entries win for the same key once the runner applies them in order, so the
 * list is sent in that order, after the configuration's variables (runnerVariables).
 *
 * Protected variables go only to jobs on protected refs: a ref a protected branch or tag pattern
 * covers (Project#protected_for?, asked when the job is handed out, as the Service builds a job's
 * variables then). Variables scoped to environments reach the jobs of the environments their scope
 * covers (`*`, the name itself, or a wildcard like `review/*`); of two with one key and owner the
 * more specific scope comes later and so wins (HasEnvironmentScope). A job without an environment
 * gets only `*`-scoped ones.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { CiVariableRow } from '../../db/tables/ci-variables.ts';
import type { ProjectRow } from '../../db/tables/projects.ts';
import { namespacePathsById } from '../namespaces/namespaces.queries.ts';
import { pipelineVariables, variablesForJob } from './ci-variables.queries.ts';
import { scheduleVariablesOfPipeline } from '../pipeline-schedules/pipeline-schedules.queries.ts';
import { sealerFor, type Sealer } from './encryption.ts';
import type { RunnerVariable } from '../runners/predefined-variables.ts';
import { scopePrecedence } from '../environments/environment-rules.ts';
import { jobEnvironment } from '../environments/job-environment.ts';
import { isProtectedRefOf } from '../protected-refs/protected-refs.ts';

/** A variable as the runner protocol carries it (Ci::HasVariable#to_runner_variable). */
export type CollectedVariable = RunnerVariable;


function rank(row: CiVariableRow, groupDepth: Map<number, number>): number {
  return ownerRank(row, groupDepth) * 4 + scopePrecedence(row.environment_scope);
}

function ownerRank(row: CiVariableRow, groupDepth: Map<number, number>): number {
  if (row.project_id !== null) return 1_000_000;
  if (row.group_id !== null) return 1 + (groupDepth.get(row.group_id) ?? 0);
  return 0;
}

function toRunner(key: string, value: string, type: string, o: { masked?: boolean; raw?: boolean } = {}): CollectedVariable {
  return {
    key, value, public: false, masked: o.masked ?? false,
    ...(type === 'file' ? { file: true as const } : {}), ...(o.raw ? { raw: true as const } : {}),
  };
}

/** Instance, group and project variables for a ref of `project`, in precedence order. */
async function ownedVariables(
  db: Kysely<DB>, sealer: Sealer, project: ProjectRow, ref: string, tag: boolean, environment: string | null,
): Promise<CollectedVariable[]> {
  const lineage = (await namespacePathsById(db, [project.namespace_id])).get(project.namespace_id)?.lineage ?? [];
  // lineage runs from the project's namespace up to the root: the root ranks lowest.
  const groupDepth = new Map(lineage.map((id, i) => [id, lineage.length - i]));
  const rows = await variablesForJob(db, project.id, lineage, await isProtectedRefOf(db, project.id, ref, tag), environment);
  rows.sort((a, b) => rank(a, groupDepth) - rank(b, groupDepth) || a.id - b.id);
  return rows.map((r) => toRunner(r.key, sealer.open(r.encrypted_value), r.variable_type, { masked: r.masked === 1, raw: r.raw === 1 }));
}

/**
 * What POST /jobs/request adds for a job: the owners' variables, then the pipeline's own, then
 * those of the schedule that made the pipeline as they are now (Ci::Build#variables reads
 * pipeline_schedule.job_variables last).
 */
export async function collectJobVariables(
  db: Kysely<DB>, dataDir: string, job: { project_id: number; pipeline_id: number; ref: string; tag: number; options: string },
  project: ProjectRow,
): Promise<CollectedVariable[]> {
  const sealer = await sealerFor(dataDir);
  const owned = await ownedVariables(db, sealer, project, job.ref, job.tag === 1, jobEnvironment(job.options)?.name ?? null);
  const own = (await pipelineVariables(db, job.pipeline_id)).map((r) => toRunner(r.key, sealer.open(r.encrypted_value), r.variable_type));
  const scheduled = (await scheduleVariablesOfPipeline(db, job.pipeline_id))
    .map((r) => toRunner(r.key, sealer.open(r.encrypted_value), r.variable_type));
  return [...owned, ...own, ...scheduled];
}

export interface GivenVariable {
  key: string;
  value: string;
  variable_type?: string;
}

/**
 * The variables a new pipeline's configuration is evaluated with (what `rules:if` sees): the
 * owners' variables for the ref, then those given with the request, later keys winning.
 */
export async function resolvePipelineVariables(
  db: Kysely<DB>, dataDir: string, project: ProjectRow, ref: string, given: GivenVariable[],
): Promise<{ key: string; value: string }[]> {
  const owned = await ownedVariables(db, await sealerFor(dataDir), project, ref, false, null);
  const byKey = new Map<string, string>();
  for (const v of [...owned, ...given]) {
    byKey.delete(v.key);
    byKey.set(v.key, v.value);
  }
  return [...byKey].map(([key, value]) => ({ key, value }));
}
