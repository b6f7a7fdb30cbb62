/**
 * `include: component:` called directly with in-memory projects (issue 28, item 2): the address
 * on kiln's own host, the two file layouts, versions by tag, SHA, branch, `~latest` and the
 * `1`/`1.2` shorthands over released semantic versions, inputs, the component project's own
 * local includes, and the include limit. The refusals are in error-cases.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseComponentAddress, releasedVersion } from '../../../src/domain/ci-config/components.ts';
import { load, MEMORY_FQDN, type World } from './memory.ts';

const H = MEMORY_FQDN;
const J = (name: string) => `${name}: { script: x }\n`;
const SHA = 'a'.repeat(40);

const WORLD: World = {
  projects: {
    'grp/sub/comps': {
      defaultBranch: 'main',
      refs: {
        main: {
          'templates/build.yml': J('build-main'),
          'templates/deploy/template.yml': `include: templates/deploy/common.yml\n${J('deploy-main')}`,
          'templates/deploy/common.yml': J('deploy-common'),
          'templates/lint.yml': 'spec:\n  inputs:\n    stage: { default: test }\n    tool: { options: [ruff, flake8] }\n---\n'
            + '"lint-$[[ inputs.tool ]]": { stage: "$[[ inputs.stage ]]", script: "$[[ inputs.tool ]] ." }\n',
        },
        '1.0.0': { 'templates/build.yml': J('build-1.0.0') },
        '1.2.0': { 'templates/build.yml': J('build-1.2.0') },
        '1.10.1': { 'templates/build.yml': J('build-1.10.1') },
        '2.0.0-rc1': { 'templates/build.yml': J('build-2.0.0-rc1') },
        '0.9.0': { 'templates/build.yml': J('build-0.9.0') },
        [SHA]: { 'templates/build.yml': J('build-sha') },
      },
    },
  },
  releases: { 'grp/sub/comps': ['1.2.0', '2.0.0-rc1', '1.0.0', '1.10.1', 'v3.0.0', '0.9.0'] },
};

async function jobs(yaml: string, world: World = WORLD): Promise<string[]> {
  return (await load(yaml, world)).jobs.map((j) => j.name);
}

describe('include:component', () => {
  it('parses an address: the last slash parts project and component', () => {
    assert.deepEqual(parseComponentAddress(`${H}/a/b/c/name@1.0`, H), { projectPath: 'a/b/c', name: 'name', version: '1.0' });
    assert.deepEqual(parseComponentAddress(`${H}/a/name@x@y`, H), { projectPath: 'a', name: 'name', version: 'x@y' });
    assert.equal(parseComponentAddress(`other.example/a/name@1`, H), null);
    assert.equal(parseComponentAddress(`${H}/a/name`, H), null);
    assert.equal(parseComponentAddress(`${H}x/a/name@1`, H), null);
  });

  it('chooses released semantic versions: the highest, of a major, of a major and minor, no pre-releases', () => {
    const tags = ['1.2.0', '2.0.0-rc1', '1.0.0', '1.10.1', 'v3.0.0', '0.9.0'];
    assert.equal(releasedVersion('~latest', tags), '1.10.1');
    assert.equal(releasedVersion('1', tags), '1.10.1');
    assert.equal(releasedVersion('1.2', tags), '1.2.0');
    assert.equal(releasedVersion('0', tags), '0.9.0');
    assert.equal(releasedVersion('3', tags), null);
    assert.equal(releasedVersion('main', tags), null);
    assert.equal(releasedVersion('~latest', []), null);
  });

  const cases: Array<[string, string, string[]]> = [
    ['templates/<name>.yml at a branch', `${H}/grp/sub/comps/build@main`, ['build-main']],
    ['at a tag', `${H}/grp/sub/comps/build@1.0.0`, ['build-1.0.0']],
    ['at a commit SHA', `${H}/grp/sub/comps/build@${SHA}`, ['build-sha']],
    ['~latest: the highest released version', `${H}/grp/sub/comps/build@~latest`, ['build-1.10.1']],
    ['a major version', `${H}/grp/sub/comps/build@0`, ['build-0.9.0']],
    ['a major and minor version', `${H}/grp/sub/comps/build@1.2`, ['build-1.2.0']],
    ['a pre-release by its tag', `${H}/grp/sub/comps/build@2.0.0-rc1`, ['build-2.0.0-rc1']],
    ['templates/<name>/template.yml, whose local includes are of the component project',
      `${H}/grp/sub/comps/deploy@main`, ['deploy-common', 'deploy-main']],
  ];
  for (const [title, address, expected] of cases) {
    it(title, async () => {
      assert.deepEqual(await jobs(`include: { component: "${address}" }\n`), expected);
    });
  }

  it('takes the address from CI_SERVER_FQDN and other variables', async () => {
    assert.deepEqual(await jobs('include:\n  - component: $CI_SERVER_FQDN/grp/sub/comps/build@main\n'), ['build-main']);
  });

  it('passes inputs to the spec of the component; the same component twice with other inputs is two includes', async () => {
    const loaded = await load([
      'include:',
      `  - component: ${H}/grp/sub/comps/lint@main`,
      '    inputs: { tool: ruff }',
      `  - component: ${H}/grp/sub/comps/lint@main`,
      '    inputs: { tool: flake8, stage: build }',
      '',
    ].join('\n'), WORLD);
    assert.deepEqual(loaded.jobs.map((j) => [j.name, j.stage, j.script]), [
      ['lint-ruff', 'test', ['ruff .']], ['lint-flake8', 'build', ['flake8 .']],
    ]);
  });

  it('an input outside the options names the component', async () => {
    await assert.rejects(
      load(`include: [{ component: "${H}/grp/sub/comps/lint@main", inputs: { tool: pylint } }]\n`, WORLD),
      { message: `\`${H}/grp/sub/comps/lint@main\`: \`tool\` input: \`pylint\` cannot be used because it is not in the list of allowed options` },
    );
  });

  it('obeys include:rules', async () => {
    const yaml = `include: [{ component: "${H}/grp/sub/comps/build@main", rules: [{ exists: [Dockerfile] }] }]\nown: { script: x }\n`;
    assert.deepEqual(await jobs(yaml), ['own']);
    assert.deepEqual(await jobs(yaml, { ...WORLD, files: { Dockerfile: 'FROM x' } }), ['build-main', 'own']);
  });

  it('trigger:include takes a component with inputs: the child pipeline is that component', async () => {
    const parent = await load([
      'child:',
      '  trigger:',
      `    include: [{ component: "${H}/grp/sub/comps/lint@main", inputs: { tool: ruff, stage: build } }]`,
      '    strategy: depend', '',
    ].join('\n'), WORLD);
    const includes = parent.jobs[0].trigger?.includes;
    // Hashes of the loader have no prototype: compared as JSON.
    const expected = [{ component: `${H}/grp/sub/comps/lint@main`, inputs: { tool: 'ruff', stage: 'build' } }];
    assert.deepEqual(JSON.parse(JSON.stringify(includes)), expected);
    // The child's configuration is these include entries (bridges.ts), read as any include: is.
    const child = await load(`include: ${JSON.stringify(includes)}\n`, WORLD);
    assert.deepEqual(child.jobs.map((j) => [j.name, j.stage, j.script]), [['lint-ruff', 'build', ['ruff .']]]);
  });

  it('counts toward the include limit', async () => {
    const refs = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`v${i}`, { 'templates/build.yml': J(`b${i}`) }]));
    const world: World = { projects: { 'g/c': { refs } } };
    const list = Array.from({ length: 101 }, (_, i) => `  - component: ${H}/g/c/build@v${i}`).join('\n');
    await assert.rejects(load(`include:\n${list}\n`, world), { message: 'Maximum of 100 nested includes are allowed!' });
    assert.equal((await load(`include:\n${list.split('\n').slice(0, 100).join('\n')}\n`, world)).jobs.length, 100);
  });
});
