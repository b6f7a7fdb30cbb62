/**
 * Whose artifacts a job downloads (the Service's Ci::BuildDependencies): the jobs `dependencies:`
 * names when it names any (`dependencies: []` means none); otherwise the jobs of its `needs:`
 * that keep `artifacts: true`; otherwise every job of earlier stages. Only finished builds that
 * succeeded have artifacts to give.
 */
import type { BuildRow } from '../../db/tables/ci.ts';
import type { NeedConfig } from '../ci-config/ci-config.ts';

export function dependenciesOf(job: BuildRow, jobs: BuildRow[]): BuildRow[] {
  const options = JSON.parse(job.options) as { dependencies?: string[] | null; needs?: NeedConfig[] | null };
  const candidates = jobs.filter((j) => j.type === 'build' && j.status === 'success' && j.id !== job.id);
  if (Array.isArray(options.dependencies)) {
    const names = new Set(options.dependencies);
    return candidates.filter((j) => names.has(j.name));
  }
  if (Array.isArray(options.needs)) {
    const names = new Set(options.needs.filter((n) => n.artifacts).map((n) => n.name));
    return candidates.filter((j) => names.has(j.name));
  }
  const needs = job.needs === null ? null : JSON.parse(job.needs) as string[];
  return candidates.filter((j) => (needs ? needs.includes(j.name) : j.stage_idx < job.stage_idx));
}
