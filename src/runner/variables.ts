/**
 * The job's environment as the Service's runner builds it (common/variables.go): the job's
 * variables in order, later ones winning; `$NAME` and `${NAME}` inside a value expanded from the
 * ones before it unless the variable is raw; file variables written to a file whose path the
 * variable then holds; and the variables only the runner knows (CI_PROJECT_DIR, CI_BUILDS_DIR,
 * CI_CONCURRENT_ID, CI_RUNNER_*).
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { JobVariable } from './job-response.ts';
import { RUNNER_VERSION } from './api.ts';

export function expand(value: string, vars: Map<string, string>): string {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (m, braced?: string, bare?: string) => {
    if (m === '$$') return '$';
    return vars.get((braced ?? bare)!) ?? '';
  });
}

export interface JobEnvironment {
  /** name → value (file variables: the file's path). */
  vars: Map<string, string>;
  /** Values never to be shown: masked variables (and the job token). */
  masked: string[];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export async function buildEnvironment(o: {
  variables: JobVariable[]; jobToken: string; projectDir: string; buildsDir: string; tmpDir: string; slot: number; runnerToken: string;
}): Promise<JobEnvironment> {
  const vars = new Map<string, string>();
  const masked = [o.jobToken];
  const runnerVars: JobVariable[] = [
    { key: 'CI_PROJECT_DIR', value: o.projectDir }, { key: 'CI_BUILDS_DIR', value: o.buildsDir },
    { key: 'CI_CONCURRENT_ID', value: String(o.slot) }, { key: 'CI_CONCURRENT_PROJECT_ID', value: String(o.slot) },
    { key: 'CI_RUNNER_VERSION', value: RUNNER_VERSION }, { key: 'CI_RUNNER_REVISION', value: 'kiln' },
    { key: 'CI_RUNNER_EXECUTABLE_ARCH', value: `${os.platform()}/${os.arch()}` },
    { key: 'CI_RUNNER_SHORT_TOKEN', value: o.runnerToken.slice(0, 8) }, { key: 'CI_SHARED_ENVIRONMENT', value: 'true' },
  ];
  for (const v of [...o.variables, ...runnerVars]) {
    if (typeof v.key !== 'string' || !NAME.test(v.key) || typeof v.value !== 'string') continue;
    let value = v.raw ? v.value : expand(v.value, vars);
    if (v.masked && value.length > 0) masked.push(value);
    if (v.file) {
      await fsp.mkdir(o.tmpDir, { recursive: true, mode: 0o700 });
      const file = path.join(o.tmpDir, `${v.key}`);
      await fsp.writeFile(file, value, { mode: 0o600 });
      value = file;
    }
    vars.set(v.key, value);
  }
  return { vars, masked };
}

/** The process environment of the job: the runner's own, then the job's variables. */
export function processEnv(vars: Map<string, string>, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of vars) env[k] = v;
  return { ...env, ...extra };
}
