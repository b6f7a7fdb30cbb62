/**
 * CI lint in the Service's words at the HTTP boundary (issue 35 item 9). Who may ask: POST takes the
 * right to create pipelines, GET the right to read the code, and a GET dry run without the right to
 * create pipelines answers the pipeline service's refusal with 200. `merged_yaml`: the expanded
 * configuration as the Service's Ruby `to_yaml` writes it — `---` header, lists under a key not
 * indented, strings that would read back as numbers or booleans quoted, multi-line scripts as
 * literal blocks, lines folded at 80 columns, and `.pre`/`.post` added to the stages. The expected
 * text is what Psych printed for the hash the Service builds from this configuration (includes,
 * extends and !reference applied).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, pushFiles, type CiProject } from '../helpers/ci.ts';

const CONFIG = `stages: [build, test]
variables:
  VERSION: "1.0"
  DEBUG: "true"
.base:
  image: node:20
  tags: [docker]
build:
  extends: .base
  stage: build
  script:
    - echo "building the project with a rather long command line" && make -j4 all test install DESTDIR=/tmp/out
    - |
      for f in *; do
        echo "$f"
      done
  rules:
    - if: $CI_COMMIT_TAG
      when: never
    - when: on_success
test:
  stage: test
  script: !reference [build, script]
  needs: []
  artifacts:
    reports:
      junit: report.xml
`;

/** What Ruby's to_yaml printed for the hash the Service's Gitlab::Ci::Config builds from CONFIG. */
const PSYCH = `---
stages:
- ".pre"
- build
- test
- ".post"
variables:
  VERSION: '1.0'
  DEBUG: 'true'
".base":
  image: node:20
  tags:
  - docker
build:
  image: node:20
  tags:
  - docker
  extends: ".base"
  stage: build
  script:
  - echo "building the project with a rather long command line" && make -j4 all test
    install DESTDIR=/tmp/out
  - |
    for f in *; do
      echo "$f"
    done
  rules:
  - if: "$CI_COMMIT_TAG"
    when: never
  - when: on_success
test:
  stage: test
  script:
  - echo "building the project with a rather long command line" && make -j4 all test
    install DESTDIR=/tmp/out
  - |
    for f in *; do
      echo "$f"
    done
  needs: []
  artifacts:
    reports:
      junit: report.xml
`;

describe('CI lint', () => {
  let t: TestApp;
  let p: CiProject;
  before(async () => {
    t = await startTestApp();
    p = await createCiProject(t);
  });
  after(() => t.close());

  const lint = (content: string) =>
    t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/ci/lint`, token: p.ownerToken, payload: { content } });

  it('is the expanded configuration written as Psych writes it', async () => {
    const res = await lint(CONFIG);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as { valid: boolean; merged_yaml: string };
    assert.equal(body.valid, true, res.body);
    assert.equal(body.merged_yaml, PSYCH);
  });

  it('is null for an invalid configuration, and adds no stages where the configuration names none', async () => {
    assert.equal(((await lint('job:\n  scriptt: x\n')).json() as { merged_yaml: unknown }).merged_yaml, null);
    const plain = (await lint('job:\n  script: "true"\n  stage: test\n')).json() as { merged_yaml: string };
    assert.equal(plain.merged_yaml, "---\njob:\n  script: 'true'\n  stage: test\n");
  });

  it('refuses as lib/api/lint.rb: 403 on POST below Developer, a dry run\'s refusal inside a 200 on GET', async () => {
    await pushFiles(t, p, { '.gitlab-ci.yml': 'job:\n  script: x\n' });
    const tokenFor = async (level: number) => {
      const user = await createUser(t.db);
      const payload = { user_id: user.id, access_level: level };
      const added = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/members`, token: p.ownerToken, payload });
      assert.equal(added.statusCode, 201, added.body);
      return createToken(t.db, user);
    };
    const reporter = await tokenFor(20);
    const developer = await tokenFor(30);
    const post = (token: string, payload: object) =>
      t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/ci/lint`, token, payload });
    for (const payload of [{ content: 'job:\n  script: x\n' }, { content: 'job:\n  script: x\n', dry_run: true }]) {
      const refused = await post(reporter, payload);
      assert.deepEqual([refused.statusCode, refused.json()], [403, { message: '403 Forbidden' }]);
      assert.equal((await post(developer, payload)).statusCode, 200);
    }
    const get = (token: string, query: string) => t.request({ url: `/api/v4/projects/${p.project.id}/ci/lint?${query}`, token });
    assert.equal(((await get(reporter, '')).json() as { valid: boolean }).valid, true);
    const dry = await get(reporter, 'dry_run=true&include_jobs=true');
    assert.deepEqual([dry.statusCode, dry.json()], [200, {
      valid: false, errors: ['Insufficient permissions to create a new pipeline'], warnings: [], merged_yaml: null, jobs: [],
    }]);
    assert.equal(((await get(developer, 'dry_run=true')).json() as { valid: boolean }).valid, true);
    // A guest of a private project may not read its code.
    const guest = await tokenFor(10);
    assert.equal((await get(guest, '')).statusCode, 403);
  });
});

describe('CI lint without a project (POST /ci/lint)', () => {
  let t: TestApp;
  let token: string;

  before(async () => {
    t = await startTestApp();
    token = await createToken(t.db, await createUser(t.db));
  });
  after(async () => { await t.close(); });

  const lint = (payload: Record<string, unknown>, auth: string | null = token) =>
    t.request({ method: 'POST', url: '/api/v4/ci/lint', token: auth ?? undefined, payload });

  it('answers status, errors and warnings, the merged YAML and jobs only when asked', async () => {
    const valid = await lint({ content: 'build:\n  script: make\n' });
    assert.equal(valid.statusCode, 200, valid.body);
    assert.deepEqual(valid.json(), { status: 'valid', errors: [], warnings: [] });
    const full = await lint({ content: 'build:\n  script: make\n', include_merged_yaml: true, include_jobs: true });
    assert.deepEqual(Object.keys(full.json()), ['status', 'errors', 'warnings', 'merged_yaml', 'jobs']);
    assert.match(full.json().merged_yaml, /^---\nbuild:\n {2}script: make\n/);
    assert.deepEqual(full.json().jobs.map((j: { name: string; stage: string }) => [j.name, j.stage]), [['build', 'test']]);

    const invalid = await lint({ content: 'build: 1' });
    assert.equal(invalid.json().status, 'invalid');
    assert.deepEqual(invalid.json().errors, ['jobs:build config should be a hash']);
    // Gitlab::Ci::Lint without a project: a local include has nothing to read.
    const local = await lint({ content: 'include: local/ci.yml\nbuild:\n  script: make\n' });
    assert.deepEqual(local.json().errors, ['Local file `local/ci.yml` does not have project!']);
    assert.deepEqual((await lint({ content: '  ' })).json().errors, ['Please provide content of .gitlab-ci.yml']);
  });

  it('takes anonymous callers only while sign-up is open and unrestricted', async () => {
    assert.equal((await lint({ content: 'build:\n  script: make\n' }, null)).statusCode, 200);
    const admin = await createToken(t.db, await createUser(t.db, { admin: 1 }));
    const closed = await t.request({ method: 'PUT', url: '/api/v4/application/settings', token: admin, payload: { signup_enabled: false } });
    assert.equal(closed.statusCode, 200, closed.body);
    assert.equal((await lint({ content: 'build:\n  script: make\n' }, null)).statusCode, 401);
    assert.equal((await lint({ content: 'build:\n  script: make\n' })).statusCode, 200);
  });
});
