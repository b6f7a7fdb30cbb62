import { VARIABLES, type Config, type Env } from './schema.ts';

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`kiln cannot start; the configuration has ${problems.length} problem(s):\n` +
      problems.map((p) => `  - ${p}`).join('\n'));
    this.problems = problems;
  }
}

/**
 * Reads every variable of `VARIABLES` from `env` once. Empty strings count as unset. Throws a
 * ConfigError listing every problem; the returned object is frozen.
 */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const partial: Partial<Config> = {};
  for (const v of VARIABLES) {
    const raw = env[v.name];
    if (raw === undefined || raw === '') {
      (partial as Record<string, unknown>)[v.key] = v.default(env, partial);
      continue;
    }
    const parsed = v.parse(raw);
    if (parsed !== null && typeof parsed === 'object' && 'problem' in parsed) {
      problems.push(`${v.name} ${parsed.problem} (${v.doc})`);
      continue;
    }
    (partial as Record<string, unknown>)[v.key] = parsed;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(partial as Config);
}
