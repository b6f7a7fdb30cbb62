/**
 * Templates (issue 32, item 5): the instance routes (`/templates/gitignores`, `/dockerfiles`,
 * `/gitlab_ci_ymls`, `/licenses`), a project's (`/projects/:id/templates/:type[/:name]`, with the
 * issue and merge request templates of its repository), and the built-in CI templates as
 * `include:template` reads them: every one creates a pipeline with jobs, and a file of the same
 * name in KILN_CI_TEMPLATES_DIR wins.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { ROOT_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { createToken, createUser } from '../helpers/factories.ts';
import { createCiProject, pipelineJobs, pushFiles, type CiProject } from '../helpers/ci.ts';
import { listFileTemplates } from '../../src/domain/templates/templates.ts';

const YEAR = String(new Date().getUTCFullYear());

describe('instance templates', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  const get = (url: string, token?: string) => t.request({ url: `/api/v4${url}`, ...(token ? { token } : {}) });

  it('lists gitignore, Dockerfile and CI templates as key and name, paginated, without authentication', async () => {
    for (const [type, known] of [['gitignores', 'Node'], ['dockerfiles', 'Node'], ['gitlab_ci_ymls', 'Nodejs']] as const) {
      const res = await get(`/templates/${type}?per_page=100`);
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(res.headers['x-total'], 'pagination headers');
      const list = res.json() as { key: string; name: string }[];
      assert.ok(list.length >= 13, `${type}: ${list.length}`);
      for (const entry of list) assert.deepEqual(Object.keys(entry).sort(), ['key', 'name']);
      assert.ok(list.some((e) => e.key === known && e.name === known), `${type} has ${known}`);
    }
    const ci = (await get('/templates/gitlab_ci_ymls?per_page=100')).json() as { name: string }[];
    assert.ok(ci.length >= 25, `${ci.length} CI templates`);
    // General first, each category sorted by name; Pages after it.
    const hugo = ci.findIndex((e) => e.name === 'Hugo');
    assert.ok(hugo > ci.findIndex((e) => e.name === 'dotNET-Core'), 'Pages after General');
    const page = await get('/templates/gitignores?per_page=2&page=2');
    assert.equal((page.json() as unknown[]).length, 2);
    assert.equal(page.headers['x-page'], '2');
  });

  it('answers one template as name and content, and 404 in the type\'s word', async () => {
    const gi = await get('/templates/gitignores/Node');
    assert.equal(gi.statusCode, 200, gi.body);
    assert.deepEqual(Object.keys(gi.json()).sort(), ['content', 'name']);
    assert.equal(gi.json().name, 'Node');
    assert.match(gi.json().content, /node_modules\//);
    const df = await get('/templates/dockerfiles/Node');
    assert.match(df.json().content, /^FROM node:/m);
    const ci = await get('/templates/gitlab_ci_ymls/Nodejs');
    assert.match(ci.json().content, /^# kiln CI template/);
    // A Pages template by its key alone, as GlobalTemplateFinder looks in each category.
    const hugo = await get('/templates/gitlab_ci_ymls/Hugo');
    assert.equal(hugo.statusCode, 200);
    assert.equal(hugo.json().name, 'Hugo');
    for (const [type, word] of [['gitignores', 'gitignore'], ['dockerfiles', 'dockerfile'], ['gitlab_ci_ymls', 'gitlab_ci_yml']]) {
      const res = await get(`/templates/${type}/Nope`);
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { message: `404 ${word} Not Found` });
    }
    // Names are keys, never paths.
    assert.equal((await get('/templates/gitignores/..%2F..%2Fetc%2Fpasswd')).statusCode, 404);
  });

  it('lists the thirteen licences with their metadata, and the three popular ones', async () => {
    const res = await get('/templates/licenses?per_page=100');
    assert.equal(res.statusCode, 200);
    const list = res.json() as Record<string, unknown>[];
    assert.deepEqual(list.map((l) => l.key), [
      'agpl-3.0', 'apache-2.0', 'bsd-2-clause', 'bsd-3-clause', 'bsl-1.0', 'cc0-1.0', 'epl-2.0',
      'gpl-2.0', 'gpl-3.0', 'lgpl-2.1', 'mit', 'mpl-2.0', 'unlicense',
    ]);
    const mit = list.find((l) => l.key === 'mit')!;
    assert.deepEqual(Object.keys(mit).sort(), [
      'conditions', 'content', 'description', 'html_url', 'key', 'limitations', 'name', 'nickname', 'permissions', 'popular', 'source_url',
    ]);
    assert.equal(mit.name, 'MIT License');
    assert.equal(mit.nickname, null);
    assert.equal(mit.popular, true);
    assert.equal(mit.html_url, 'http://choosealicense.com/licenses/mit/');
    assert.equal(mit.source_url, null);
    assert.match(String(mit.description), /A short and simple permissive license with conditions/);
    assert.deepEqual(mit.conditions, ['include-copyright']);
    assert.deepEqual(mit.permissions, ['commercial-use', 'modifications', 'distribution', 'private-use']);
    assert.deepEqual(mit.limitations, ['liability', 'warranty']);
    assert.match(String(mit.content), /MIT License/);
    const gpl = list.find((l) => l.key === 'gpl-3.0')!;
    assert.equal(gpl.nickname, 'GNU GPLv3');
    for (const l of list) {
      assert.ok((l.permissions as string[]).length > 0, `${String(l.key)} has permissions`);
      assert.ok((l.limitations as string[]).length > 0, `${String(l.key)} has limitations`);
    }
    const popular = (await get('/templates/licenses?popular=1')).json() as { key: string }[];
    assert.deepEqual(popular.map((l) => l.key), ['apache-2.0', 'gpl-3.0', 'mit']);
    // false is not `present?`: every licence.
    assert.equal(((await get('/templates/licenses?popular=false&per_page=100')).json() as unknown[]).length, 13);
    assert.equal((await get('/templates/licenses?popular=maybe')).statusCode, 400);
  });

  it('fills the year, the project and the copyright holder into a licence', async () => {
    const cases: [string, RegExp, boolean][] = [
      ['mit', new RegExp(`Copyright \\(c\\) ${YEAR} Anton MIT`), false],
      ['bsd-2-clause', new RegExp(`Copyright \\(c\\) ${YEAR} Anton BSD-2-CLAUSE`), false],
      ['apache-2.0', new RegExp(`Copyright ${YEAR} Anton APACHE-2.0`), false],
      ['gpl-3.0', new RegExp(`Copyright \\(C\\) ${YEAR}  Anton GPL-3.0`), true],
      ['agpl-3.0', new RegExp(`Copyright \\(C\\) ${YEAR}  Anton AGPL-3.0`), true],
      ['gpl-2.0', new RegExp(`Copyright \\(C\\) ${YEAR}  Anton GPL-2.0`), true],
      ['lgpl-2.1', new RegExp(`Copyright \\(C\\) ${YEAR}  Anton LGPL-2.1`), true],
    ];
    for (const [key, copyright, namesProject] of cases) {
      const res = await get(`/templates/licenses/${key}?project=My+Awesome+Project&fullname=Anton+${key.toUpperCase()}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.match(res.json().content, copyright, key);
      assert.equal(res.json().content.includes('My Awesome Project'), namesProject, key);
    }
    // `$1` in a name is text.
    const dollar = await get(`/templates/licenses/mit?fullname=${encodeURIComponent('A $1 B')}`);
    assert.match(dollar.json().content, /Copyright \(c\) \d{4} A \$1 B/);
  });

  it("uses the caller's name when no fullname is given, and 404s licences it does not offer", async () => {
    const user = await createUser(t.db, { name: 'Grace Hopper' });
    const token = await createToken(t.db, user);
    const mine = await get('/templates/licenses/mit', token);
    assert.match(mine.json().content, new RegExp(`Copyright \\(c\\) ${YEAR} Grace Hopper`));
    const anonymous = await get('/templates/licenses/mit');
    assert.match(anonymous.json().content, new RegExp(`Copyright \\(c\\) ${YEAR} <copyright holders>`));
    for (const name of ['muth-over9000', 'MIT', 'isc']) {
      const res = await get(`/templates/licenses/${name}`);
      assert.equal(res.statusCode, 404, name);
      assert.deepEqual(res.json(), { message: '404 License Not Found' });
    }
  });
});

describe('project templates', () => {
  let t: TestApp;
  let p: CiProject;
  let other: string;
  before(async () => {
    t = await startTestApp();
    p = await createCiProject(t);
    await pushFiles(t, p, {
      'README.md': 'hello\n',
      '.gitlab/issue_templates/Bug.md': '## Steps to reproduce\n',
      '.gitlab/issue_templates/Feature.md': '## Proposal\n',
      '.gitlab/issue_templates/notes.txt': 'not a template\n',
      '.gitlab/merge_request_templates/Default.md': '## What does this change?\n',
    });
    other = await createToken(t.db, await createUser(t.db));
  });
  after(async () => { await t.close(); });

  const get = (url: string, token: string | null = p.ownerToken) => t.request({ url: `/api/v4/projects/${p.project.id}${url}`, ...(token ? { token } : {}) });

  it('lists each type as key and name', async () => {
    const ci = await get('/templates/gitlab_ci_ymls?per_page=100');
    assert.equal(ci.statusCode, 200, ci.body);
    assert.deepEqual((ci.json() as { name: string }[]).map((e) => e.name), listFileTemplates('gitlab_ci_ymls').map((e) => e.name));
    const licences = (await get('/templates/licenses?per_page=100')).json() as { key: string; name: string }[];
    assert.equal(licences.length, 13);
    // Grouped by category as the sorted list first meets them: Other, then Popular.
    assert.deepEqual(licences.slice(-3).map((l) => l.key), ['apache-2.0', 'gpl-3.0', 'mit']);
    assert.deepEqual(Object.keys(licences[0]).sort(), ['key', 'name']);
    const issues = (await get('/templates/issues')).json();
    assert.deepEqual(issues, [{ key: 'Bug', name: 'Bug' }, { key: 'Feature', name: 'Feature' }]);
    assert.deepEqual((await get('/templates/merge_requests')).json(), [{ key: 'Default', name: 'Default' }]);
    assert.equal(((await get('/templates/gitignores?per_page=100')).json() as unknown[]).length, listFileTemplates('gitignores').length);
  });

  it('answers one template; a licence whole, with its placeholders filled', async () => {
    const bug = await get('/templates/issues/Bug');
    assert.equal(bug.statusCode, 200, bug.body);
    assert.deepEqual(bug.json(), { name: 'Bug', content: '## Steps to reproduce\n' });
    assert.deepEqual((await get('/templates/merge_requests/Default')).json(), { name: 'Default', content: '## What does this change?\n' });
    const df = await get('/templates/dockerfiles/Golang');
    assert.equal(df.json().name, 'Golang');
    assert.match(df.json().content, /^FROM golang/m);
    // C++ arrives encoded (C%2B%2B), as the Service's route allows.
    assert.equal((await get('/templates/gitlab_ci_ymls/C%2B%2B')).json().name, 'C++');
    const licence = await get('/templates/licenses/gpl-3.0?project=Widget&fullname=Ada+Lovelace');
    assert.equal(licence.json().key, 'gpl-3.0');
    assert.equal(licence.json().popular, true);
    assert.match(licence.json().content, new RegExp(`Copyright \\(C\\) ${YEAR}  Ada Lovelace`));
    assert.match(licence.json().content, /Widget/);
    const mine = await get('/templates/licenses/mit');
    assert.match(mine.json().content, new RegExp(`${YEAR} ${p.owner.name}`));
    for (const url of ['/templates/issues/Nope', '/templates/issues/notes', '/templates/licenses/isc', '/templates/gitignores/Nope']) {
      const res = await get(url);
      assert.equal(res.statusCode, 404, url);
      assert.deepEqual(res.json(), { message: '404 Template Not Found' });
    }
  });

  it('refuses other types, and hides a private project from those who may not read it', async () => {
    for (const type of ['metrics_dashboard_ymls', 'nope']) {
      const res = await get(`/templates/${type}`);
      assert.equal(res.statusCode, 400, type);
      assert.deepEqual(res.json(), { error: 'type does not have a valid value' });
    }
    for (const token of [null, other]) {
      const res = await get('/templates/gitignores', token);
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { message: '404 Project Not Found' });
    }
  });

  it('has no repository templates in an empty repository', async () => {
    const empty = await createCiProject(t);
    const res = await t.request({ url: `/api/v4/projects/${empty.project.id}/templates/issues`, token: empty.ownerToken });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), []);
    const one = await t.request({ url: `/api/v4/projects/${empty.project.id}/templates/issues/Bug`, token: empty.ownerToken });
    assert.equal(one.statusCode, 404);
  });
});

describe('built-in CI templates through include:template', () => {
  let t: TestApp;
  let p: CiProject;
  let overrides: string;
  before(async () => {
    overrides = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-ci-templates-'));
    fs.writeFileSync(path.join(overrides, 'Bash.gitlab-ci.yml'), 'overridden:\n  script: echo the administrator\'s own\n');
    fs.mkdirSync(path.join(overrides, 'Jobs'));
    fs.writeFileSync(path.join(overrides, 'Jobs', 'Extra.gitlab-ci.yml'), 'extra:\n  script: echo extra\n');
    t = await startTestApp({ KILN_CI_TEMPLATES_DIR: overrides });
    p = await createCiProject(t);
    // What the templates' `rules: exists` look for, so that each has jobs to create.
    await pushFiles(t, p, { 'Dockerfile': 'FROM scratch\n', 'pyproject.toml': '[project]\nname = "x"\n', 'docs/make.jl': '\n' });
  });
  after(async () => {
    await t.close();
    fs.rmSync(overrides, { recursive: true, force: true });
  });

  async function jobsFor(config: string): Promise<{ status: number; body: string; names: string[] }> {
    await pushFiles(t, p, { '.gitlab-ci.yml': config });
    const res = await t.request({ method: 'POST', url: `/api/v4/projects/${p.project.id}/pipeline?ref=main`, token: p.ownerToken });
    if (res.statusCode !== 201) return { status: res.statusCode, body: res.body, names: [] };
    const jobs = await pipelineJobs(t, p, (res.json() as { id: number }).id);
    return { status: 201, body: res.body, names: jobs.map((j) => j.name).sort() };
  }

  it('creates a pipeline with jobs from every built-in template', async () => {
    const templates = listFileTemplates('gitlab_ci_ymls').filter((tpl) => tpl.file !== 'Bash.gitlab-ci.yml');
    assert.ok(templates.length >= 25);
    for (const tpl of templates) {
      const { status, body, names } = await jobsFor(`include:\n  - template: ${tpl.file}\n`);
      assert.equal(status, 201, `${tpl.file}: ${body}`);
      assert.ok(names.length > 0, `${tpl.file} has jobs`);
      const declared = Object.keys(YAML.parse(tpl.content) as Record<string, unknown>);
      for (const name of names) assert.ok(declared.includes(name), `${tpl.file}: job ${name} is the template's`);
    }
  });

  it('finds a Pages template by its key alone, and reads the built-in Bash one beside an override of it', async () => {
    const hugo = await jobsFor('include:\n  - template: Hugo.gitlab-ci.yml\n');
    assert.deepEqual(hugo.names, ['pages']);
    // The administrator's file of the same name wins over the built-in one …
    const bash = await jobsFor('include:\n  - template: Bash.gitlab-ci.yml\n');
    assert.deepEqual(bash.names, ['overridden']);
    // … and their other files are templates too.
    const extra = await jobsFor('include:\n  - template: Jobs/Extra.gitlab-ci.yml\n');
    assert.deepEqual(extra.names, ['extra']);
  });

  it('lints a configuration including a built-in template without a project (POST /ci/lint)', async () => {
    const res = await t.request({
      method: 'POST', url: '/api/v4/ci/lint', token: p.ownerToken,
      payload: { content: 'include:\n  - template: Go.gitlab-ci.yml\n' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json() as { status: string; errors: string[]; merged_yaml?: string };
    assert.equal(body.status, 'valid', res.body);
    assert.deepEqual(body.errors, []);
  });

  it('names a template that exists nowhere', async () => {
    const res = await jobsFor('include:\n  - template: Nope.gitlab-ci.yml\nx:\n  script: echo\n');
    assert.equal(res.status, 400);
    assert.match(res.body, /Included file `Nope\.gitlab-ci\.yml` is empty or does not exist!/);
  });

  it('reads the built-in Bash template when no directory is configured', async () => {
    const plain = await startTestApp();
    try {
      const q = await createCiProject(plain);
      await pushFiles(plain, q, { '.gitlab-ci.yml': 'include:\n  - template: Bash.gitlab-ci.yml\n', 'run.sh': 'echo hi\n' });
      const res = await plain.request({ method: 'POST', url: `/api/v4/projects/${q.project.id}/pipeline?ref=main`, token: q.ownerToken });
      assert.equal(res.statusCode, 201, res.body);
      const names = (await pipelineJobs(plain, q, (res.json() as { id: number }).id)).map((j) => j.name).sort();
      assert.deepEqual(names, ['shellcheck', 'syntax', 'tests']);
    } finally {
      await plain.close();
    }
  });
});

// Root may read every template too (its name fills a licence).
describe('templates and root', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });
  it("fills root's name", async () => {
    const root = await t.db.selectFrom('users').select('name').where('id', '=', 1).executeTakeFirstOrThrow();
    const res = await t.request({ url: '/api/v4/templates/licenses/bsd-3-clause', token: ROOT_TOKEN });
    assert.match(res.json().content, new RegExp(`Copyright \\(c\\) ${YEAR} ${root.name}`));
  });
});
