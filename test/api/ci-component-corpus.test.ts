/**
 * Real projects that use CI/CD components and `spec: inputs` (issue 28, item 5), the same shape
 * as ci-corpus.test.ts: each directory of test/fixtures/ci-component-corpus holds one upstream
 * repository at one commit (`source.json`: repository, commit, the CI file's path, and the
 * project path it gets on kiln), its YAML files as they are upstream under `files/`, the paths
 * of its other files in `other-paths.txt` (pushed empty, so `rules:exists` and wildcards see the
 * upstream tree), and `expected.json`.
 *
 * The component projects a case names (`components`) are pushed first, at the project path the
 * upstream addresses give; then the case's files go to the default branch of a project at its
 * own path with one push over HTTP, which creates the push pipeline, and a pipeline is created
 * through the API. Both must have exactly the jobs written in `expected.json` (stage, name, when,
 * allow_failure, image, needs, tags), or its error.
 *
 * The only changes to upstream text are the `replace` pairs of `source.json`: a component host
 * other than kiln's (gitlab.gnome.org) becomes the test kiln's CI_SERVER_FQDN (`{fqdn}`), and
 * an address built from `${CI_SERVER_HOST}` (which the Service matches only while the instance
 * runs on the protocol's default port) from `${CI_SERVER_FQDN}`, since the test kiln has a port.
 *
 * KILN_CORPUS_RECORD=1 writes the expected files from what kiln does, for review by hand against
 * the Service's behaviour before they are committed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT_TOKEN } from '../helpers/app.ts';
import { startListeningApp, type ListeningTestApp } from '../helpers/listen.ts';
import { waitForPipelines } from '../helpers/ci-push.ts';
import type { CiProject } from '../helpers/ci.ts';
import { cloneUrl, git, tempDir } from '../helpers/git.ts';
import { repositoryPath } from '../../src/domain/repositories/storage.ts';

const DIR = path.join(import.meta.dirname, '..', 'fixtures', 'ci-component-corpus');
const RECORD = process.env.KILN_CORPUS_RECORD === '1';

interface Source {
  repo: string;
  commit: string;
  /** The CI file of the case, a path of the upstream tree; it is pushed as `.gitlab-ci.yml`. */
  path: string;
  /** Full path of the project on kiln. */
  project: string;
  branch: string;
  /** Another case whose upstream tree this one pushes (the same commit, another CI file). */
  snapshot?: string;
  /** Cases whose projects this one's components and project includes read. */
  components?: string[];
  replace?: Array<[string, string]>;
}

type Outcome = { jobs: string[] } | { error: string } | { none: true };
interface Expected { api: Outcome; push: Outcome }

const cases = fs.readdirSync(DIR).filter((f) => fs.existsSync(path.join(DIR, f, 'source.json'))).sort();
const sourceOf = (name: string) => JSON.parse(fs.readFileSync(path.join(DIR, name, 'source.json'), 'utf8')) as Source;

/** The upstream tree of a case: its YAML files with their text, every other path empty. */
function treeOf(name: string): Record<string, string> {
  const dir = path.join(DIR, name);
  const files: Record<string, string> = {};
  for (const p of fs.readFileSync(path.join(dir, 'other-paths.txt'), 'utf8').split('\n').filter(Boolean)) files[p] = '';
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(dir, 'files', rel), { withFileTypes: true })) {
      const p = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(p);
      else files[p] = fs.readFileSync(path.join(dir, 'files', p), 'utf8');
    }
  };
  walk('');
  return files;
}

