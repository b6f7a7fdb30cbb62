/**
 * CI pipeline creation (issue 14), on an in-process kiln listening on 127.0.0.1 (SQLite unless
 * TEST_DATABASE_URL / KILN_TEST_DB say otherwise):
 *
 *   create 300 jobs   POST /projects/:id/pipeline for a `.gitlab-ci.yml` of 30 jobs, each with a
 *                     10-way parallel:matrix and rules (target: under 150 ms);
 *   from components   the same 300 jobs, each of the 30 an `include: component:` of one
 *                     component project on this kiln with its own inputs (name, stage) (issue 28;
 *                     target: under 150 ms);
 *   push              `git push` of one new commit over HTTP to a project whose commit holds a
 *                     `.gitlab-ci.yml` (its pipeline is created after the push answers) and to one
 *                     without (target: within 10 %).
 *
 *   node bench/ci-pipelines.ts
 *   BENCH_ROUNDS=20 node bench/ci-pipelines.ts
 */
import { startListeningApp } from '../test/helpers/listen.ts';
import { createCiProject, pushFiles } from '../test/helpers/ci.ts';
import { pushClone, waitForPipelines } from '../test/helpers/ci-push.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);

function bigConfig(): string {
  const lines = [
    'stages: [build, test, deploy]', 'variables:', '  DEPLOY: "yes"', 'workflow:', '  rules:',
    '    - if: $CI_COMMIT_BRANCH', '',
  ];
  for (let i = 0; i < 30; i++) {
    lines.push(
      `job-${i}:`,
      `  stage: ${['build', 'test', 'deploy'][i % 3]}`,
      '  image: alpine:3.20',
      '  script: [echo $PROVIDER $ENV]',
      '  parallel:',
      '    matrix:',
      '      - PROVIDER: [aws, gcp, azure, do, hetzner]',
      '        ENV: [staging, production]',
      '  rules:',
      '    - if: $ENV == "never"',
      '      when: never',
      '    - if: \'$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH && $PROVIDER =~ /^(aws|gcp|azure|do|hetzner)$/\'',
      '    - when: manual',
      '',
    );
  }
  return lines.join('\n');
}

/** The component the 30 jobs come from: the bigConfig job, its name and stage as inputs. */
const COMPONENT = [
  'spec:', '  inputs:', '    name:', '    stage: { options: [build, test, deploy] }', '---',
  '"$[[ inputs.name ]]":', '  stage: $[[ inputs.stage ]]', '  image: alpine:3.20', '  script: [echo $PROVIDER $ENV]',
  '  parallel:', '    matrix:', '      - PROVIDER: [aws, gcp, azure, do, hetzner]', '        ENV: [staging, production]',
  '  rules:', '    - if: $ENV == "never"', '      when: never',
  '    - if: \'$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH && $PROVIDER =~ /^(aws|gcp|azure|do|hetzner)$/\'', '    - when: manual', '',
].join('\n');

function componentConfig(componentPath: string): string {
  const lines = [
    'stages: [build, test, deploy]', 'variables:', '  DEPLOY: "yes"', 'workflow:', '  rules:',
    '    - if: $CI_COMMIT_BRANCH', 'include:',
  ];
  for (let i = 0; i < 30; i++) {
    lines.push(`  - component: $CI_SERVER_FQDN/${componentPath}/matrix-job@1.0.0`, `    inputs: { name: job-${i}, stage: ${['build', 'test', 'deploy'][i % 3]} }`);
  }
  return `${lines.join('\n')}\n`;
}

function stats(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  return `median ${s[Math.floor(s.length / 2)].toFixed(1)} ms, min ${s[0].toFixed(1)} ms, max ${s[s.length - 1].toFixed(1)} ms `
    + `(${s.length} runs)`;
}

async function main(): Promise<void> {
  const t = await startListeningApp();
  try {
    const p = await createCiProject(t);
    await pushFiles(t, p, { '.gitlab-ci.yml': bigConfig() });
    const measure = async (project: typeof p) => {
      const create: number[] = [];
      for (let i = 0; i < ROUNDS + 1; i++) {
        const started = process.hrtime.bigint();
        const res = await t.request({ method: 'POST', url: `/api/v4/projects/${project.project.id}/pipeline?ref=main`, token: project.ownerToken });
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        if (res.statusCode !== 201) throw new Error(res.body);
        const jobs = await t.db.selectFrom('ci_builds').select((eb) => eb.fn.countAll<number>().as('n')).where(
          'pipeline_id', '=', (res.json() as { id: number }).id,
        ).executeTakeFirstOrThrow();
        if (Number(jobs.n) !== 300) throw new Error(`expected 300 jobs, got ${jobs.n}`);
        if (i > 0) create.push(ms); // the first run warms caches up
      }
      return stats(create);
    };
    console.log(`create a 300-job pipeline (matrix + rules): ${await measure(p)}`);
    const components = await createCiProject(t, { owner: p.owner });
    await pushFiles(t, components, { 'templates/matrix-job.yml': COMPONENT }, { tag: '1.0.0' });
    const fromComponents = await createCiProject(t, { owner: p.owner });
    await pushFiles(t, fromComponents, { '.gitlab-ci.yml': componentConfig(components.fullPath) });
    console.log(`create a 300-job pipeline, every job from a component with inputs: ${await measure(fromComponents)}`);

    const withCi = await createCiProject(t);
    const without = await createCiProject(t);
    const a = await pushClone(t.url, withCi);
    const b = await pushClone(t.url, without);
    await a.commitAndPush({ '.gitlab-ci.yml': 'build:\n  script: make\ntest:\n  script: make test\n' });
    await b.commitAndPush({ 'README.md': 'no CI here\n' });
    const pushWith: number[] = [];
    const pushWithout: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      for (const [clone, out] of [[a, pushWith], [b, pushWithout]] as const) {
        const started = process.hrtime.bigint();
        await clone.commitAndPush({ [`f${i}.txt`]: `${i}\n` });
        out.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
      // Let the push pipeline finish before the next round, so rounds do not overlap.
      await waitForPipelines(t, withCi, i + 2);
    }
    console.log(`git commit + push, project with .gitlab-ci.yml: ${stats(pushWith)}`);
    console.log(`git commit + push, project without:             ${stats(pushWithout)}`);
    await a.remove();
    await b.remove();
  } finally {
    await t.close();
  }
}

await main();
