/**
 * `parallel: N` and `parallel:matrix` (the Service's Config::Normalizer): a job becomes N jobs
 * named `name 1/N` … `name N/N`, or one job per matrix combination named `name: [v1, v2]` with
 * those values as job variables (each matrix entry's keys multiplied in order, the first key
 * varying slowest). `needs:` and `dependencies:` on a parallel job's name mean all its copies.
 * The keyword itself is read and checked in parallel.ts.
 */
import { ConfigError } from './config-error.ts';
import type { JobSpec } from './job-entry.ts';

function combinations(entry: Array<[string, string[]]>): Array<Array<[string, string]>> {
  let out: Array<Array<[string, string]>> = [[]];
  for (const [key, values] of entry) {
    out = out.flatMap((prefix) => values.map((v) => [...prefix, [key, v] as [string, string]]));
  }
  return out;
}

/** Each parallel job replaced by its copies; needs and dependencies pointing at it follow. */
export function expandParallel(jobs: JobSpec[], maxJobs = Infinity): JobSpec[] {
  const copies = new Map<string, string[]>();
  const out: JobSpec[] = [];
  for (const job of jobs) {
    // Stop as soon as the limit is passed, before the copies of thousands of jobs exist.
    checkJobCount(out.length + 1, maxJobs);
    if (!job.parallel) { out.push(job); continue; }
    const made: JobSpec[] = [];
    if ('total' in job.parallel) {
      const total = job.parallel.total;
      for (let i = 1; i <= total; i++) made.push({ ...job, name: `${job.name} ${i}/${total}`, node: { index: i, total }, parallel: null });
    } else {
      const combos = job.parallel.matrix.flatMap(combinations);
      combos.forEach((combo, i) => {
        const keys = new Set(combo.map(([k]) => k));
        made.push({
          ...job,
          name: `${job.name}: [${combo.map(([, v]) => v).join(', ')}]`,
          variables: [...job.variables.filter((v) => !keys.has(v.key)), ...combo.map(([key, value]) => ({ key, value }))],
          ownVariables: [...job.ownVariables.filter((v) => !keys.has(v.key)), ...combo.map(([key, value]) => ({ key, value }))],
          node: { index: i + 1, total: combos.length },
          parallel: null,
        });
      });
    }
    copies.set(job.name, made.map((m) => m.name));
    out.push(...made);
  }
  if (copies.size === 0) return out;
  return out.map((job) => {
    const needsDetail = job.needsDetail?.flatMap((n) => {
      const { matrixNames, ...rest } = n;
      return (matrixNames ?? copies.get(n.name) ?? [n.name]).map((name) => ({ ...rest, name }));
    }) ?? null;
    return {
      ...job,
      needsDetail,
      needs: needsDetail?.map((n) => n.name) ?? null,
      dependencies: job.dependencies?.flatMap((n) => copies.get(n) ?? [n]) ?? null,
    };
  });
}

export function checkJobCount(count: number, max: number): void {
  if (count > max) {
    throw new ConfigError(
      `The number of jobs has exceeded the limit of ${max}. Try splitting the configuration with parent-child-pipelines.`,
    );
  }
}