describe('CI corpus of real projects using components and inputs', () => {
  let t: ListeningTestApp;
  let root: CiProject['owner'];
  const groups = new Map<string, number>();
  const pushed = new Map<string, Promise<{ p: CiProject; push: Outcome }>>();

  before(async () => {
    t = await startListeningApp();
    root = await t.db.selectFrom('users').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  });
  after(async () => { await t.close(); });

  /** A message naming the test kiln's host and port (a component address) as `{fqdn}`: the port changes each run. */
  const portless = (message: string) => message.split(new URL(t.url).host).join('{fqdn}');

  /** The group of that full path, made with its parents as needed. */
  async function groupId(fullPath: string): Promise<number> {
    const known = groups.get(fullPath);
    if (known !== undefined) return known;
    const slash = fullPath.lastIndexOf('/');
    const parent = slash < 0 ? undefined : await groupId(fullPath.slice(0, slash));
    const name = fullPath.slice(slash + 1);
    const res = await t.request({
      method: 'POST', url: '/api/v4/groups', token: ROOT_TOKEN,
      payload: { name, path: name, visibility: 'public', ...(parent === undefined ? {} : { parent_id: parent }) },
    });
    assert.equal(res.statusCode, 201, res.body);
    const id = (res.json() as { id: number }).id;
    groups.set(fullPath, id);
    return id;
  }

  function describeJobs(p: CiProject, pipelineId: number) {
    return async () => {
      const rows = await t.db.selectFrom('ci_builds')
        .select(['name', 'stage', 'run_when', 'allow_failure', 'options', 'needs', 'tag_list', 'type'])
        .where('pipeline_id', '=', pipelineId).orderBy('id').execute();
      assert.ok(rows.every((r) => r.name !== ''), `pipeline ${pipelineId} of ${p.fullPath}`);
      return rows.map((r) => {
        const image = (JSON.parse(r.options) as { image?: { name: string } | null }).image?.name;
        const needs = r.needs === null ? null : JSON.parse(r.needs) as string[];
        return [
          `${r.stage}/${r.name}:${r.run_when}${r.allow_failure ? ':allow_failure' : ''}`,
          ...(r.type === 'bridge' ? ['bridge'] : []),
          ...(image ? [`image=${image}`] : []),
          ...(needs ? [`needs=[${needs.join(', ')}]`] : []),
          ...(r.tag_list ? [`tags=[${r.tag_list.split(' ').join(', ')}]`] : []),
        ].join(' ');
      });
    };
  }

  /** The case's project, made and pushed once (a component project serves every case that reads it). */
  function projectOf(name: string): Promise<{ p: CiProject; push: Outcome }> {
    let done = pushed.get(name);
    if (!done) pushed.set(name, done = pushCase(name));
    return done;
  }

  async function pushCase(name: string): Promise<{ p: CiProject; push: Outcome }> {
    const source = sourceOf(name);
    for (const dependency of source.components ?? []) await projectOf(dependency);
    const slash = source.project.lastIndexOf('/');
    const res = await t.request({
      method: 'POST', url: '/api/v4/projects', token: ROOT_TOKEN,
      payload: {
        name: source.project.slice(slash + 1), path: source.project.slice(slash + 1),
        namespace_id: await groupId(source.project.slice(0, slash)), visibility: 'public',
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const projectId = (res.json() as { id: number }).id;
    const project = await t.db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirstOrThrow();
    const p: CiProject = {
      project, owner: root, ownerToken: ROOT_TOKEN, fullPath: source.project,
      gitDir: repositoryPath(t.config.storages, project.repository_storage, project.disk_path),
    };
    const files = treeOf(source.snapshot ?? name);
    let ci = files[source.path];
    assert.ok(ci !== undefined, `${name}: ${source.path} is not in the tree`);
    const fqdn = new URL(t.url).host;
    for (const [from, to] of source.replace ?? []) ci = ci.split(from).join(to.replace('{fqdn}', fqdn));
    files['.gitlab-ci.yml'] = ci;
    const work = await tempDir('kiln-ci-component-corpus-');
    try {
      const run = async (args: string[]) => {
        const r = await git(args, work);
        assert.equal(r.code, 0, `git ${args.join(' ')}: ${r.stderr}`);
      };
      await run(['init', '--quiet', `--initial-branch=${source.branch}`]);
      for (const [file, content] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
        fs.writeFileSync(path.join(work, file), content);
      }
      await run(['add', '--all']);
      await run(['commit', '--quiet', '-m', `${source.repo} at ${source.commit}`]);
      const url = cloneUrl(t.url, source.project, { username: root.username, password: ROOT_TOKEN });
      await run(['push', '--quiet', url, `HEAD:refs/heads/${source.branch}`]);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
    // The push pipeline starts after the push answers, and a tree of many includes takes a while
    // on a busy machine: wait long where one is expected, briefly where none is (or when recording).
    const expectedPath = path.join(DIR, name, 'expected.json');
    const expectsNone = RECORD || !fs.existsSync(expectedPath) || 'none' in (JSON.parse(fs.readFileSync(expectedPath, 'utf8')) as Expected).push;
    const list = await waitForPipelines(t, p, 1, expectsNone ? 5000 : 30_000).catch(() => []);
    if (list.length === 0) return { p, push: { none: true } };
    const url = `/api/v4/projects/${project.id}/pipelines/${list[0].id}`;
    const detail = (await t.request({ method: 'GET', url, token: ROOT_TOKEN })).json() as {
      yaml_errors: string | null; source: string;
    };
    assert.equal(detail.source, 'push');
    return { p, push: detail.yaml_errors ? { error: portless(detail.yaml_errors) } : { jobs: await describeJobs(p, list[0].id)() } };
  }

  it('holds at least 10 upstream projects, each case with its expected pipeline', () => {
    assert.ok(new Set(cases.map((c) => sourceOf(c).repo)).size >= 10, cases.join(', '));
    if (!RECORD) for (const c of cases) assert.ok(fs.existsSync(path.join(DIR, c, 'expected.json')), c);
  });

  for (const name of cases) {
    it(`${name}: the push and the API create the expected pipeline`, async () => {
      const source = sourceOf(name);
      const { p, push } = await projectOf(name);
      const url = `/api/v4/projects/${p.project.id}/pipeline?ref=${source.branch}`;
      const res = await t.request({ method: 'POST', url, token: ROOT_TOKEN });
      assert.ok(res.statusCode === 201 || res.statusCode === 400, res.body);
      const api: Outcome = res.statusCode === 201
        ? { jobs: await describeJobs(p, (res.json() as { id: number }).id)() }
        : { error: portless((res.json() as { message: { base: string[] } }).message.base[0]) };
      const expectedPath = path.join(DIR, name, 'expected.json');
      if (RECORD) {
        fs.writeFileSync(expectedPath, `${JSON.stringify({ api, push }, null, 2)}\n`);
        return;
      }
      const expected = JSON.parse(fs.readFileSync(expectedPath, 'utf8')) as Expected;
      assert.deepEqual(api, expected.api);
      assert.deepEqual(push, expected.push);
    });
  }
});
