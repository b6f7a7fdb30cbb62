/**
 * The status of a group of jobs (a pipeline, or the stages before a job, or a job's needs), as the
 * Service's Gitlab::Ci::Status::Composite derives it: jobs allowed to fail count as passed with
 * warnings when they failed or were canceled, and manual jobs allowed to fail do not hold anything
 * up; then the first matching rule below decides.
 */

export interface StatusOf {
  status: string;
  allow_failure: number | boolean;
}

function keyOf(j: StatusOf): string {
  if (j.allow_failure && (j.status === 'failed' || j.status === 'canceled')) return 'success_with_warnings';
  if (j.allow_failure && j.status === 'manual') return 'ignored';
  return j.status;
}

export function compositeStatus(jobs: readonly StatusOf[]): string {
  const set = new Set(jobs.map(keyOf));
  const onlyOf = (...allowed: string[]) => [...set].every((k) => allowed.includes(k));
  const anyOf = (...wanted: string[]) => wanted.some((k) => set.has(k));
  if (set.size === 0 || onlyOf('skipped', 'ignored')) return 'skipped';
  if (onlyOf('success', 'skipped', 'success_with_warnings', 'ignored')) return 'success';
  if (onlyOf('created', 'success_with_warnings', 'ignored')) return 'created';
  if (onlyOf('canceled', 'success', 'skipped', 'success_with_warnings', 'ignored')) return 'canceled';
  if (onlyOf('pending', 'created', 'skipped', 'success_with_warnings', 'ignored')) return 'pending';
  if (anyOf('running', 'pending')) return 'running';
  if (anyOf('manual')) return 'manual';
  if (anyOf('created')) return 'running';
  return 'failed';
}

export const PIPELINE_COMPLETED = ['success', 'failed', 'canceled', 'skipped'];
