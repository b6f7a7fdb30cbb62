/**
 * A job's `environment:` as its row keeps it (options.environment, with the name and URL already
 * expanded when the pipeline was created: Ci::Build#expanded_environment_name), and what it makes
 * of the job: the CI_ENVIRONMENT_* variables (Ci::Build#predefined_variables 15.2: NAME, SLUG and
 * ACTION always, URL and TIER when known, from the job's options or else its environment).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { RunnerVariable } from '../runners/predefined-variables.ts';
import { findEnvironmentByName } from './environments.queries.ts';

export interface JobEnvironment {
  name: string;
  url?: string;
  /** start (the default), prepare, verify, access or stop. */
  action: string;
  on_stop?: string;
  auto_stop_in?: string;
  deployment_tier?: string;
}

export function jobEnvironment(options: string): JobEnvironment | null {
  const parsed = JSON.parse(options) as { environment?: JobEnvironment | null };
  return parsed.environment ?? null;
}

/** A job that deploys (Ci::Build#deployment_job?): action start, said or implied. */
export const startsEnvironment = (e: JobEnvironment | null): boolean => e !== null && (e.action ?? 'start') === 'start';

export async function environmentVariables(db: Kysely<DB>, job: { project_id: number; options: string }): Promise<RunnerVariable[]> {
  const e = jobEnvironment(job.options);
  if (!e) return [];
  const row = await findEnvironmentByName(db, job.project_id, e.name);
  const out: RunnerVariable[] = [];
  const add = (key: string, value: string) => out.push({ key, value, public: true, masked: false });
  add('CI_ENVIRONMENT_NAME', e.name);
  if (row) add('CI_ENVIRONMENT_SLUG', row.slug);
  add('CI_ENVIRONMENT_ACTION', e.action ?? 'start');
  const url = e.url ?? row?.external_url ?? null;
  if (url) add('CI_ENVIRONMENT_URL', url);
  const tier = e.deployment_tier ?? row?.tier ?? null;
  if (tier) add('CI_ENVIRONMENT_TIER', tier);
  return out;
}
