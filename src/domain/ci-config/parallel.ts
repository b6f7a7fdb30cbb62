/**
 * The `parallel:` keyword as written (Entry::Product::Parallel): `parallel: N` or
 * `parallel:matrix`, checked but not yet expanded (expand.ts makes the copies). Kept apart from
 * expand.ts so that job-entry.ts can read the keyword while expand.ts works on its JobSpecs.
 */
import { ConfigError, isHash } from './config-error.ts';

/** Jobs one `parallel:` may make (Entry::Product::Parallel). */
export const MAX_PARALLEL = 200;

export type ParallelSpec = { total: number } | { matrix: Array<Array<[string, string[]]>> };

export function parseParallel(value: unknown, where: string): ParallelSpec | null {
  if (value === undefined || value === null) return null;
  const at = `${where}:parallel`;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 1 || value > MAX_PARALLEL) {
      throw new ConfigError(`${at} config must be less than or equal to ${MAX_PARALLEL} and greater than or equal to 1`);
    }
    return { total: value };
  }
  if (!isHash(value) || !Array.isArray(value.matrix) || Object.keys(value).length !== 1) {
    throw new ConfigError(`${at} should be an integer or a hash`);
  }
  const matrix = value.matrix.map((entry) => {
    if (!isHash(entry) || Object.keys(entry).length === 0) throw new ConfigError(`${at}:matrix config should be an array of hashes`);
    return Object.entries(entry).map(([k, v]): [string, string[]] => {
      const list = Array.isArray(v) ? v : [v];
      if (list.length === 0 || !list.every((x) => typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean')) {
        throw new ConfigError(`${at}:matrix:variables config should be a hash of key value pairs, value can be an array`);
      }
      return [k, list.map(String)];
    });
  });
  let total = 0;
  for (const entry of matrix) total += entry.reduce((n, [, vals]) => n * vals.length, 1);
  if (total > MAX_PARALLEL) throw new ConfigError(`${at}:matrix config generates too many jobs (maximum is ${MAX_PARALLEL})`);
  return { matrix };
}
